import DarkroomSupport
import DarkroomTestSupport
import Foundation
import Testing

@testable import DarkroomImage

/// Camera RAW against rawpy (libraw's own Python binding): DNGs written by `scripts/make-dng.py` from a sample
/// photo, with and without an embedded JPEG preview, upright and turned.
@Suite("Camera RAW")
struct RAWTests {
    let decoder = ImageDecoder()
    static let photo = "jpeg/kite-2560x1600.jpg"

    static func options(_ size: TargetSize) -> DecodeOptions {
        var options = DecodeOptions(size: size)
        options.geometry.pixelFormat = .exactly(.bgra8Premultiplied)
        return options
    }

    /// A 1280×800 DNG of the sample photo, with a JPEG preview of `preview` px (0: none).
    static func dng(preview: Int, orientation: Int = 1, in directory: TemporaryDirectory) throws -> String {
        let file = directory.file("p\(preview)-o\(orientation).dng")
        _ = try PythonReference.script(
            "scripts/make-dng.py",
            [
                SamplePhotos.path(photo), file, "--preview", String(preview), "--orientation", String(orientation),
                "--scale", "0.5",
            ])
        return file
    }

    @Test("the embedded preview serves a thumbnail it covers, decoded like rawpy extracts it")
    func preview() throws {
        let directory = try TemporaryDirectory("raw")
        defer { directory.remove() }
        // Given a DNG carrying a 1024 px JPEG preview
        let file = try Self.dng(preview: 1024, in: directory)
        let bytes = try SamplePhotos.bytes(file)
        let probe = try bytes.withUnsafeBytes { try ImageProber.probe($0) }
        #expect(probe.format == .raw && probe.width == 1280 && probe.height == 800)
        #expect(probe.raw?.previewSizes == [[1024, 640]] && probe.raw?.previewFormat == "jpeg")
        // When a 256 px thumbnail is decoded, and rawpy extracts the preview
        let thumb = try decoder.decode(bytes, options: Self.options(.maxPixelSize(256)))
        let extracted = directory.file("preview.jpg")
        _ = try PythonReference.run(
            "import rawpy, sys; open(sys.argv[2], 'wb').write(rawpy.imread(sys.argv[1]).extract_thumb().data)",
            [file, extracted])
        let reference = try decoder.decode(SamplePhotos.bytes(extracted), options: Self.options(.maxPixelSize(256)))
        // Then the preview was used, and its pixels are rawpy's preview's
        #expect(thumb.usedEmbeddedThumbnail)
        #expect(PixelCompare.psnr(thumb.bitmap, reference.bitmap) >= 45)
    }

    @Test("without a preview large enough, the half-size develop agrees with rawpy's half-size postprocess")
    func develop() throws {
        let directory = try TemporaryDirectory("raw")
        defer { directory.remove() }
        // Given a DNG whose preview (256 px) is smaller than the 640 px asked for
        let file = try Self.dng(preview: 256, in: directory)
        // When Darkroom decodes 640 px (the half size) and rawpy develops at half size with the camera's balance
        let ours = try decoder.decode(SamplePhotos.bytes(file), options: Self.options(.maxPixelSize(640)))
        let developed = directory.file("developed.png")
        _ = try PythonReference.run(
            """
            import rawpy, sys
            from PIL import Image
            rgb = rawpy.imread(sys.argv[1]).postprocess(half_size=True, use_camera_wb=True, output_bps=8)
            Image.fromarray(rgb).save(sys.argv[2])
            """, [file, developed])
        let theirs = try decoder.decode(SamplePhotos.bytes(developed), options: Self.options(.maxPixelSize(640)))
        // Then the sensor data was developed, like libraw's own half-size develop
        #expect(!ours.usedEmbeddedThumbnail)
        #expect(ours.bitmap.width == 640 && ours.bitmap.height == 400)
        let psnr = PixelCompare.psnr(ours.bitmap, theirs.bitmap)
        print("raw develop vs rawpy: \(String(format: "%.1f", psnr)) dB")
        #expect(psnr >= 35, "\(psnr) dB")
        // And it is the photo (a develop of a mosaic of it: demosaicing and tone aside)
        let photo = try decoder.decode(SamplePhotos.bytes(Self.photo), options: Self.options(.maxPixelSize(640)))
        #expect(PixelCompare.psnr(ours.bitmap, photo.bitmap) >= 20)
    }

