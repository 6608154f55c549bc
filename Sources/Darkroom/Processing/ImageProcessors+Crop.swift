import DarkroomImage

extension ImageProcessors {
    /// Cuts out a rectangle (clamped to the image). Cost: one copy of the rectangle's rows.
    public struct Crop: ImageProcessing, Hashable {
        /// Left edge in pixels.
        public var x: Int
        /// Top edge in pixels.
        public var y: Int
        /// Width in pixels (> 0).
        public var width: Int
        /// Height in pixels (> 0).
        public var height: Int

        /// Creates a crop of the rectangle at (`x`, `y`) sized `width × height`.
        public init(x: Int, y: Int, width: Int, height: Int) {
            self.x = x
            self.y = y
            self.width = width
            self.height = height
        }

        /// Keys the caches: the processor and its parameters.
        public var identifier: String { "darkroom.crop(\(x),\(y),\(width),\(height))" }

        /// Applies the crop; never mutates `source` (it may be shared with the memory cache). Cost: one copy of the rectangle.
        public func process(_ source: Bitmap) throws -> Bitmap {
            let x0 = max(0, x)
            let y0 = max(0, y)
            let x1 = min(source.width, x + width)
            let y1 = min(source.height, y + height)
            guard x1 > x0, y1 > y0 else {
                throw DarkroomError(
                    .processingFailed,
                    "crop (\(x),\(y),\(width),\(height)) lies outside the \(source.width)×\(source.height) image")
            }
            if x0 == 0, y0 == 0, x1 == source.width, y1 == source.height { return source }
            let out = try Bitmap.processingOutput(
                width: x1 - x0, height: y1 - y0, format: source.format, isOpaque: source.isOpaque)
            let bpp = source.format.bytesPerPixel
            for row in y0..<y1 {
                out.row(row - y0).copyMemory(from: source.row(row) + x0 * bpp, byteCount: (x1 - x0) * bpp)
            }
            return out
        }
    }
}
