import DarkroomTestSupport
import Testing

@testable import DarkroomImage

@Suite("Encoding")
struct EncoderTests {
    @Test("JPEG, PNG and WebP round-trip through the decoder", arguments: [ImageFileFormat.jpeg, .png, .webp])
    func roundTrip(format: ImageFileFormat) throws {
        // Given a synthetic opaque image
        let source = try TestBitmaps.synthetic(width: 300, height: 200)
        // When encoded and decoded again
        let encoded = try ImageEncoder.encode(source, as: format, options: EncodeOptions(quality: 95))
        let decoded = try ImageDecoder().decode(
            encoded, options: DecodeOptions(pixelFormat: .exactly(.bgra8Premultiplied)))
        // Then the format is recognized by its bytes and the pixels survive
        #expect(decoded.probe.format == format)
        let psnr = PixelCompare.psnr(decoded.bitmap, source)
        #expect(format == .png ? psnr == .infinity : psnr > 35, "\(format): \(psnr) dB")
    }

    @Test("lossless WebP and PNG keep alpha exactly")
    func alphaLossless() throws {
        let source = try Bitmap(width: 16, height: 8, format: .bgra8Premultiplied)
        for y in 0..<8 {
            let r = source.row(y).assumingMemoryBound(to: UInt8.self)
            for x in 0..<16 {
                let a = UInt8(x * 16)
                r[4 * x] = a / 2
                r[4 * x + 1] = a
                r[4 * x + 2] = 0
                r[4 * x + 3] = a
            }
        }
        let translucent = source.with(isOpaque: false)
        for (format, options) in [(ImageFileFormat.png, EncodeOptions()), (.webp, EncodeOptions(lossless: true))] {
            let decoded = try ImageDecoder().decode(ImageEncoder.encode(translucent, as: format, options: options))
                .bitmap
            #expect(!decoded.isOpaque)
            for y in 0..<8 {
                let r = decoded.row(y).assumingMemoryBound(to: UInt8.self)
                for x in 0..<16 { #expect(r[4 * x + 3] == UInt8(x * 16), "\(format) alpha at \(x)") }
            }
        }
    }

    @Test("bad quality and GIF output are refused")
    func refusals() throws {
        let b = try Bitmap(width: 2, height: 2, format: .gray8)
        #expect(throws: DarkroomImageError.self) {
            try ImageEncoder.encode(b, as: .jpeg, options: EncodeOptions(quality: 0))
        }
        #expect(throws: DarkroomImageError.self) { try ImageEncoder.encode(b, as: .gif) }
    }
}
