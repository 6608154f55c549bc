import DarkroomTestSupport
import Foundation
import Testing

@testable import DarkroomImage

/// The small picture a file carries beside its image, decoded as a stand-in: the EXIF thumbnail of a camera or phone
/// JPEG (written into real photos by `scripts/add-exif-thumbnail.py` as cameras store it, and located by Pillow as
/// the reference) and a HEIF thumbnail item. It must come out upright, at the whole image's output size, close to
/// the image itself, and never stand in when its shape is not the image's.
@Suite("Embedded thumbnails")
struct EmbeddedThumbnailTests {
    let decoder = ImageDecoder()
    static let options = DecodeOptions(size: .maxPixelSize(256), pixelFormat: .exactly(.bgra8Premultiplied))

    /// `source` with an EXIF thumbnail added (`arguments` are the script's options); returns the file's path.
    static func withThumbnail(_ source: String, _ arguments: [String] = [], in directory: TemporaryDirectory)
        throws -> String
    {
        let out = directory.file(URL(fileURLWithPath: source).lastPathComponent)
        _ = try PythonReference.script("scripts/add-exif-thumbnail.py", [source, out] + arguments)
        return out
    }

    /// Where Pillow finds the EXIF thumbnail in `path`: its offset from the start of the file and its length.
    static func pillowThumbnailRange(_ path: String) throws -> Range<Int> {
        let out = try PythonReference.run(
            """
            import sys
            from PIL import Image, ExifTags
            im = Image.open(sys.argv[1])
            ifd1 = im.getexif().get_ifd(ExifTags.IFD.IFD1)
            data = open(sys.argv[1], "rb").read()
            tiff = data.index(b"Exif\\0\\0") + 6
            print(tiff + ifd1[0x0201], ifd1[0x0202])
            """, [path])
        let numbers = String(decoding: out, as: UTF8.self).split(whereSeparator: \.isWhitespace).compactMap { Int($0) }
        try #require(numbers.count == 2, "Pillow: \(String(decoding: out, as: UTF8.self))")
        return numbers[0]..<(numbers[0] + numbers[1])
    }

    @Test(
        "a camera JPEG's EXIF thumbnail is found where Pillow finds it, decoded upright at the image's size",
        arguments: 1...8)
    func exifThumbnailUpright(orientation: Int) throws {
        let directory = try TemporaryDirectory("exif-thumb")
        defer { directory.remove() }
        // Given a photo stored in orientation N with a thumbnail of its stored pixels in IFD1 (big-endian for odd N)
        let source = SamplePhotos.path("orientation/fallenleaf-600x400-orientation-\(orientation).jpg")
        let file = try Self.withThumbnail(source, orientation % 2 == 1 ? ["--big-endian"] : [], in: directory)
        let bytes = try SamplePhotos.bytes(file)
        // When its thumbnail is located and decoded at 256 px
        let range = bytes.withUnsafeBytes { ExifThumbnail.range(in: $0) }
        let preview = try #require(try decoder.decodeEmbeddedThumbnail(bytes, options: Self.options))
        let full = try decoder.decode(bytes, options: Self.options)
        // Then it lies where Pillow reads it, and stands in for the image: upright, at the full decode's size,
        // close to it (29 to 32 dB here)
        #expect(range == (try Self.pillowThumbnailRange(file)))
        #expect(preview.usedEmbeddedThumbnail && !full.usedEmbeddedThumbnail)
        #expect(preview.bitmap.width == full.bitmap.width && preview.bitmap.height == full.bitmap.height)
        #expect(preview.bitmap.width == 256)
        #expect(preview.probe.width == full.probe.width && preview.probe.orientation == full.probe.orientation)
        let psnr = PixelCompare.psnr(preview.bitmap, full.bitmap)
        #expect(psnr >= 26, "PSNR \(psnr)")
    }

    @Test("a fill geometry centre-crops the thumbnail as it crops the image")
    func fillCrops() throws {
        let directory = try TemporaryDirectory("exif-thumb")
        defer { directory.remove() }
        // Given a 12 MP phone-sized photo with a 160 × 120 thumbnail
        let file = try Self.withThumbnail(SamplePhotos.path("jpeg-12mp/path-4032x3024.jpg"), in: directory)
        let bytes = try SamplePhotos.bytes(file)
        // When both are decoded into a 256 px square cell
        let options = DecodeOptions(
            geometry: OutputGeometry(size: .fill(width: 256, height: 256), pixelFormat: .exactly(.bgra8Premultiplied)))
        let preview = try #require(try decoder.decodeEmbeddedThumbnail(bytes, options: options))
        let full = try decoder.decode(bytes, options: options)
        // Then the thumbnail fills the same square with the same middle of the picture
        #expect(preview.bitmap.width == 256 && preview.bitmap.height == 256)
        let psnr = PixelCompare.psnr(preview.bitmap, full.bitmap)
        #expect(psnr >= 24, "PSNR \(psnr)")
    }

