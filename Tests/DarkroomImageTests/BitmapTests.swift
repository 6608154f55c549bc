import Testing

@testable import DarkroomImage

@Suite("Bitmap")
struct BitmapTests {
    @Test("rows are 64-byte aligned and cost is bytesPerRow × height", arguments: PixelFormat.allCases)
    func geometry(format: PixelFormat) throws {
        let b = try Bitmap(width: 37, height: 5, format: format)
        #expect(b.bytesPerRow % 64 == 0)
        #expect(b.bytesPerRow >= 37 * format.bytesPerPixel && b.bytesPerRow - 37 * format.bytesPerPixel < 64)
        #expect(b.cost == b.bytesPerRow * 5)
        #expect(Int(bitPattern: b.row(0)) % 64 == 0 && Int(bitPattern: b.row(3)) % 64 == 0)
    }

    @Test("non-positive sizes and mismatched storage are refused")
    func refusals() throws {
        #expect(throws: DarkroomImageError.self) { try Bitmap(width: 0, height: 3, format: .gray8) }
        let storage = try HeapBitmapStorage(byteCount: 64)
        #expect(throws: DarkroomImageError.self) {
            try Bitmap(width: 8, height: 2, format: .gray8, bytesPerRow: 64, isOpaque: true, storage: storage)
        }
    }

    @Test("orientation transforms are exact permutations")
    func orientation() throws {
        // Given a 3×2 gray image with distinct values
        let b = try Bitmap(width: 3, height: 2, format: .gray8)
        for y in 0..<2 {
            for x in 0..<3 { b.row(y).storeBytes(of: UInt8(10 * y + x), toByteOffset: x, as: UInt8.self) }
        }
        func pixels(_ o: ExifOrientation) throws -> [[UInt8]] {
            let r = try b.applying(o)
            return (0..<r.height).map { y in (0..<r.width).map { r.row(y).load(fromByteOffset: $0, as: UInt8.self) } }
        }
        // Then each matches the EXIF definition
        #expect(try pixels(.up) == [[0, 1, 2], [10, 11, 12]])
        #expect(try pixels(.upMirrored) == [[2, 1, 0], [12, 11, 10]])
        #expect(try pixels(.down) == [[12, 11, 10], [2, 1, 0]])
        #expect(try pixels(.downMirrored) == [[10, 11, 12], [0, 1, 2]])
        #expect(try pixels(.leftMirrored) == [[0, 10], [1, 11], [2, 12]])
        #expect(try pixels(.right) == [[10, 0], [11, 1], [12, 2]])
        #expect(try pixels(.rightMirrored) == [[12, 2], [11, 1], [10, 0]])
        #expect(try pixels(.left) == [[2, 12], [1, 11], [0, 10]])
    }

    @Test("decode memory is counted per measurement, even with other decodes running")
    func meter() throws {
        let (bitmap, meter) = try PixelMemory.measure {
            try Bitmap(width: 100, height: 10, format: .bgra8Premultiplied)
        }
        #expect(meter.peakBytes == bitmap.cost)
        #expect(meter.currentBytes == bitmap.cost)
    }
}
