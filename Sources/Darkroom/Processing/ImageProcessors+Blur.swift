import DarkroomImage
import Foundation

extension ImageProcessors {
    /// A Gaussian blur of standard deviation `sigma` pixels (imgproxy's `blur`, thumbor's `blur` filter): separable,
    /// the kernel cut at 3σ, edges extended by repeating the border pixel, alpha respected (premultiplied BGRA).
    /// Cost: 2 × (6σ + 1) multiply-adds per channel per pixel, on the thumbnail; one float copy of the image.
    public struct GaussianBlur: ImageProcessing, Hashable {
        /// Standard deviation in pixels (> 0; a blur of ≤ 0 does nothing).
        public var sigma: Double

        /// Creates a blur of `sigma` pixels.
        public init(sigma: Double) { self.sigma = sigma }

        /// Keys the caches: the processor and its parameters.
        public var identifier: String { "darkroom.blur(\(sigma))" }

        /// Applies the blur; never mutates `source`. Cost: see the type.
        public func process(_ source: Bitmap) throws -> Bitmap {
            guard sigma > 0 else { return source }
            let planes = try FloatPlanes(source)
            planes.blur(sigma: sigma)
            return try planes.bitmap(like: source)
        }
    }

    /// Sharpening by unsharp mask: each pixel plus `amount` × its difference from a Gaussian blur of `sigma` pixels
    /// (imgproxy's `sharpen`, thumbor's `sharpen` filter), clamped. Cost: a ``GaussianBlur`` plus one pass.
    public struct Sharpen: ImageProcessing, Hashable {
        /// The blur's standard deviation in pixels (> 0; ≤ 0 does nothing).
        public var sigma: Double
        /// How much of the detail is added back (1 doubles it). Default 1.
        public var amount: Double

        /// Creates an unsharp mask of `sigma` pixels and `amount`.
        public init(sigma: Double, amount: Double = 1) {
            self.sigma = sigma
            self.amount = amount
        }

        /// Keys the caches: the processor and its parameters.
        public var identifier: String { "darkroom.sharpen(\(sigma),\(amount))" }

        /// Applies the sharpening; never mutates `source`. Cost: see the type.
        public func process(_ source: Bitmap) throws -> Bitmap {
            guard sigma > 0, amount != 0 else { return source }
            let original = try FloatPlanes(source)
            let blurred = try FloatPlanes(source)
            blurred.blur(sigma: sigma)
            for i in 0..<original.values.count {
                original.values[i] += Float(amount) * (original.values[i] - blurred.values[i])
            }
            return try original.bitmap(like: source)
        }
    }
}

/// An image as floats (premultiplied BGRA, or gray), for filters that need more than 8 bits between passes.
final class FloatPlanes {
    let width: Int
    let height: Int
    let channels: Int
    var values: [Float]

    init(_ source: Bitmap) throws {
        let input =
            source.format == .gray8 || source.format == .bgra8Premultiplied
            ? source : try source.converted(to: .bgra8Premultiplied)
        width = source.width
        height = source.height
        channels = input.format.bytesPerPixel
        values = [Float](repeating: 0, count: width * height * channels)
        for y in 0..<height {
            let row = input.row(y).assumingMemoryBound(to: UInt8.self)
            for i in 0..<(width * channels) { values[y * width * channels + i] = Float(row[i]) }
        }
    }

    /// Blurs in place: horizontally, then vertically, with a normalised kernel cut at 3σ and edge pixels repeated.
    func blur(sigma: Double) {
        let radius = max(1, Int((3 * sigma).rounded(.up)))
        var kernel: [Float] = (-radius...radius).map { offset in
            let distance = Double(offset * offset)
            return Float(exp(-distance / (2 * sigma * sigma)))
        }
        let total = kernel.reduce(0, +)
        kernel = kernel.map { $0 / total }
        var scratch = values
        let rowLength = width * channels
        for y in 0..<height {
            for x in 0..<width {
                for c in 0..<channels {
                    var sum: Float = 0
                    for k in -radius...radius {
                        let sx = min(max(x + k, 0), width - 1)
                        sum += kernel[k + radius] * values[y * rowLength + sx * channels + c]
                    }
                    scratch[y * rowLength + x * channels + c] = sum
                }
            }
        }
        for y in 0..<height {
            for i in 0..<rowLength {
                var sum: Float = 0
                for k in -radius...radius {
                    let sy = min(max(y + k, 0), height - 1)
                    sum += kernel[k + radius] * scratch[sy * rowLength + i]
                }
                values[y * rowLength + i] = sum
            }
        }
    }

    /// Rounds back to 8 bits in `source`'s working format; colour is clamped to alpha (premultiplied stays valid).
    func bitmap(like source: Bitmap) throws -> Bitmap {
        let format: PixelFormat = channels == 1 ? .gray8 : .bgra8Premultiplied
        let out = try Bitmap(width: width, height: height, format: format, isOpaque: source.isOpaque)
        for y in 0..<height {
            let row = out.row(y).assumingMemoryBound(to: UInt8.self)
            for x in 0..<width {
                let base = (y * width + x) * channels
                let alpha = channels == 4 ? min(max(values[base + 3].rounded(), 0), 255) : 255
                for c in 0..<channels {
                    let limit = channels == 4 && c < 3 && !source.isOpaque ? alpha : 255
                    row[x * channels + c] = UInt8(min(max(values[base + c].rounded(), 0), limit))
                }
            }
        }
        return out
    }
}
