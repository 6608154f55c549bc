import DarkroomTestSupport
import Foundation
import Testing

@testable import DarkroomImage

/// The placeholder a ThumbHash describes, against the `thumbhash` package's own reading of the hash.
@Suite struct ThumbHashDecodeTests {
    @Test(arguments: [
        "jpeg/kite-2560x1600.jpg", "png/cups-alpha-1600x1000.png", "webp/eveningglow-lossy-2560x1600.webp",
    ])
    func placeholdersKeepTheAverageColourAndAspect(_ sample: String) throws {
        // Given a photo's hash
        let bytes = try SamplePhotos.bytes(sample)
        let hash = try bytes.withUnsafeBytes { try ThumbHash.compute($0) }
        // When it is decoded into a placeholder
        let placeholder = try ThumbHash.decode(hash).converted(to: .rgba8)
        // Then its mean colour is the hash's average colour as the PyPI package reads it (premultiplied: mean of
        // colour × alpha over the mean alpha), within 3 levels
        var sums = [Double](repeating: 0, count: 4)
        for y in 0..<placeholder.height {
            let row = placeholder.row(y).assumingMemoryBound(to: UInt8.self)
            for x in 0..<placeholder.width {
                let a = Double(row[4 * x + 3]) / 255
                for c in 0..<3 { sums[c] += Double(row[4 * x + c]) * a }
                sums[3] += a
            }
        }
        let n = Double(placeholder.width * placeholder.height)
        let ours = (0..<3).map { sums[$0] / max(sums[3], 1e-9) / 255 } + [sums[3] / n]
        let output = try PythonReference.run(
            "import sys, thumbhash; print(*thumbhash.thumb_hash_to_average_rgba(list(bytes.fromhex(sys.argv[1]))))",
            [hash.map { String(format: "%02x", $0) }.joined()])
        let reference = String(decoding: output, as: UTF8.self).split(separator: " ").compactMap {
            Double($0.trimmingCharacters(in: .whitespacesAndNewlines))
        }
        try #require(reference.count == 4)
        for c in 0..<4 { #expect(abs(ours[c] - reference[c]) < 3.0 / 255, "channel \(c): \(ours) vs \(reference)") }
        // And its shape is the photo's (32 px on the long side)
        let probe = try ImageProber.probe(bytes)
        let aspect = Double(probe.width) / Double(probe.height)
        #expect(max(placeholder.width, placeholder.height) == 32)
        #expect(abs(Double(placeholder.width) / Double(placeholder.height) - aspect) / aspect < 0.35)
    }

    @Test func aSmoothImageComesBackClose() throws {
        // Given a smooth gradient hashed at 100×75
        let source = try TestBitmaps.gradient(100, 75, alpha: false)
        let hash = try ThumbHash.encode(source)
        // When its placeholder is decoded, and the source reduced to the placeholder's size
        let placeholder = try ThumbHash.decode(hash)
        let png = try ImageEncoder.encode(source, as: .png)
        let reduced = try ImageDecoder().decode(
            png,
            options: DecodeOptions(
                size: .stretch(width: placeholder.width, height: placeholder.height),
                pixelFormat: .exactly(.bgra8Premultiplied))
        ).bitmap
        // Then they agree to 22 dB (what a few DCT terms can say of a gradient: 24.4 dB measured)
        #expect(PixelCompare.psnr(placeholder, reduced) > 22)
    }

    @Test func truncatedHashesAreCorrupt() {
        #expect(throws: DarkroomImageError.self) { try ThumbHash.decode([1, 2, 3]) }
        #expect(throws: DarkroomImageError.self) { try ThumbHash.decode([0x2d, 0x08, 0x0a, 0x45, 0x06, 0x7f]) }
    }
}
