import Foundation

extension ImageDecoder {
    /// Decodes a gain-map image's HDR rendition for a display with `displayHeadroom` (log2 of its peak over SDR
    /// white): the base image decoded to the output size and the gain map to at most it (a smaller map is
    /// upsampled while applied, as ``GainMapApplier`` says), then per pixel
    /// `(base + baseOffset) · 2^(weight · log2gain) − alternateOffset`, where `log2gain` interpolates GainMapMin…Max
    /// by the gain-map sample raised to `1/gamma` (ISO 21496-1) — or, for an iPhone HEIC, is
    /// `log2(1 + (headroom − 1) · sRGB_EOTF(sample))` (``AppleHDRHeadroom``). Oriented as the options say, the map
    /// turned with the base.
    ///
    /// Cost: two decodes at the output size and one pass over its pixels with table look-ups; memory, the two
    /// 8-bit bitmaps and 12 bytes per output pixel.
    ///
    /// - Throws: ``DarkroomImageError`` `.unsupportedFeature` when the image has no usable gain map (the
    ///   probe's warning says why), or what decoding either image throws.
    /// - Parameter source: the gain map, when the caller has located it already; nil locates it.
    func decodeHDRRendition(
        _ bytes: UnsafeRawBufferPointer, source: GainMapSource? = nil, options: DecodeOptions,
        displayHeadroom: Double
    ) throws(DarkroomImageError) -> HDRRendition {
        guard let source = source ?? GainMapSource.locate(in: bytes, limits: options.limits) else {
            throw DarkroomImageError(.unsupportedFeature, "the image has no gain map")
        }
        guard let metadata = source.usableMetadata else {
            throw DarkroomImageError(
                .unsupportedFeature,
                "the gain map cannot be applied: \(source.details.warning ?? "it is incomplete")")
        }
        var baseOptions = options
        baseOptions.colorSpace = .original
        baseOptions.geometry.pixelFormat = .exactly(.rgba8)
        let base = try decode(bytes, options: baseOptions)

        // Each side of the map longer than the output's is reduced to it (in stored orientation, then turned as the
        // base was); a shorter side is upsampled while the map is applied, as libultrahdr samples it.
        let (orientation, width, height) = base.storedFrame(options)
        let map = try source.decodeMap(
            bytes, width: min(source.details.width, width), height: min(source.details.height, height),
            limits: options.limits)
        let weight = metadata.weight(displayHeadroom: displayHeadroom)
        let pixels = GainMapApplier(metadata: metadata, weight: weight, curve: source.curve).apply(
            base: base.bitmap, map: try map.applying(orientation))
        return HDRRendition(
            width: base.bitmap.width, height: base.bitmap.height, pixels: pixels,
            primaries: .profile(base.colorProfile), weight: weight)
    }
}
extension DecodedImage {
    /// The orientation `options` turned this image by, and its bitmap's size before that turn: the frame a gain map
    /// is decoded in before it is turned as the base was.
    func storedFrame(_ options: DecodeOptions) -> (orientation: ExifOrientation, width: Int, height: Int) {
        let orientation = options.geometry.appliesOrientation ? probe.orientation : .up
        return orientation.swapsDimensions
            ? (orientation, bitmap.height, bitmap.width) : (orientation, bitmap.width, bitmap.height)
    }
}

/// Applies a gain map to a base image. A map smaller than the base is sampled as libultrahdr samples it: map
/// coordinates `x · mapWidth / width` (sample 0 at pixel 0), and the four nearest samples weighted by inverse
/// distance (Shepard), so that a rendition matches the reference decoder's.
struct GainMapApplier: Sendable {
    /// Base sample (sRGB-coded) → linear light plus the base offset: 256 entries per channel, R then G then B.
    private let baseTable: [Float]
    /// Gain-map value (0…1, in `steps` steps) → linear gain at the weight: `steps + 1` entries per channel.
    private let gainTable: [Float]
    private let alternateOffset: [Float]
    private static let steps = 1024

    /// How a gain-map sample becomes a log2 gain.
    enum Curve {
        /// ISO 21496-1 (and Adobe's `hdrgm`): GainMapMin…Max interpolated by the sample raised to `1/gamma`.
        case iso21496
        /// Apple's: `log2(1 + (headroom − 1) · sRGB_EOTF(sample))`, the headroom `2^gainMapMax`.
        case apple
    }

