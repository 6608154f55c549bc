import DarkroomImage

extension ImageProcessors {
    /// Makes the corners transparent along quarter circles of `radius` pixels, antialiased by coverage.
    /// The result is premultiplied BGRA (converted first when the input is another format). Cost: one
    /// conversion when needed plus O(radius²) pixel writes.
    public struct RoundedCorners: ImageProcessing, Hashable {
        /// Corner radius in pixels (clamped to half the shorter side).
        public var radius: Int

        /// Creates rounded corners of `radius` pixels.
        public init(radius: Int) { self.radius = radius }

        /// Keys the caches: the processor and its parameters.
        public var identifier: String { "darkroom.rounded(\(radius))" }

        /// Applies the rounded corners; never mutates `source` (it may be shared with the memory cache). Cost: a conversion when needed plus O(radius²).
        public func process(_ source: Bitmap) throws -> Bitmap {
            let r = min(radius, source.width / 2, source.height / 2)
            guard r > 0 else { return source }
            // Always work on a private copy: the input may be shared with the memory cache.
            let copy = try Bitmap(
                width: source.width, height: source.height, format: .bgra8Premultiplied, isOpaque: false)
            let converted =
                source.format == .bgra8Premultiplied ? source : try source.converted(to: .bgra8Premultiplied)
            for y in 0..<source.height {
                copy.row(y).copyMemory(from: converted.row(y), byteCount: source.width * 4)
            }
            let rf = Double(r)
            for cy in 0..<r {
                for cx in 0..<r {
                    // Coverage of pixel (cx, cy) in the top-left corner by the disc centred at (r, r), 4×4 samples.
                    var inside = 0
                    for sy in 0..<4 {
                        for sx in 0..<4 {
                            let px = Double(cx) + (Double(sx) + 0.5) / 4
                            let py = Double(cy) + (Double(sy) + 0.5) / 4
                            let dx = rf - px
                            let dy = rf - py
                            if dx * dx + dy * dy <= rf * rf { inside += 1 }
                        }
                    }
                    if inside == 16 { continue }
                    let scale = UInt32(inside * 255 / 16)
                    for (x, y) in [
                        (cx, cy), (source.width - 1 - cx, cy), (cx, source.height - 1 - cy),
                        (source.width - 1 - cx, source.height - 1 - cy),
                    ] {
                        let p = (copy.row(y) + x * 4).assumingMemoryBound(to: UInt8.self)
                        for c in 0..<4 { p[c] = UInt8((UInt32(p[c]) * scale + 127) / 255) }
                    }
                }
            }
            return copy
        }
    }
}
