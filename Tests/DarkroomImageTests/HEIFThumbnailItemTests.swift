import DarkroomTestSupport
import Foundation
import Testing

@testable import DarkroomImage

/// HEIC files whose thumbnail item is not a smaller copy of the primary image: a thumbnail larger than the primary
/// and of another shape, a primary item that is itself marked as a thumbnail (libheif's writer made such files
/// while its thumbnail-assignment arguments were swapped), and a thumbnail larger than the primary. Files are two
/// pictures written by libheif's `heif-enc`, their item references edited by `scripts/heif-transform.py`; the
/// expectations are libheif's own tools: `heif-info` for the image's size and `heif-convert` for its pixels.
@Suite("HEIC thumbnail items")
struct HEIFThumbnailItemTests {
    let decoder = ImageDecoder()

    /// A HEIC holding `first` as item 1 and `second` as item 2 (crops of one photo, `width×height`), with the
    /// references and primary item `edits` give.
    static func file(
        first: (Int, Int, [Int]), second: (Int, Int, [Int]), edits: [String], in directory: TemporaryDirectory
    ) throws -> String {
        var inputs: [String] = []
        for (index, picture) in [first, second].enumerated() {
            let png = directory.file("item\(index + 1).png")
            _ = try PythonReference.run(
                """
                import sys
                from PIL import Image
                w, h, x0, y0, x1, y1 = (int(v) for v in sys.argv[3:9])
                im = Image.open(sys.argv[1]).convert("RGB").crop((x0, y0, x1, y1)).resize((w, h), Image.LANCZOS)
                im.info.clear()
                im.save(sys.argv[2])
                """,
                [SamplePhotos.path("jpeg/bythewater-2560x1600.jpg"), png]
                    + ([picture.0, picture.1] + picture.2).map(String.init))
            inputs.append(png)
        }
        let plain = directory.file("plain.heic")
        let edited = directory.file("edited.heic")
        _ = try ReferenceTool.run("heif-enc", ["-q", "92"] + inputs + ["-o", plain])
        _ = try PythonReference.script("scripts/heif-transform.py", [plain, edited] + edits)
        return edited
    }

    /// libheif's answer: the size `heif-info` gives the image it lists (a file's one top-level image), and that
    /// image as `heif-convert` writes it.
    func libheifReading(_ file: String, in directory: TemporaryDirectory) throws -> (Int, Int, DecodedImage) {
        let info = String(decoding: try ReferenceTool.run("heif-info", [file]), as: UTF8.self)
        let line = try #require(info.split(separator: "\n").first { $0.hasPrefix("image: ") })
        let size = line.dropFirst("image: ".count).prefix { $0 != " " }.split(separator: "x").compactMap { Int($0) }
        try #require(size.count == 2, "heif-info: \(line)")
        let png = directory.file("libheif.png")
        _ = try ReferenceTool.run("heif-convert", [file, png])
        var options = DecodeOptions()
        options.geometry.pixelFormat = .exactly(.bgra8Premultiplied)
        return (size[0], size[1], try decoder.decode(SamplePhotos.bytes(png), options: options))
    }

    func decode(_ file: String, maxPixelSize: Int) throws -> DecodedImage {
        var options = DecodeOptions(size: .maxPixelSize(maxPixelSize))
        options.geometry.pixelFormat = .exactly(.bgra8Premultiplied)
        return try decoder.decode(SamplePhotos.bytes(file), options: options)
    }

