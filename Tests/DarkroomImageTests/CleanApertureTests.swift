import DarkroomTestSupport
import Foundation
import Testing

@testable import DarkroomImage

/// HEIF and AVIF transformations: `clap` crops the coded image, then `irot` turns it anticlockwise, then `imir`
/// mirrors it (axis 0: top to bottom, as libheif and libavif read it), the order the HEIF specification gives.
/// Files are written here: AVIFs by libavif's `avifenc` (lossless, so the expectation is exact), HEICs by libheif's
/// `heif-enc` with the properties added by `scripts/heif-transform.py`. Expectations are Pillow's crop, rotate and
/// flip of the source, and libheif's own reading (`heif-convert`).
@Suite("HEIF clean aperture")
struct CleanApertureTests {
    let decoder = ImageDecoder()

    /// A 640×400 photo without a profile, as PNG.
    static func source(in directory: TemporaryDirectory) throws -> String {
        let file = directory.file("source.png")
        _ = try PythonReference.run(
            """
            import sys
            from PIL import Image
            im = Image.open(sys.argv[1]).convert("RGB").resize((640, 400), Image.LANCZOS)
            im.info.clear()  # no profile: libheif's PNG writer refuses this one
            im.save(sys.argv[2])
            """, [SamplePhotos.path("jpeg/kite-2560x1600.jpg"), file])
        return file
    }

    /// Pillow's rendering of `source` cropped to `crop` (x, y, w, h), turned `irot` quarter turns anticlockwise and
    /// mirrored by `imir`, written as PNG.
    static func expected(_ source: String, crop: [Int], irot: Int, imir: Int?, to file: String) throws {
        _ = try PythonReference.run(
            """
            import sys
            from PIL import Image
            x, y, w, h, irot, imir = (int(v) for v in sys.argv[3:9])
            im = Image.open(sys.argv[1]).convert("RGB").crop((x, y, x + w, y + h))
            im = im.rotate(90 * irot, expand=True)
            if imir >= 0:
                im = im.transpose(Image.FLIP_TOP_BOTTOM if imir == 0 else Image.FLIP_LEFT_RIGHT)
            im.save(sys.argv[2])
            """, [source, file] + (crop + [irot, imir ?? -1]).map(String.init))
    }

    func decode(_ file: String, _ size: TargetSize = .original) throws -> DecodedImage {
        var options = DecodeOptions(size: size)
        options.geometry.pixelFormat = .exactly(.bgra8Premultiplied)
        return try decoder.decode(SamplePhotos.bytes(file), options: options)
    }

