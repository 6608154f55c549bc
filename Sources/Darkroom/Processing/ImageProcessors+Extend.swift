import DarkroomImage

extension ImageProcessors {
    /// Pads an image smaller than `width × height` up to exactly that size with a colour, placed by a ``Gravity``
    /// (imgproxy's `extend`, thumbor's `fill` filter on `fit-in`). A side already as large stays as it is. Cost: one
    /// copy (none when the image already fills the box).
    public struct Extend: ImageProcessing, Hashable {
        /// The box.
        public var width: Int, height: Int
        /// Where the image sits in the box.
        public var gravity: Gravity
        /// The colour of the added area (transparent areas make the result non-opaque).
        public var color: RGBAColor

        /// Creates an extension to `width × height`.
        public init(width: Int, height: Int, gravity: Gravity = .center(), color: RGBAColor) {
            (self.width, self.height, self.gravity, self.color) = (width, height, gravity, color)
        }

        /// Keys the caches: the processor and its parameters.
        public var identifier: String { "darkroom.extend(\(width),\(height),\(gravity.key),\(color.hex))" }

        /// Applies the extension; never mutates `source`.
        public func process(_ source: Bitmap) throws -> Bitmap {
            let w = max(width, source.width)
            let h = max(height, source.height)
            if w == source.width && h == source.height { return source }
            // The image is the "crop" of the box: the gravity's origin of an image-sized window in a box-sized one.
            let (x, y) = gravity.origin(cropWidth: source.width, cropHeight: source.height, width: w, height: h)
            return try Pad(
                top: y, right: w - source.width - x, bottom: h - source.height - y, left: x, color: color
            ).process(source)
        }
    }

    /// Converts to gray (Rec. 601 luma, as libvips and Pillow), keeping alpha. Cost: one pass over the pixels.
    public struct Grayscale: ImageProcessing, Hashable {
        /// Creates the conversion.
        public init() {}

        /// Keys the caches.
        public var identifier: String { "darkroom.grayscale" }

        /// Applies the conversion; never mutates `source`.
        public func process(_ source: Bitmap) throws -> Bitmap {
            if source.format == .gray8 { return source }
            let input = source.format == .bgra8Premultiplied ? source : try source.converted(to: .bgra8Premultiplied)
            let out = try Bitmap.processingOutput(
                width: source.width, height: source.height, format: .bgra8Premultiplied, isOpaque: source.isOpaque)
            for y in 0..<source.height {
                let s = input.row(y).assumingMemoryBound(to: UInt8.self)
                let d = out.row(y).assumingMemoryBound(to: UInt8.self)
                for x in 0..<source.width {
                    let (b, g, r) = (UInt32(s[4 * x]), UInt32(s[4 * x + 1]), UInt32(s[4 * x + 2]))
                    // ITU-R 601-2 luma in 16-bit fixed point: L = 0.299 R + 0.587 G + 0.114 B (premultiplied
                    // colour stays premultiplied: the weights sum to 1)
                    let l = UInt8((r * 19595 + g * 38470 + b * 7471 + 32768) >> 16)
                    (d[4 * x], d[4 * x + 1], d[4 * x + 2], d[4 * x + 3]) = (l, l, l, s[4 * x + 3])
                }
            }
            return out
        }
    }

    /// Cuts away a border of one colour: the colour of the top-left pixel, within `tolerance` per channel
    /// (thumbor's `trim`). Cost: one pass to find the box, one copy of it (none when nothing is trimmed).
    public struct Trim: ImageProcessing, Hashable {
        /// Largest per-channel difference still counted as the border colour (0…255).
        public var tolerance: Int

        /// Creates a trim.
        public init(tolerance: Int = 0) { self.tolerance = max(0, min(255, tolerance)) }

        /// Keys the caches.
        public var identifier: String { "darkroom.trim(\(tolerance))" }

        /// Applies the trim; never mutates `source`. An image all of the border colour stays whole.
        public func process(_ source: Bitmap) throws -> Bitmap {
            let input = source.format == .bgra8Premultiplied ? source : try source.converted(to: .bgra8Premultiplied)
            let first = input.row(0).assumingMemoryBound(to: UInt8.self)
            let border = (0..<4).map { Int(first[$0]) }
            var (minX, minY, maxX, maxY) = (Int.max, Int.max, -1, -1)
            for y in 0..<input.height {
                let row = input.row(y).assumingMemoryBound(to: UInt8.self)
                for x in 0..<input.width {
                    var differs = false
                    for c in 0..<4 where abs(Int(row[4 * x + c]) - border[c]) > tolerance { differs = true }
                    if differs {
                        (minX, maxX) = (min(minX, x), max(maxX, x))
                        (minY, maxY) = (min(minY, y), max(maxY, y))
                    }
                }
            }
            guard maxX >= 0 else { return source }
            return try Crop(x: minX, y: minY, width: maxX - minX + 1, height: maxY - minY + 1).process(source)
        }
    }
}
