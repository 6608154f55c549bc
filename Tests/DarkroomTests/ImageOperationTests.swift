import DarkroomImage
import DarkroomTestSupport
import Foundation
import Testing

@testable import Darkroom

/// The image-operation processors: turns and flips pixel for pixel, flattening and padding by their arithmetic,
/// blur and sharpen against libvips (`vips gaussblur`).
@Suite("Image operations")
struct ImageOperationTests {
    /// A 3×2 BGRA bitmap whose pixels are 0…5 in the blue channel.
    static func numbered() throws -> Bitmap {
        let bitmap = try Bitmap(width: 3, height: 2, format: .bgra8Premultiplied, isOpaque: true)
        for y in 0..<2 {
            let row = bitmap.row(y).assumingMemoryBound(to: UInt8.self)
            for x in 0..<3 {
                (row[4 * x], row[4 * x + 1], row[4 * x + 2], row[4 * x + 3]) = (UInt8(y * 3 + x), 0, 0, 255)
            }
        }
        return bitmap
    }

    static func blues(_ bitmap: Bitmap) -> [[Int]] {
        (0..<bitmap.height).map { y in
            (0..<bitmap.width).map { Int(bitmap.row(y).assumingMemoryBound(to: UInt8.self)[4 * $0]) }
        }
    }

    @Test func turnsAndFlipsMovePixelsWhereTheyShould() throws {
        // Given 0 1 2 / 3 4 5
        let image = try Self.numbered()
        // Then a clockwise quarter turn, a half turn, a counter-clockwise turn and the flips place them so
        #expect(Self.blues(try ImageProcessors.Rotate(quarterTurns: 1).process(image)) == [[3, 0], [4, 1], [5, 2]])
        #expect(Self.blues(try ImageProcessors.Rotate(quarterTurns: 2).process(image)) == [[5, 4, 3], [2, 1, 0]])
        #expect(Self.blues(try ImageProcessors.Rotate(quarterTurns: -1).process(image)) == [[2, 5], [1, 4], [0, 3]])
        #expect(
            Self.blues(try ImageProcessors.Rotate(flipsHorizontally: true).process(image)) == [[2, 1, 0], [5, 4, 3]])
        #expect(
            Self.blues(try ImageProcessors.Rotate(flipsVertically: true).process(image)) == [[3, 4, 5], [0, 1, 2]])
        #expect(
            Self.blues(try ImageProcessors.Rotate(quarterTurns: 1, flipsHorizontally: true).process(image))
                == [[0, 3], [1, 4], [2, 5]])
        #expect(
            ImageProcessors.Rotate(quarterTurns: 5).identifier == ImageProcessors.Rotate(quarterTurns: 1).identifier)
    }

    @Test func flattenAndPadFollowTheirArithmetic() throws {
        // Given a half-transparent red pixel (premultiplied 0, 0, 128, 128)
        let pixel = try Bitmap(width: 1, height: 1, format: .bgra8Premultiplied, isOpaque: false)
        let p = pixel.row(0).assumingMemoryBound(to: UInt8.self)
        (p[0], p[1], p[2], p[3]) = (0, 0, 128, 128)
        // When flattened over blue, and padded by one transparent pixel left and one green pixel row below
        let flat = try ImageProcessors.Flatten(background: RGBAColor(red: 0, green: 0, blue: 255)).process(pixel)
        let padded = try ImageProcessors.Pad(
            top: 0, right: 0, bottom: 1, left: 1, color: RGBAColor(red: 0, green: 255, blue: 0, alpha: 0)
        ).process(pixel)
        // Then the flattened pixel is the colour over blue, opaque: B = 255·127/255, R = 128
        let f = flat.row(0).assumingMemoryBound(to: UInt8.self)
        #expect([f[0], f[1], f[2], f[3]] == [127, 0, 128, 255] && flat.isOpaque)
        // And the padded image is 2×2 with the pixel at (1, 0) and transparent borders
        #expect(padded.width == 2 && padded.height == 2 && !padded.isOpaque)
        let row0 = padded.row(0).assumingMemoryBound(to: UInt8.self)
        #expect([row0[4], row0[5], row0[6], row0[7]] == [0, 0, 128, 128] && row0[3] == 0)
    }

    /// `vips gaussblur` of a sample at 256 px (an opaque photo), `--precision float --min-ampl 0.001` so its kernel
    /// is the true Gaussian cut where ours is, beside ours.
    static func vipsBlurred(sigma: Double) throws -> (source: Bitmap, vips: Bitmap) {
        let bytes = try SamplePhotos.bytes("jpeg/kite-2560x1600.jpg")
        let source = try ImageDecoder().decode(bytes, options: DecodeOptions(size: .maxPixelSize(256))).bitmap
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try Data(try ImageEncoder.encode(source, as: .png)).write(to: URL(fileURLWithPath: directory.file("in.png")))
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [
            "vips", "gaussblur", directory.file("in.png"), directory.file("out.png"), String(sigma),
            "--precision", "float", "--min-ampl", "0.001",
        ]
        try process.run()
        process.waitUntilExit()
        try #require(process.terminationStatus == 0, "vips gaussblur failed (apt-get install libvips-tools)")
        let out = try ImageDecoder().decode(try FileBytes.read(directory.file("out.png"))).bitmap
        return (source, try out.converted(to: .bgra8Premultiplied))
    }

    @Test(arguments: [0.8, 2.0, 5.0])
    func blurMatchesLibvips(sigma: Double) throws {
        let (source, vips) = try Self.vipsBlurred(sigma: sigma)
        let ours = try ImageProcessors.GaussianBlur(sigma: sigma).process(source)
        #expect(PixelCompare.psnr(ours, vips) >= 45)
        #expect(PixelCompare.psnr(source, vips) < PixelCompare.psnr(ours, vips))
    }

    @Test func sharpenAddsBackTheDetailTheBlurRemoves() throws {
        // Given libvips's blur of a photo and an unsharp mask built from it: source + 1 × (source − blur)
        let (source, vips) = try Self.vipsBlurred(sigma: 1.5)
        let expected = try Bitmap(
            width: source.width, height: source.height, format: .bgra8Premultiplied, isOpaque: true)
        for y in 0..<source.height {
            let s = source.row(y).assumingMemoryBound(to: UInt8.self)
            let b = vips.row(y).assumingMemoryBound(to: UInt8.self)
            let e = expected.row(y).assumingMemoryBound(to: UInt8.self)
            for i in 0..<(source.width * 4) { e[i] = UInt8(min(255, max(0, 2 * Int(s[i]) - Int(b[i])))) }
        }
        // When ours sharpens the same photo
        let ours = try ImageProcessors.Sharpen(sigma: 1.5, amount: 1).process(source)
        // Then they agree (to rounding of the blur), and the result differs from the input
        #expect(PixelCompare.psnr(ours, expected) >= 40)
        #expect(PixelCompare.psnr(ours, source) < 40)
    }
}

