import Foundation

/// Pixel comparisons: PSNR and blank checks, for tests and benchmarks that grade a decode against a reference.
/// `package`: one implementation for the test suites and the benchmarks, not public API. O(pixels), no allocation.
package enum PixelCompare {
    /// PSNR over the colour channels of two pixel buffers (BGRA: B, G, R; gray: the one channel); `.infinity`
    /// when identical.
    package static func psnr(_ a: [UInt8], _ b: [UInt8], bytesPerPixel: Int) -> Double {
        precondition(a.count == b.count)
        var sum = 0.0
        var n = 0
        for i in 0..<a.count where bytesPerPixel == 1 || i % 4 != 3 {
            let d = Double(a[i]) - Double(b[i])
            sum += d * d
            n += 1
        }
        return decibels(meanSquare: sum / Double(max(n, 1)))
    }

    /// PSNR over the colour channels of two bitmaps of one size and format (dB); `.infinity` when identical.
    package static func psnr(_ a: Bitmap, _ b: Bitmap) -> Double {
        precondition(a.width == b.width && a.height == b.height && a.format == b.format)
        var sum = 0.0
        var n = 0
        let bpp = a.format.bytesPerPixel
        for y in 0..<a.height {
            let ra = a.row(y).assumingMemoryBound(to: UInt8.self)
            let rb = b.row(y).assumingMemoryBound(to: UInt8.self)
            for i in 0..<(a.width * bpp) where bpp == 1 || i % 4 != 3 {
                let d = Double(ra[i]) - Double(rb[i])
                sum += d * d
                n += 1
            }
        }
        return decibels(meanSquare: sum / Double(max(n, 1)))
    }

    /// Whether every visible byte is the same value (a blank image).
    package static func isUniform(_ b: Bitmap) -> Bool {
        let first = b.row(0).load(as: UInt8.self)
        for y in 0..<b.height {
            let r = b.row(y).assumingMemoryBound(to: UInt8.self)
            for i in 0..<(b.width * b.format.bytesPerPixel) where r[i] != first { return false }
        }
        return true
    }

    private static func decibels(meanSquare mse: Double) -> Double {
        mse == 0 ? .infinity : 10 * log10(255 * 255 / mse)
    }
}