    @Test(
        "AVIF: clap, then irot, then imir, in every combination, give Pillow's crop, turn and flip exactly",
        arguments: [
            ([40, 30, 500, 300], 0, nil), ([40, 30, 500, 300], 1, nil), ([40, 30, 500, 300], 1, 0),
            ([41, 31, 499, 301], 3, 1), ([0, 0, 640, 400], 2, 0), ([100, 50, 201, 151], 0, 1),
        ] as [([Int], Int, Int?)])
    func avif(crop: [Int], irot: Int, imir: Int?) throws {
        let directory = try TemporaryDirectory("clap")
        defer { directory.remove() }
        // Given a lossless AVIF whose clean aperture, rotation and mirror libavif wrote
        let source = try Self.source(in: directory)
        let file = directory.file("clap.avif")
        var arguments = ["--lossless", "--crop", crop.map(String.init).joined(separator: ","), "--irot", "\(irot)"]
        if let imir { arguments += ["--imir", "\(imir)"] }
        _ = try ReferenceTool.run("avifenc", arguments + [source, file])
        try Self.expected(source, crop: crop, irot: irot, imir: imir, to: directory.file("expected.png"))
        _ = try ReferenceTool.run("heif-convert", [file, directory.file("libheif.png")])
        // When Darkroom probes and decodes it
        let probe = try SamplePhotos.bytes(file).withUnsafeBytes { try ImageProber.probe($0) }
        let ours = try decode(file)
        let expected = try decode(directory.file("expected.png"))
        let libheif = try decode(directory.file("libheif.png"))
        // Then the displayed size is the aperture's, turned; the coded size stays the frame's
        let turned = irot % 2 == 1
        #expect(
            probe.orientedWidth == (turned ? crop[3] : crop[2]) && probe.orientedHeight == (turned ? crop[2] : crop[3]))
        #expect(probe.heif?.codedWidth == 640 && probe.heif?.codedHeight == 400)
        // And the pixels are the source's, cropped, turned and mirrored — as libheif shows them too
        try #require(ours.bitmap.width == expected.bitmap.width && ours.bitmap.height == expected.bitmap.height)
        let exact = PixelCompare.psnr(ours.bitmap, expected.bitmap)
        let agreed = PixelCompare.psnr(ours.bitmap, libheif.bitmap)
        print("avif clap \(crop) irot \(irot) imir \(imir.map(String.init) ?? "-"): \(exact) dB, libheif \(agreed) dB")
        #expect(exact >= 50, "\(exact) dB")
        #expect(agreed >= 50, "\(agreed) dB")
        // And a thumbnail is the same picture
        let small = try decode(file, .maxPixelSize(128))
        let smallExpected = try decode(directory.file("expected.png"), .maxPixelSize(128))
        #expect(PixelCompare.psnr(small.bitmap, smallExpected.bitmap) >= 40)
    }

    @Test(
        "HEIC: the primary's clap, irot and imir apply; a thumbnail item is used only when it shows the same picture",
        arguments: [false, true])
    func heic(thumbnailTransformed: Bool) throws {
        let directory = try TemporaryDirectory("clap")
        defer { directory.remove() }
        // Given a HEIC with a 160×100 thumbnail item whose primary is cropped, turned and mirrored, its thumbnail
        // either the same way (scaled) or not at all
        let source = try Self.source(in: directory)
        let plain = directory.file("plain.heic")
        let file = directory.file("clap.heic")
        _ = try ReferenceTool.run("heif-enc", ["-q", "90", "-t", "160", source, "-o", plain])
        let properties = ["--crop", "40,30,500,300", "--irot", "1", "--imir", "0"]
        _ = try PythonReference.script(
            "scripts/heif-transform.py",
            [plain, file, "--item", "primary"] + properties
                + (thumbnailTransformed ? ["--item", "thumbnails"] + properties : []))
        try Self.expected(source, crop: [40, 30, 500, 300], irot: 1, imir: 0, to: directory.file("expected.png"))
        // When Darkroom decodes it in full and at a size the thumbnail item covers
        let probe = try SamplePhotos.bytes(file).withUnsafeBytes { try ImageProber.probe($0) }
        let full = try decode(file)
        let small = try decode(file, .maxPixelSize(64))
        let expected = try decode(directory.file("expected.png"))
        let smallExpected = try decode(directory.file("expected.png"), .maxPixelSize(64))
        // Then both are the cropped, turned, mirrored picture
        #expect(probe.orientedWidth == 300 && probe.orientedHeight == 500)
        try #require(full.bitmap.width == 300 && full.bitmap.height == 500)
        try #require(small.bitmap.width == smallExpected.bitmap.width && small.bitmap.height == 64)
        let fullPSNR = PixelCompare.psnr(full.bitmap, expected.bitmap)
        let smallPSNR = PixelCompare.psnr(small.bitmap, smallExpected.bitmap)
        print("heic clap, thumbnail transformed \(thumbnailTransformed): full \(fullPSNR) dB, 64 px \(smallPSNR) dB")
        #expect(fullPSNR >= 35, "\(fullPSNR) dB")
        #expect(smallPSNR >= 28, "\(smallPSNR) dB")
        // And the thumbnail item served the small one only when it shows the same picture
        #expect(small.usedEmbeddedThumbnail == thumbnailTransformed)
    }
}