/// Resize modes (cover, stretch, fill-down) and gravity crops.
@Suite("Resize modes and gravity")
struct ResizeModeTests {
    /// A 640×480 gradient, encoded, decoded under `size`.
    static func decoded(_ size: TargetSize) throws -> Bitmap {
        let png = try ImageEncoder.encode(try TestBitmaps.gradient(640, 480, alpha: false), as: .png)
        return try ImageDecoder().decode(png, options: DecodeOptions(size: size)).bitmap
    }

    @Test func coverStretchAndFillDownSizeTheOutputAsDocumented() throws {
        // Cover keeps aspect and covers the box without cropping
        let cover = try Self.decoded(.cover(width: 100, height: 100))
        #expect(cover.width == 133 && cover.height == 100)
        // Stretch takes the box exactly, capped at the source without upscaling
        let stretch = try Self.decoded(.stretch(width: 100, height: 50))
        #expect(stretch.width == 100 && stretch.height == 50)
        let capped = try Self.decoded(.stretch(width: 1000, height: 50))
        #expect(capped.width == 640 && capped.height == 50)
        // Fill-down shrinks a box the source cannot fill to the box's aspect at the source's scale; fill does not
        let fillDown = try Self.decoded(.fillDown(width: 1000, height: 500))
        #expect(fillDown.width == 640 && fillDown.height == 320)
        let fill = try Self.decoded(.fill(width: 1000, height: 500))
        #expect(fill.width == 640 && fill.height == 480)
        // And where the source is large enough, fill-down is fill
        let same = try Self.decoded(.fillDown(width: 100, height: 100))
        #expect(PixelCompare.psnr(same, try Self.decoded(.fill(width: 100, height: 100))) == .infinity)
    }

    @Test func gravityPlacesTheCrop() throws {
        // Given a 10×6 image cropped to 4×2
        func origin(_ gravity: Gravity) -> [Int] {  // [x, y]
            let o = gravity.origin(cropWidth: 4, cropHeight: 2, width: 10, height: 6)
            return [o.x, o.y]
        }
        // Then each position, offset and focus point lands where imgproxy puts it, kept inside the image
        #expect(origin(.center()) == [3, 2])
        #expect(origin(.north()) == [3, 0])
        #expect(origin(.south()) == [3, 4])
        #expect(origin(.east()) == [6, 2])
        #expect(origin(.west()) == [0, 2])
        #expect(origin(.northWest(offsetX: 1, offsetY: 1)) == [1, 1])
        #expect(origin(.southEast(offsetX: 1, offsetY: 1)) == [5, 3])
        #expect(origin(.center(offsetX: 100, offsetY: -100)) == [6, 0])
        #expect(origin(.focusPoint(x: 0.9, y: 0.1)) == [6, 0])
        #expect(origin(.focusPoint(x: 0.5, y: 0.5)) == [3, 2])
    }

    @Test func aCentredCropOfACoverDecodeTakesItsMiddleColumns() throws {
        // Given the 640×480 image decoded to cover 100×100 (133×100)
        let cover = try Self.decoded(.cover(width: 100, height: 100))
        // When the centre 100×100 is cropped
        let crop = try ImageProcessors.CropToFill(width: 100, height: 100, gravity: .center()).process(cover)
        // Then it is columns 16..<116 of the cover decode, unchanged. (A `fill` decode places its crop in source
        // pixels, here 0.67 output pixels further right, so the two differ by that sub-pixel shift.)
        #expect(crop.width == 100 && crop.height == 100)
        for y in 0..<100 {
            let a = Array(UnsafeRawBufferPointer(start: crop.row(y), count: 400))
            let b = Array(UnsafeRawBufferPointer(start: cover.row(y) + 16 * 4, count: 400))
            #expect(a == b)
        }
    }
}