    init(metadata: GainMapMetadata, weight: Double, curve: Curve = .iso21496) {
        baseTable = (0..<3).flatMap { c in
            SRGBTransfer.linearLevels.map { $0 + Float(metadata.baseOffset[c]) }
        }
        gainTable = (0..<3).flatMap { c in
            (0...Self.steps).map { v in
                let sample = Double(v) / Double(Self.steps)
                let log2Gain: Double
                switch curve {
                case .iso21496:
                    let recovery = pow(sample, 1 / metadata.gamma[c])
                    log2Gain = metadata.gainMapMin[c] + (metadata.gainMapMax[c] - metadata.gainMapMin[c]) * recovery
                case .apple:
                    log2Gain = log2(1 + (exp2(metadata.gainMapMax[c]) - 1) * SRGBTransfer.toLinear(sample))
                }
                return Float(exp2(log2Gain * weight))
            }
        }
        alternateOffset = metadata.alternateOffset.map(Float.init)
    }

    /// Linear RGB of `base` (RGBA8) with `map` (RGBA8, or gray8 for one gain for R, G and B; at most the base's
    /// size) applied.
    func apply(base: Bitmap, map: Bitmap) -> [Float] {
        precondition(map.width <= base.width && map.height <= base.height)
        precondition(map.format == .rgba8 || map.format == .gray8)
        let (pixelStep, channelStep) = map.format == .gray8 ? (1, 0) : (4, 1)
        let columns = Self.samplePositions(count: base.width, mapCount: map.width)
        let rows = Self.samplePositions(count: base.height, mapCount: map.height)
        let steps = Float(Self.steps)
        var out = [Float](repeating: 0, count: base.width * base.height * 3)
        out.withUnsafeMutableBufferPointer { out in
            baseTable.withUnsafeBufferPointer { baseTable in
                gainTable.withUnsafeBufferPointer { gainTable in
                    for y in 0..<base.height {
                        let b = base.row(y).assumingMemoryBound(to: UInt8.self)
                        let row = rows[y]
                        let m0 = map.row(row.lower).assumingMemoryBound(to: UInt8.self)
                        let m1 = map.row(row.upper).assumingMemoryBound(to: UInt8.self)
                        var o = y * base.width * 3
                        for x in 0..<base.width {
                            let column = columns[x]
                            let w = Self.weights(column.fraction, row.fraction)
                            for c in 0..<3 {
                                let i00 = pixelStep * column.lower + channelStep * c
                                let i10 = pixelStep * column.upper + channelStep * c
                                let sample =
                                    (w.0 * Float(m0[i00]) + w.1 * Float(m0[i10]) + w.2 * Float(m1[i00])
                                        + w.3 * Float(m1[i10])) / 255
                                let position = min(max(sample, 0), 1) * steps
                                let index = Int(position)
                                let upper = min(index + 1, Self.steps)
                                let t = position - Float(index)
                                let table = c * (Self.steps + 1)
                                let gain = gainTable[table + index] * (1 - t) + gainTable[table + upper] * t
                                out[o + c] = baseTable[c << 8 | Int(b[4 * x + c])] * gain - alternateOffset[c]
                            }
                            o += 3
                        }
                    }
                }
            }
        }
        return out
    }

    /// For each of `count` output positions, the two map samples around it and how far past the first it lies.
    static func samplePositions(count: Int, mapCount: Int) -> [(lower: Int, upper: Int, fraction: Float)] {
        (0..<count).map { i in
            let position = Double(i) * Double(mapCount) / Double(count)
            let lower = min(Int(position), mapCount - 1)
            return (lower, min(lower + 1, mapCount - 1), Float(position - Double(lower)))
        }
    }

    /// Inverse-distance weights of the four samples around a point `dx`, `dy` past the first, summing to 1; the
    /// sample the point falls on takes all the weight.
    @inline(__always)
    static func weights(_ dx: Float, _ dy: Float) -> (Float, Float, Float, Float) {
        if dx == 0 && dy == 0 { return (1, 0, 0, 0) }
        func inverse(_ x: Float, _ y: Float) -> Float { 1 / (x * x + y * y).squareRoot() }
        let w00 = inverse(dx, dy)
        let w10 = inverse(1 - dx, dy)
        let w01 = inverse(dx, 1 - dy)
        let w11 = inverse(1 - dx, 1 - dy)
        let total = w00 + w10 + w01 + w11
        return (w00 / total, w10 / total, w01 / total, w11 / total)
    }
}