    /// Checks that Darkroom probes and thumbnails `file` as libheif's tools show it.
    func expectLibheifsPicture(_ file: String, in directory: TemporaryDirectory, _ name: String) throws {
        let (width, height, reference) = try libheifReading(file, in: directory)
        let probe = try SamplePhotos.bytes(file).withUnsafeBytes { try ImageProber.probe($0) }
        #expect(probe.width == width && probe.height == height, "\(name): \(probe.width)×\(probe.height)")
        let thumbnail = try decode(file, maxPixelSize: 128)
        let expectedHeight = Int((128.0 * Double(height) / Double(width)).rounded())
        try #require(
            thumbnail.bitmap.width == 128 && thumbnail.bitmap.height == expectedHeight,
            "\(name): \(thumbnail.bitmap.width)×\(thumbnail.bitmap.height)")
        #expect(!thumbnail.usedEmbeddedThumbnail, "\(name)")
        let expected = try decoder.decode(
            ImageEncoder.encode(reference.bitmap, as: .png), options: DecodeOptions(size: .maxPixelSize(128)))
        let psnr = PixelCompare.psnr(thumbnail.bitmap, expected.bitmap)
        print("\(name): \(probe.width)×\(probe.height), thumbnail \(psnr) dB from libheif's picture")
        #expect(psnr >= 35, "\(name): \(psnr) dB")
    }

    @Test("a thumbnail item larger than the primary and of another shape: the primary is probed and thumbnailed")
    func largerThumbnailOfAnotherShape() throws {
        let directory = try TemporaryDirectory("heif-thumb")
        defer { directory.remove() }
        // Given a 320×240 primary (item 2) whose thumbnail item is a 640×200 strip of another part of the photo
        let file = try Self.file(
            first: (640, 200, [0, 800, 2560, 1600]), second: (320, 240, [0, 0, 1280, 960]),
            edits: ["--thumbnail-of", "1:2", "--pitm", "2"], in: directory)
        // When it is probed and thumbnailed to 128 px, Then both answer the primary, as libheif's tools do
        let probe = try SamplePhotos.bytes(file).withUnsafeBytes { try ImageProber.probe($0) }
        #expect(probe.heif?.thumbnailSizes == [[640, 200]])
        try expectLibheifsPicture(file, in: directory, "larger thumbnail of another shape")
    }

    @Test("a primary item marked as the thumbnail of another image: the image it is a thumbnail of is shown")
    func primaryMarkedAsThumbnail() throws {
        let directory = try TemporaryDirectory("heif-thumb")
        defer { directory.remove() }
        // Given a file whose pitm names item 1 (640×200), itself referenced as the thumbnail of item 2 (320×240):
        // heif-info and pillow-heif show the 320×240 image, with the 640×200 one as its thumbnail
        let file = try Self.file(
            first: (640, 200, [0, 800, 2560, 1600]), second: (320, 240, [0, 0, 1280, 960]),
            edits: ["--thumbnail-of", "1:2", "--pitm", "1"], in: directory)
        // When it is probed and thumbnailed, Then Darkroom shows the same image, not the thumbnail's 640×200
        let probe = try SamplePhotos.bytes(file).withUnsafeBytes { try ImageProber.probe($0) }
        #expect(probe.heif?.thumbnailSizes == [[640, 200]] && probe.heif?.imageCount == 1)
        try expectLibheifsPicture(file, in: directory, "primary marked as a thumbnail")
    }

    @Test("a thumbnail item of the primary's shape but larger than it is not decoded in its place")
    func largerThumbnailOfTheSameShape() throws {
        let directory = try TemporaryDirectory("heif-thumb")
        defer { directory.remove() }
        // Given a 320×240 primary whose thumbnail item is the same picture at 640×480
        let file = try Self.file(
            first: (640, 480, [0, 0, 1280, 960]), second: (320, 240, [0, 0, 1280, 960]),
            edits: ["--thumbnail-of", "1:2", "--pitm", "2"], in: directory)
        // When it is thumbnailed to a size both cover, Then the primary is decoded: it is the cheaper one
        try expectLibheifsPicture(file, in: directory, "larger thumbnail of the same shape")
    }

    @Test(
        "a thumbnail has the primary's shape when some scale puts each side within a pixel",
        arguments: [
            (320, 240, 4032, 3024, true), (321, 240, 4000, 3000, true), (323, 240, 4000, 3000, false),
            (240, 320, 3024, 4032, true), (160, 100, 640, 400, true), (160, 90, 640, 400, false),
            (640, 200, 320, 240, false), (1, 1, 3, 2, true), (0, 0, 640, 400, false),
        ] as [(Int, Int, Int, Int, Bool)])
    func sameShape(width: Int, height: Int, primaryWidth: Int, primaryHeight: Int, expected: Bool) {
        #expect(HEIFDecoder.hasSameShape(width, height, as: primaryWidth, primaryHeight) == expected)
    }
}
