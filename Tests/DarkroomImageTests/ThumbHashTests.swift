import DarkroomTestSupport
import Foundation
import Testing

@testable import DarkroomImage

/// ThumbHash against the `thumbhash` package on PyPI (a port of the reference encoder), on the same pixels.
@Suite struct ThumbHashTests {
    /// Opaque samples: the PyPI port fails on images with alpha (a bug in its alpha branch), so those are checked
    /// through its decoder below.
    @Test(arguments: [
        "jpeg/kite-2560x1600.jpg", "jpeg-12mp/eveningglow-4032x3024.jpg", "png/summer-palette-1280x800.png",
        "orientation/fallenleaf-600x400-orientation-6.jpg", "webp/eveningglow-lossy-2560x1600.webp",
    ])
    func hashesEqualTheReferenceEncoders(_ sample: String) throws {
        // Given the pixels ThumbHash.compute encodes: the sample decoded at most 100 px a side, straight RGBA
        let bytes = try SamplePhotos.bytes(sample)
        let decoded = try ImageDecoder().decode(
            bytes, options: DecodeOptions(size: .maxPixelSize(100), pixelFormat: .exactly(.rgba8), filter: .box))
        let bitmap = decoded.bitmap
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let raw = (0..<bitmap.height).flatMap { y in
            Array(UnsafeRawBufferPointer(start: bitmap.row(y), count: bitmap.width * 4))
        }
        try Data(raw).write(to: URL(fileURLWithPath: directory.file("pixels.rgba")))
        // When both encoders hash them
        let ours = try bytes.withUnsafeBytes { try ThumbHash.compute($0) }
        let output = try PythonReference.run(
            """
            import sys, thumbhash
            data = open(sys.argv[1], "rb").read()
            print(bytes(thumbhash.rgba_to_thumb_hash(int(sys.argv[2]), int(sys.argv[3]), list(data))).hex())
            """, [directory.file("pixels.rgba"), String(bitmap.width), String(bitmap.height)])
        let reference = String(decoding: output, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        // Then the hashes are byte for byte the same
        #expect(ours.map { String(format: "%02x", $0) }.joined() == reference)
        #expect((15...30).contains(ours.count))
    }

    @Test(arguments: ["png/cups-alpha-1600x1000.png", "webp/cups-alpha-lossy-1600x1000.webp"])
    func hashesWithAlphaDecodeToTheImagesAverage(_ sample: String) throws {
        // Given an image with soft alpha and its ThumbHash
        let bytes = try SamplePhotos.bytes(sample)
        let hash = try bytes.withUnsafeBytes { try ThumbHash.compute($0) }
        let small = try ImageDecoder().decode(
            bytes, options: DecodeOptions(size: .maxPixelSize(100), pixelFormat: .exactly(.rgba8), filter: .box)
        ).bitmap
        var sums = [Double](repeating: 0, count: 4)
        for y in 0..<small.height {
            let row = small.row(y).assumingMemoryBound(to: UInt8.self)
            for x in 0..<small.width {
                let alpha = Double(row[4 * x + 3]) / 255
                for c in 0..<3 { sums[c] += alpha * Double(row[4 * x + c]) / 255 }
                sums[3] += alpha
            }
        }
        let expected = [
            sums[0] / sums[3], sums[1] / sums[3], sums[2] / sums[3], sums[3] / Double(small.width * small.height),
        ]
        // When the reference decoder reads its average colour back
        let output = try PythonReference.run(
            "import sys, thumbhash; print(*thumbhash.thumb_hash_to_average_rgba(list(bytes.fromhex(sys.argv[1]))))",
            [hash.map { String(format: "%02x", $0) }.joined()])
        let average = String(decoding: output, as: UTF8.self).split(separator: " ").compactMap {
            Double($0.trimmingCharacters(in: .whitespacesAndNewlines))
        }
        // Then the hash says it has alpha, and holds the image's average colour and opacity (to its 4–6 bits)
        #expect(hash[2] & 0x80 != 0)
        #expect(average.count == 4)
        for (got, want) in zip(average, expected) { #expect(abs(got - want) < 0.06, "\(average) vs \(expected)") }
    }

    @Test func largeBitmapsAreRefused() throws {
        #expect(throws: DarkroomImageError.self) {
            try ThumbHash.encode(try TestBitmaps.gradient(101, 10, alpha: false))
        }
    }
}
