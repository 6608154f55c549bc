import DarkroomSupport
import DarkroomTestSupport
import Foundation
import Testing

@testable import DarkroomImage

/// JPEG XL against libjxl's own `djxl`: files made by `cjxl` from the sample photos (lossy, lossless with alpha,
/// 16-bit, a recompressed JPEG, an orientation, an animation) and pillow-jxl-plugin's own test files.
@Suite("JPEG XL")
struct JXLTests {
    let decoder = ImageDecoder()

    /// `cjxl source output arguments…` in `directory`; returns the output's path.
    static func cjxl(_ source: String, _ name: String, _ arguments: [String], in directory: TemporaryDirectory)
        throws -> String
    {
        let output = directory.file(name)
        _ = try ReferenceTool.run("cjxl", [SamplePhotos.path(source), output, "--quiet"] + arguments)
        return output
    }

    /// djxl's decode of `file` as a PNG (16-bit where the file has more than 8 bits), decoded by Darkroom at
    /// `size`: the reference at the same size, through the same resampler.
    func reference(_ file: String, size: TargetSize, in directory: TemporaryDirectory) throws -> Bitmap {
        let png = directory.file((file as NSString).lastPathComponent + ".djxl.png")
        // Float files need an integer depth for PNG; 16 bits keeps what 8-bit output would lose
        let probe = try SamplePhotos.bytes(file).withUnsafeBytes { try ImageProber.probe($0) }
        let depth = probe.bitDepth > 8 ? ["--bits_per_sample=16"] : []
        _ = try ReferenceTool.run("djxl", [file, png, "--quiet"] + depth)
        return try decoder.decode(SamplePhotos.bytes(png), options: Self.options(size)).bitmap
    }

    static func options(_ size: TargetSize) -> DecodeOptions {
        var options = DecodeOptions(size: size)
        options.geometry.pixelFormat = .exactly(.bgra8Premultiplied)
        return options
    }

    @Test(
        "lossy, lossless-with-alpha and 16-bit files agree with djxl at full size and at 256 px",
        arguments: [
            ("jpeg/kite-2560x1600.jpg", ["-d", "1"]), ("png/cups-alpha-1600x1000.png", ["-d", "0"]),
            ("png/bythewater-16bit-960x600.png", ["-d", "0"]), ("png/summer-palette-1280x800.png", ["-d", "2"]),
        ])
    func agreesWithDjxl(source: String, arguments: [String]) throws {
        let directory = try TemporaryDirectory("jxl")
        defer { directory.remove() }
        // Given a JPEG XL file cjxl made from a sample (from a JPEG: its pixels, not a recompression)
        let file = try Self.cjxl(source, "image.jxl", arguments + ["--lossless_jpeg=0"], in: directory)
        let bytes = try SamplePhotos.bytes(file)
        let probe = try bytes.withUnsafeBytes { try ImageProber.probe($0) }
        #expect(probe.format == .jxl)
        #expect(probe.hasAlpha == source.contains("alpha"))
        for size in [TargetSize.original, .maxPixelSize(256)] {
            // When Darkroom decodes it, and djxl's PNG is decoded at the same size
            let ours = try decoder.decode(bytes, options: Self.options(size)).bitmap
            let theirs = try reference(file, size: size, in: directory)
            // Then the two agree
            #expect(ours.width == theirs.width && ours.height == theirs.height)
            let psnr = PixelCompare.psnr(ours, theirs)
            print("jxl \(source) \(arguments) \(size): \(String(format: "%.1f", psnr)) dB")
            #expect(psnr >= 40, "\(source) at \(size): \(psnr) dB")
        }
    }