    @Test("the RAW's orientation turns the preview and the develop alike", arguments: [256, 1024])
    func orientation(preview: Int) throws {
        let directory = try TemporaryDirectory("raw")
        defer { directory.remove() }
        // Given the same DNG upright and with orientation 6 (turn 90° clockwise to view)
        let upright = try Self.dng(preview: preview, in: directory)
        let turned = try Self.dng(preview: preview, orientation: 6, in: directory)
        let size = TargetSize.maxPixelSize(preview == 1024 ? 256 : 640)
        // When both are decoded
        let a = try decoder.decode(SamplePhotos.bytes(upright), options: Self.options(size)).bitmap
        let b = try decoder.decode(SamplePhotos.bytes(turned), options: Self.options(size)).bitmap
        // Then the turned one is the upright one turned
        let expected = try a.applying(.right, allocate: Bitmap.allocateOnHeap)
        #expect(b.width == expected.width && b.height == expected.height)
        #expect(PixelCompare.psnr(b, expected) >= 40)
    }

    @Test("damaged RAWs fail with typed errors")
    func damaged() throws {
        let directory = try TemporaryDirectory("raw")
        defer { directory.remove() }
        let bytes = try SamplePhotos.bytes(try Self.dng(preview: 0, in: directory))
        for cut in [200, 4096, bytes.count / 2] {
            #expect(throws: DarkroomImageError.self) {
                try decoder.decode(Array(bytes.prefix(cut)), options: Self.options(.maxPixelSize(128)))
            }
        }
    }

    /// Bytes this thread has asked the kernel to read so far (`rchar` of /proc/thread-self/io).
    static func threadBytesRead() throws -> Int {
        let text = try String(contentsOfFile: "/proc/thread-self/io", encoding: .utf8)
        let line = try #require(text.split(separator: "\n").first { $0.hasPrefix("rchar:") })
        return try #require(Int(line.dropFirst(6).trimmingCharacters(in: .whitespaces)))
    }

    @Test("decode(fileAt:) lets libraw read the preview, not the whole file, with the same pixels as the bytes")
    func fromFile() throws {
        let directory = try TemporaryDirectory("raw")
        defer { directory.remove() }
        // Given a DNG with a 1024 px preview and one with a 256 px preview, rotated
        for (preview, size) in [(1024, 256), (256, 640)] {
            let file = try Self.dng(preview: preview, orientation: 6, in: directory)
            let fileSize = try SamplePhotos.bytes(file).count
            // When it is decoded from its path, and from its bytes
            let before = try Self.threadBytesRead()
            let fromPath = try decoder.decode(fileAt: file, options: Self.options(.maxPixelSize(size)))
            let read = try Self.threadBytesRead() - before
            let fromBytes = try decoder.decode(SamplePhotos.bytes(file), options: Self.options(.maxPixelSize(size)))
            // Then both give the same upright picture the same way
            #expect(fromPath.usedEmbeddedThumbnail == (preview == 1024))
            #expect(fromPath.probe.orientation == .right && fromPath.bitmap.height == size)
            #expect(PixelCompare.psnr(fromPath.bitmap, fromBytes.bitmap) == .infinity)
            // And a thumbnail from the preview read a fraction of the file
            print("raw fromFile: preview \(preview): read \(read) of \(fileSize) bytes")
            if preview == 1024 { #expect(read < fileSize / 4, "read \(read) of \(fileSize) bytes") }
        }
        // And other formats, missing files and damaged RAWs answer as the bytes path does
        let jpeg = SamplePhotos.path("orientation/fallenleaf-600x400-orientation-6.jpg")
        let a = try decoder.decode(fileAt: jpeg, options: Self.options(.maxPixelSize(200)))
        let b = try decoder.decode(SamplePhotos.bytes(jpeg), options: Self.options(.maxPixelSize(200)))
        #expect(PixelCompare.psnr(a.bitmap, b.bitmap) == .infinity)
        #expect { try decoder.decode(fileAt: directory.file("missing.dng")) } throws: {
            ($0 as? DarkroomImageError)?.code == .notFound
        }
        let whole = try SamplePhotos.bytes(try Self.dng(preview: 0, in: directory))
        let cut = directory.file("cut.dng")
        try TemporaryDirectory.write(Array(whole.prefix(whole.count / 2)), to: cut)
        #expect(throws: DarkroomImageError.self) {
            try decoder.decode(fileAt: cut, options: Self.options(.maxPixelSize(64)))
        }
        // And the probe of a RAW file reads its header from the file too
        let probe = try ImageProber.probe(fileAt: directory.file("p1024-o6.dng"))
        #expect(probe.format == .raw && probe.raw?.previewSizes == [[1024, 640]])
    }
}
