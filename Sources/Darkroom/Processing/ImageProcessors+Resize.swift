import DarkroomImage

extension ImageProcessors {
    /// Resizes a decoded bitmap to exactly `width × height` by area averaging (each output pixel is the mean of
    /// the source pixels it covers; nearest pixel when enlarging). Cost: O(source pixels + output pixels), one
    /// output allocation. Prefer ``ImageRequest/geometry`` for thumbnails: it shrinks while decoding, which is far
    /// cheaper; this processor is for a second, exact size after a crop.
    public struct Resize: ImageProcessing, Hashable {
        /// Output width in pixels (> 0).
        public var width: Int
        /// Output height in pixels (> 0).
        public var height: Int

        /// Creates a resize to `width × height`.
        public init(width: Int, height: Int) {
            self.width = width
            self.height = height
        }

        /// Keys the caches: the processor and its parameters.
        public var identifier: String { "darkroom.resize(\(width)x\(height))" }

        /// Applies the resize; never mutates `source` (it may be shared with the memory cache). Cost: O(source + output pixels).
        public func process(_ source: Bitmap) throws -> Bitmap {
            guard width > 0, height > 0 else {
                throw DarkroomError(.processingFailed, "resize to \(width)×\(height): size must be positive")
            }
            if width == source.width && height == source.height { return source }
            let out = try Bitmap.processingOutput(
                width: width, height: height, format: source.format, isOpaque: source.isOpaque)
            let bpp = source.format.bytesPerPixel
            // Column spans: output x covers source columns [x0, x1).
            let xs = (0...width).map { min(source.width, $0 * source.width / width) }
            var sums = [UInt32](repeating: 0, count: width * bpp)
            for y in 0..<height {
                var y0 = y * source.height / height
                var y1 = (y + 1) * source.height / height
                if y1 <= y0 { y1 = y0 + 1 }
                y0 = min(y0, source.height - 1)
                y1 = min(y1, source.height)
                for i in sums.indices { sums[i] = 0 }
                var count = [UInt32](repeating: 0, count: width)
                for sy in y0..<y1 {
                    let row = source.row(sy).assumingMemoryBound(to: UInt8.self)
                    for x in 0..<width {
                        var x0 = xs[x]
                        var x1 = xs[x + 1]
                        if x1 <= x0 { x1 = x0 + 1 }
                        x0 = min(x0, source.width - 1)
                        x1 = min(x1, source.width)
                        for sx in x0..<x1 {
                            for c in 0..<bpp { sums[x * bpp + c] &+= UInt32(row[sx * bpp + c]) }
                        }
                        count[x] &+= UInt32(x1 - x0)
                    }
                }
                let dst = out.row(y).assumingMemoryBound(to: UInt8.self)
                for x in 0..<width {
                    let n = max(1, count[x])
                    for c in 0..<bpp { dst[x * bpp + c] = UInt8((sums[x * bpp + c] + n / 2) / n) }
                }
            }
            return out
        }
    }
}