    @Test("a thumbnail of another shape (letterboxed), none at all, or a damaged IFD1 gives no stand-in")
    func refusedThumbnails() throws {
        let directory = try TemporaryDirectory("exif-thumb")
        defer { directory.remove() }
        let source = SamplePhotos.path("orientation/fallenleaf-600x400-orientation-1.jpg")
        // Given a 3:2 photo whose thumbnail is letterboxed into 160 × 120, as some cameras write it
        let letterboxed = try SamplePhotos.bytes(Self.withThumbnail(source, ["--letterbox", "160x120"], in: directory))
        // Then it is not shown in the photo's place
        #expect(try decoder.decodeEmbeddedThumbnail(letterboxed, options: Self.options) == nil)
        // Given a photo without EXIF
        let bare = try SamplePhotos.bytes("jpeg-12mp/eveningglow-4032x3024.jpg")
        #expect(try decoder.decodeEmbeddedThumbnail(bare, options: Self.options) == nil)
        // Given a thumbnail whose offset points past its segment, or at bytes that are not a JPEG
        let good = try SamplePhotos.bytes(Self.withThumbnail(source, in: directory))
        let range = try #require(good.withUnsafeBytes { ExifThumbnail.range(in: $0) })
        var notJPEG = good
        notJPEG[range.lowerBound] = 0  // the thumbnail's bytes do not start FF D8
        var overrunning = good
        let shortened = range.lowerBound + 50 - 4  // APP1 now ends inside the thumbnail
        (overrunning[4], overrunning[5]) = (UInt8(shortened >> 8), UInt8(shortened & 0xFF))
        for bad in [notJPEG, overrunning] {
            // Then there is no stand-in, and no crash
            #expect(bad.withUnsafeBytes { ExifThumbnail.range(in: $0) } == nil)
            #expect(((try? decoder.decodeEmbeddedThumbnail(bad, options: Self.options)) ?? nil) == nil)
        }
        // Given a geometry that crops: a thumbnail cannot supply a crop's detail
        var cropping = Self.options
        cropping.geometry.crop = .corners(left: 0, top: 0, right: 100, bottom: 100)
        #expect(try decoder.decodeEmbeddedThumbnail(good, options: cropping) == nil)
    }

    @Test("a photo editor's own EXIF thumbnail is read as Pillow reads it, and one left over from before a turn is not")
    func lightroomThumbnail() throws {
        // Given the orientation samples as written: each keeps Lightroom's 256 × 160 thumbnail of the upright picture,
        // so it fits the stored pixels of orientation 1 but not the turned (375 × 600) ones of orientation 6
        let upright = SamplePhotos.path("orientation/fallenleaf-600x400-orientation-1.jpg")
        let turned = SamplePhotos.path("orientation/fallenleaf-600x400-orientation-6.jpg")
        let bytes = try SamplePhotos.bytes(upright)
        // When they are located and decoded
        let range = bytes.withUnsafeBytes { ExifThumbnail.range(in: $0) }
        let preview = try #require(try decoder.decodeEmbeddedThumbnail(bytes, options: Self.options))
        let full = try decoder.decode(bytes, options: Self.options)
        // Then the first is where Pillow finds it and stands in for the image
        #expect(range == (try Self.pillowThumbnailRange(upright)))
        #expect(preview.bitmap.width == full.bitmap.width && preview.bitmap.height == full.bitmap.height)
        let psnr = PixelCompare.psnr(preview.bitmap, full.bitmap)
        #expect(psnr >= 26, "PSNR \(psnr)")
        // And the second, of another shape than the pixels it is stored with, is found but not shown
        let turnedBytes = try SamplePhotos.bytes(turned)
        #expect(turnedBytes.withUnsafeBytes { ExifThumbnail.range(in: $0) } == (try Self.pillowThumbnailRange(turned)))
        #expect(try decoder.decodeEmbeddedThumbnail(turnedBytes, options: Self.options) == nil)
    }

    @Test(
        "a HEIC's thumbnail item stands in at the image's output size, as pillow-heif reads it; a HEIC without one gives none"
    )
    func heifThumbnailItem() throws {
        let directory = try TemporaryDirectory("heif-thumb")
        defer { directory.remove() }
        // Given a 4032 × 3024 HEIC with a 320 × 240 thumbnail item, and one without
        let path = SamplePhotos.path("heic/eveningglow-4032x3024-thumb320.heic")
        let bytes = try SamplePhotos.bytes(path)
        let plain = try SamplePhotos.bytes("heic/summer_1am-2560x1600.heic")
        // When the thumbnail is decoded at 512 px (larger than the item: upscaled) and the image at the same size
        let options = DecodeOptions(size: .maxPixelSize(512), pixelFormat: .exactly(.bgra8Premultiplied))
        let preview = try #require(try decoder.decodeEmbeddedThumbnail(bytes, options: options))
        let full = try decoder.decode(bytes, options: options)
        // Then the thumbnail item was used, at the image's output size, and it is pillow-heif's thumbnail resized
        // (the item itself is a rougher picture: about 20 dB from the image, by Pillow's measure too)
        #expect(preview.usedEmbeddedThumbnail && !full.usedEmbeddedThumbnail)
        #expect(preview.bitmap.width == 512 && preview.bitmap.height == 384)
        let png = directory.file("thumb.png")
        _ = try PythonReference.run(
            """
            import sys, pillow_heif
            from PIL import Image
            t = pillow_heif.open_heif(sys.argv[1])[0].get_thumbnail(0)
            Image.frombytes(t.mode, t.size, t.data, "raw", t.mode, t.stride).resize((512, 384), Image.LANCZOS).save(sys.argv[2])
            """, [path, png])
        let reference = try decoder.decode(SamplePhotos.bytes(png), options: options)
        let psnr = PixelCompare.psnr(preview.bitmap, reference.bitmap)
        #expect(psnr >= 35, "PSNR \(psnr)")
        #expect(try decoder.decodeEmbeddedThumbnail(plain, options: options) == nil)
    }
}