    @Test("a JPEG recompressed losslessly into JPEG XL decodes like the JPEG; its orientation is applied")
    func recompressedJPEG() throws {
        let directory = try TemporaryDirectory("jxl")
        defer { directory.remove() }
        // Given the orientation-6 sample recompressed by cjxl (lossless JPEG transcoding keeps the orientation)
        let file = try Self.cjxl(
            "orientation/fallenleaf-600x400-orientation-6.jpg", "o6.jxl", [], in: directory)
        // And djxl reconstructs the very JPEG bytes from it (it is a recompression, not a re-encode)
        let rebuilt = directory.file("o6.jpg")
        _ = try ReferenceTool.run("djxl", [file, rebuilt, "--quiet"])
        #expect(
            try SamplePhotos.bytes(rebuilt)
                == SamplePhotos.bytes("orientation/fallenleaf-600x400-orientation-6.jpg"))
        // When Darkroom decodes the JPEG XL
        let jxl = try decoder.decode(SamplePhotos.bytes(file), options: Self.options(.original))
        let upright = try decoder.decode(
            SamplePhotos.bytes("orientation/fallenleaf-600x400-orientation-1.jpg"), options: Self.options(.original))
        // Then it is upright and agrees with the upright JPEG (two IDCTs of the same coefficients)
        #expect(jxl.probe.orientation == .right)
        #expect(jxl.bitmap.width == upright.bitmap.width && jxl.bitmap.height == upright.bitmap.height)
        let psnr = PixelCompare.psnr(jxl.bitmap, upright.bitmap)
        #expect(psnr >= 35, "\(psnr) dB")
    }

    @Test("an animated JPEG XL: its frames and timing, played through the animation path like its GIF source")
    func animated() throws {
        let directory = try TemporaryDirectory("jxl")
        defer { directory.remove() }
        // Given a 48-frame GIF turned into a lossless animated JPEG XL
        let gif = "animated/pan-kite-640x400-48f.gif"
        let file = try Self.cjxl(gif, "anim.jxl", ["-d", "0"], in: directory)
        // When it is probed and decoded as a still
        let decoded = try decoder.decode(SamplePhotos.bytes(file), options: Self.options(.original))
        let first = try decoder.decode(SamplePhotos.bytes(gif), options: Self.options(.original))
        // Then the probe counts the frames and the still is frame 0, exactly
        #expect(decoded.probe.frameCount == 48)
        #expect(PixelCompare.psnr(decoded.bitmap, first.bitmap) >= 50)
        // And played through the animation path, its timing is the GIF's and every frame is the GIF's frame
        let options = DecodeOptions(size: .maxPixelSize(160))
        let jxl = try AnimatedImageDecoder(SamplePhotos.bytes(file), options: options)
        let reference = try AnimatedImageDecoder(SamplePhotos.bytes(gif), options: options)
        #expect(jxl.info.durations == reference.info.durations && jxl.info.plays == reference.info.plays)
        #expect(jxl.frameCount == 48 && jxl.outputWidth == 160 && jxl.outputHeight == 100)
        var lowest = Double.infinity
        while let frame = try jxl.nextFrame() {
            let expected = try #require(try reference.nextFrame())
            lowest = min(lowest, PixelCompare.psnr(frame.bitmap, expected.bitmap))
        }
        #expect(jxl.nextIndex == 48)
        #expect(lowest >= 45, "lowest frame: \(lowest) dB")
    }

    @Test("pillow-jxl-plugin's test files (float, gray, ICC, EXIF) agree with djxl")
    func pluginSuite() throws {
        // Given JPEG XL files made by another project
        let root = try ReferenceSuites.folder("pillow-jxl-plugin")
        let files = ReferenceSuites.files(in: root, extensions: ["jxl"])
        #expect(files.count >= 6, "\(root)")
        let directory = try TemporaryDirectory("jxl")
        defer { directory.remove() }
        for file in files {
            // When each is decoded by Darkroom and by djxl
            let ours = try decoder.decode(SamplePhotos.bytes(file), options: Self.options(.maxPixelSize(256))).bitmap
            let theirs = try reference(file, size: .maxPixelSize(256), in: directory)
            // Then they agree
            let psnr = PixelCompare.psnr(ours, theirs)
            print("jxl \((file as NSString).lastPathComponent): \(String(format: "%.1f", psnr)) dB")
            #expect(ours.width == theirs.width && ours.height == theirs.height, "\(file)")
            #expect(psnr >= 35, "\(file): \(psnr) dB")
        }
    }

    @Test("JPEG XL output: what Darkroom writes, djxl reads back as the same picture")
    func encode() throws {
        let directory = try TemporaryDirectory("jxl")
        defer { directory.remove() }
        // Given a thumbnail with alpha
        let thumb = try decoder.decode(
            SamplePhotos.bytes("png/cups-alpha-1600x1000.png"), options: Self.options(.maxPixelSize(320))
        ).bitmap
        // When it is written as JPEG XL and djxl decodes the file
        let file = directory.file("out.jxl")
        try TemporaryDirectory.write(try ImageEncoder.encode(thumb, as: .jxl), to: file)
        let back = try reference(file, size: .original, in: directory)
        // Then djxl's pixels are the thumbnail's
        #expect(back.width == 320 && back.height == 200)
        let psnr = PixelCompare.psnr(back, thumb)
        #expect(psnr >= 35, "\(psnr) dB")
    }
}
