import DarkroomTestSupport
import Foundation
import Testing

@testable import DarkroomImage

@Suite("Box blur: running-sum boxes against Pillow's box and Gaussian blurs")
struct BoxBlurTests {
    /// A photo as an opaque RGBA8 bitmap, and its pixels as packed RGB.
    static func photo() throws -> (bitmap: Bitmap, rgb: [UInt8]) {
        let bitmap = try ImageDecoder().decode(
            try SamplePhotos.bytes("orientation/fallenleaf-600x400-orientation-1.jpg"),
            options: DecodeOptions(size: .original, pixelFormat: .exactly(.rgba8))
        ).bitmap
        return (bitmap, rgb(bitmap))
    }

    static func rgb(_ bitmap: Bitmap) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(bitmap.width * bitmap.height * 3)
        for y in 0..<bitmap.height {
            let row = bitmap.row(y).assumingMemoryBound(to: UInt8.self)
            for x in 0..<bitmap.width { out += [row[4 * x], row[4 * x + 1], row[4 * x + 2]] }
        }
        return out
    }

    /// Pillow's `filter` expression applied to `rgb`, as packed RGB.
    static func pillow(_ rgb: [UInt8], width: Int, height: Int, filter: String) throws -> [UInt8] {
        let directory = try TemporaryDirectory("blur")
        defer { directory.remove() }
        let input = directory.file("in.rgb")
        try Data(rgb).write(to: URL(fileURLWithPath: input))
        let script = """
            import sys
            from PIL import Image, ImageFilter
            im = Image.frombytes("RGB", (\(width), \(height)), open(sys.argv[1], "rb").read())
            sys.stdout.buffer.write(im.filter(\(filter)).tobytes())
            """
        return [UInt8](try PythonReference.run(script, [input]))
    }

    @Test("One box pass in each axis equals Pillow's BoxBlur to within one level", arguments: [1, 4, 13])
    func oneBoxPass(radius: Int) throws {
        // Given a photo
        let (bitmap, rgb) = try Self.photo()

        // When one horizontal and one vertical box pass of `radius` run, and Pillow's BoxBlur(radius)
        let ours = try Bitmap.allocateOnHeap(
            width: bitmap.width, height: bitmap.height, format: bitmap.format, isOpaque: true)
        for y in 0..<bitmap.height { ours.row(y).copyMemory(from: bitmap.row(y), byteCount: bitmap.width * 4) }
        try BoxBlur.horizontal(ours, radius: radius)
        let scratch = try Bitmap.allocateOnHeap(
            width: bitmap.width, height: bitmap.height, format: bitmap.format, isOpaque: true)
        try BoxBlur.vertical(ours, radius: radius, scratch: scratch)
        let reference = try Self.pillow(
            rgb, width: bitmap.width, height: bitmap.height, filter: "ImageFilter.BoxBlur(\(radius))")

        // Then every sample is within one level (both round once per axis)
        let mine = Self.rgb(ours)
        #expect(reference.count == mine.count)
        let worst = zip(mine, reference).map { abs(Int($0) - Int($1)) }.max() ?? 255
        #expect(worst <= 1, "largest difference \(worst)")
    }

    @Test("Three boxes in each axis approximate Pillow's Gaussian blur (≥ 38 dB)", arguments: [2.0, 8.0, 24.0])
    func gaussian(sigma: Double) throws {
        // Given a photo
        let (bitmap, rgb) = try Self.photo()

        // When it is blurred by `sigma`, and by Pillow's GaussianBlur (itself three extended boxes)
        let mine = Self.rgb(try BoxBlur.blurred(bitmap, sigma: sigma))
        let reference = try Self.pillow(
            rgb, width: bitmap.width, height: bitmap.height, filter: "ImageFilter.GaussianBlur(\(sigma))")

        // Then the two agree closely, and the source is untouched
        var squares = 0.0
        for (a, b) in zip(mine, reference) {
            let d = Double(Int(a) - Int(b))
            squares += d * d
        }
        let mse = squares / Double(max(1, mine.count))
        let psnr = 10 * log10(255 * 255 / max(mse, 1e-9))
        #expect(psnr >= 38, "PSNR \(psnr) dB")
        #expect(Self.rgb(bitmap) == rgb)
    }

    @Test("The box for a standard deviation follows the filter-effects rule and is odd")
    func boxSizes() {
        #expect(BoxBlur.boxSize(sigma: 0) == 1)
        #expect(BoxBlur.boxSize(sigma: 1) == 3)  // ⌊1.88 + 0.5⌋ = 2, made odd
        #expect(BoxBlur.boxSize(sigma: 10) == 19)  // ⌊18.8 + 0.5⌋ = 19
        #expect(BoxBlur.boxSize(sigma: 32) == 61)  // ⌊60.2 + 0.5⌋ = 60, made odd
    }
}
