/// A Gaussian blur approximated by three box blurs in each axis (the approximation the W3C filter-effects
/// specification gives for `feGaussianBlur`, and UIKit's image effects use): running sums, so the cost is a few
/// additions per channel per pixel whatever the radius — for previews blurred by tens of pixels, where
/// a Gaussian kernel (the pipeline's blur processor) would cost hundreds of multiply-adds a pixel. Edges repeat the border
/// pixel; premultiplied BGRA and gray are blurred channel by channel, so alpha stays consistent.
package enum BoxBlur {
    /// The box size for standard deviation `sigma`: ⌊σ · 3 · √(2π) / 4 + 0.5⌋, made odd so each box is centred.
    static func boxSize(sigma: Double) -> Int {
        guard sigma > 0 else { return 1 }
        return Int((sigma * 3 * (2 * Double.pi).squareRoot() / 4 + 0.5).rounded(.down)) | 1
    }

    /// `bitmap` blurred with standard deviation `sigma` pixels, as a new bitmap (the source is not touched); the
    /// source itself when `sigma` gives a box of one pixel. Memory: the copy and one row (or column) of sums.
    package static func blurred(_ bitmap: Bitmap, sigma: Double) throws(DarkroomImageError) -> Bitmap {
        let size = boxSize(sigma: sigma)
        guard size > 1, bitmap.width > 0, bitmap.height > 0 else { return bitmap }
        let out = try Bitmap.allocateOnHeap(
            width: bitmap.width, height: bitmap.height, format: bitmap.format, isOpaque: bitmap.isOpaque)
        let rowBytes = bitmap.width * bitmap.format.bytesPerPixel
        for y in 0..<bitmap.height { out.row(y).copyMemory(from: bitmap.row(y), byteCount: rowBytes) }
        for _ in 0..<3 { try horizontal(out, radius: size / 2) }
        let window = try Bitmap.allocateOnHeap(
            width: bitmap.width, height: bitmap.height, format: bitmap.format, isOpaque: bitmap.isOpaque)
        for _ in 0..<3 { try vertical(out, radius: size / 2, scratch: window) }
        return out
    }

    /// One box pass along each row, in place: each sample becomes the rounded mean of the 2r + 1 samples around
    /// it (border samples repeated).
    static func horizontal(_ bitmap: Bitmap, radius r: Int) throws(DarkroomImageError) {
        let width = bitmap.width
        let channels = bitmap.format.bytesPerPixel
        let line = try ScratchBuffer<UInt8>(count: width * channels, zeroed: false)
        let window = UInt32(2 * r + 1)
        for y in 0..<bitmap.height {
            let row = bitmap.row(y).assumingMemoryBound(to: UInt8.self)
            line.pointer.update(from: row, count: width * channels)
            let source = line.pointer
            for c in 0..<channels {
                func at(_ x: Int) -> UInt32 { UInt32(source[min(max(x, 0), width - 1) * channels + c]) }
                var sum: UInt32 = 0
                for x in -r...r { sum += at(x) }
                for x in 0..<width {
                    row[x * channels + c] = UInt8((sum + window / 2) / window)
                    sum += at(x + r + 1)
                    sum -= at(x - r)
                }
            }
        }
    }

    /// One box pass down each column, in place, keeping one row of running sums. The rows the window needs are
    /// overwritten as the pass goes down, so the window reads a copy in `scratch` (a bitmap of the same shape).
    static func vertical(_ bitmap: Bitmap, radius r: Int, scratch copy: Bitmap) throws(DarkroomImageError) {
        let height = bitmap.height
        let samples = bitmap.width * bitmap.format.bytesPerPixel
        let sums = try ScratchBuffer<UInt32>(count: samples)
        for y in 0..<height { copy.row(y).copyMemory(from: bitmap.row(y), byteCount: samples) }
        func row(_ y: Int) -> UnsafePointer<UInt8> {
            UnsafePointer(copy.row(min(max(y, 0), height - 1)).assumingMemoryBound(to: UInt8.self))
        }
        let window = UInt32(2 * r + 1)
        for y in -r...r {
            let source = row(y)
            for i in 0..<samples { sums.pointer[i] += UInt32(source[i]) }
        }
        for y in 0..<height {
            let target = bitmap.row(y).assumingMemoryBound(to: UInt8.self)
            let entering = row(y + r + 1)
            let leaving = row(y - r)
            for i in 0..<samples {
                target[i] = UInt8((sums.pointer[i] + window / 2) / window)
                sums.pointer[i] = sums.pointer[i] + UInt32(entering[i]) - UInt32(leaving[i])
            }
        }
    }
}
