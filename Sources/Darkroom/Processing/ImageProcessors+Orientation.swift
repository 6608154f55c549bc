import DarkroomImage

extension ImageProcessors {
    /// Turns the image by quarter turns clockwise, then mirrors it (imgproxy's `rotate` and `flip`, thumbor's
    /// negative sizes). Cost: one copy per step taken (none for 0 turns and no flip).
    public struct Rotate: ImageProcessing, Hashable {
        /// Quarter turns clockwise, taken modulo 4 (negative turns counter-clockwise).
        public var quarterTurns: Int
        /// Mirror left–right after turning.
        public var flipsHorizontally: Bool
        /// Mirror top–bottom after turning.
        public var flipsVertically: Bool

        /// Creates a rotation by `quarterTurns` × 90° clockwise, then the flips asked for.
        public init(quarterTurns: Int = 0, flipsHorizontally: Bool = false, flipsVertically: Bool = false) {
            self.quarterTurns = quarterTurns
            self.flipsHorizontally = flipsHorizontally
            self.flipsVertically = flipsVertically
        }

        /// Keys the caches: the processor and its parameters (normalised, so equal operations share a key).
        public var identifier: String {
            "darkroom.rotate(\(((quarterTurns % 4) + 4) % 4),\(flipsHorizontally ? "h" : "")\(flipsVertically ? "v" : ""))"
        }

        /// Applies the turn and flips; never mutates `source`. Cost: at most two copies of the image.
        public func process(_ source: Bitmap) throws -> Bitmap {
            // `applying(o)` performs the transform that brings an image stored with orientation `o` upright.
            let turn: ExifOrientation = [.up, .right, .down, .left][((quarterTurns % 4) + 4) % 4]
            let flip: ExifOrientation? =
                switch (flipsHorizontally, flipsVertically) {
                case (false, false): nil
                case (true, false): .upMirrored
                case (false, true): .downMirrored
                case (true, true): .down
                }
            var out = try source.applying(turn)
            if let flip { out = try out.applying(flip) }
            return out
        }
    }
}
