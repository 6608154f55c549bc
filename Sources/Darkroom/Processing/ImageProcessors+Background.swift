import DarkroomImage
import DarkroomSupport

/// An sRGB colour with alpha, 0–255 per channel (straight alpha).
public struct RGBAColor: Sendable, Hashable {
    /// Red, green, blue and alpha.
    public var red: UInt8, green: UInt8, blue: UInt8, alpha: UInt8

    /// Creates a colour; alpha defaults to opaque.
    public init(red: UInt8, green: UInt8, blue: UInt8, alpha: UInt8 = 255) {
        (self.red, self.green, self.blue, self.alpha) = (red, green, blue, alpha)
    }

    /// `rrggbb` or `rrggbbaa` in hex, as the identifier writes it.
    var hex: String {
        Hex.encode([red, green, blue, alpha])
    }

    /// The colour as one premultiplied BGRA pixel.
    var premultipliedBGRA: [UInt8] {
        let a = UInt32(alpha)
        return [blue, green, red].map { UInt8((UInt32($0) * a + 127) / 255) } + [alpha]
    }
}

extension ImageProcessors {
    /// Composites the image over an opaque colour, leaving no transparency (what a JPEG needs; imgproxy's
    /// `background`, thumbor's `fill`). Opaque inputs pass through. Cost: one pass over the pixels.
    public struct Flatten: ImageProcessing, Hashable {
        /// The colour under the image (its alpha is ignored).
        public var background: RGBAColor

        /// Creates a flattening over `background`.
        public init(background: RGBAColor) { self.background = background }

        /// Keys the caches: the processor and its parameters.
        public var identifier: String { "darkroom.flatten(\(background.hex))" }

        /// Applies the flattening; never mutates `source`. Cost: a conversion when needed plus one pass.
        public func process(_ source: Bitmap) throws -> Bitmap {
            guard !source.isOpaque, source.format.hasAlpha else { return source }
            let input = source.format == .bgra8Premultiplied ? source : try source.converted(to: .bgra8Premultiplied)
            let out = try Bitmap.processingOutput(
                width: source.width, height: source.height, format: .bgra8Premultiplied, isOpaque: true)
            let under = [background.blue, background.green, background.red].map(UInt32.init)
            for y in 0..<source.height {
                let s = input.row(y).assumingMemoryBound(to: UInt8.self)
                let d = out.row(y).assumingMemoryBound(to: UInt8.self)
                for x in 0..<source.width {
                    let rest = 255 - UInt32(s[4 * x + 3])
                    for c in 0..<3 {
                        d[4 * x + c] = UInt8(min(255, UInt32(s[4 * x + c]) + (under[c] * rest + 127) / 255))
                    }
                    d[4 * x + 3] = 255
                }
            }
            return out
        }
    }

    /// Adds borders of a colour around the image (imgproxy's `padding`; the canvas `extend` grows into). Cost: one
    /// copy of the image into the larger canvas.
    public struct Pad: ImageProcessing, Hashable {
        /// Border widths in pixels (each ≥ 0).
        public var top: Int, right: Int, bottom: Int, left: Int
        /// The border's colour (transparent borders make the result non-opaque).
        public var color: RGBAColor

        /// Creates borders of the given widths and colour.
        public init(top: Int, right: Int, bottom: Int, left: Int, color: RGBAColor) {
            (self.top, self.right, self.bottom, self.left, self.color) = (top, right, bottom, left, color)
        }

        /// Keys the caches: the processor and its parameters.
        public var identifier: String { "darkroom.pad(\(top),\(right),\(bottom),\(left),\(color.hex))" }

        /// Applies the borders; never mutates `source`. Cost: a conversion when needed plus one copy.
        public func process(_ source: Bitmap) throws -> Bitmap {
            guard top >= 0, right >= 0, bottom >= 0, left >= 0 else {
                throw DarkroomError(
                    .processingFailed, "padding must not be negative: \(top),\(right),\(bottom),\(left)")
            }
            if top == 0, right == 0, bottom == 0, left == 0 { return source }
            let input = source.format == .bgra8Premultiplied ? source : try source.converted(to: .bgra8Premultiplied)
            let width = source.width + left + right
            let height = source.height + top + bottom
            let out = try Bitmap.processingOutput(
                width: width, height: height, format: .bgra8Premultiplied,
                isOpaque: source.isOpaque && color.alpha == 255)
            let fill = color.premultipliedBGRA
            for y in 0..<height {
                let d = out.row(y).assumingMemoryBound(to: UInt8.self)
                for x in 0..<width { for c in 0..<4 { d[4 * x + c] = fill[c] } }
                if y >= top, y < top + source.height {
                    (out.row(y) + left * 4).copyMemory(from: input.row(y - top), byteCount: source.width * 4)
                }
            }
            return out
        }
    }
}
