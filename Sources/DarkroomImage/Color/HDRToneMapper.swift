import Foundation

/// Turns PQ or HLG pixels into SDR sRGB: light from the signal, the BT.2390 roll-off above SDR white, the source's
/// primaries to BT.709 in linear light with out-of-gamut colours pulled towards their own luminance, then the sRGB
/// curve.
///
/// - Reference white (203 nits, BT.2408) becomes SDR white: an SDR photo carried in PQ or HLG comes back as it was.
/// - The roll-off runs on each pixel's largest component, and the pixel's three components are scaled together, so
///   a highlight keeps its hue and saturation instead of bleaching to white channel by channel.
/// - Out-of-gamut colours (BT.2020 greens, say) are desaturated towards their BT.709 luminance just enough to fit,
///   along the line to white, which keeps the hue.
///
/// The curves are tabulated once per mapper (a few thousand entries each); the per-pixel work is table look-ups, a
/// 3 × 3 matrix and a few comparisons. Built for one image's reduced pixels, never shared between threads.
struct HDRToneMapper {
    let transfer: HDRTransfer
    /// The brightest light in the content, nits: where the roll-off reaches the target's peak.
    private(set) var sourcePeak: Double
    /// The brightest light the result may hold, nits: SDR white (203) for an SDR image, more for an HDR display.
    let targetPeak: Double
    /// Source primaries (linear) to BT.709 (linear), row-major.
    private let matrix: [Float]
    /// Source luminance weights (the matrix's middle row to XYZ), for HLG's OOTF.
    private let luminance: SIMD3<Float>
    /// Signal (0…1, `signalSteps` + 1 entries) to light: nits for PQ, relative scene light for HLG.
    private let signalTable: [Float]
    /// Largest component's light (0…sourcePeak nits, `lightSteps` + 1 entries) to the roll-off's gain, relative to
    /// SDR white.
    private var gainTable: [Float]
    /// Linear light (0…1, `encodeSteps` + 1 entries) to an sRGB byte.
    private let encodeTable: [UInt8]
    /// HLG's OOTF: the display peak and system gamma it renders for.
    private let hlgPeak = Float(HDRTransfer.hlgNominalPeakNits)
    private let hlgGamma = Float(HDRTransfer.hlgSystemGamma(peak: HDRTransfer.hlgNominalPeakNits))

    static let signalSteps = 4096
    static let lightSteps = 4096
    static let encodeSteps = 16384

    /// - Parameters:
    ///   - transfer: PQ or HLG.
    ///   - primaries: a CICP colour-primaries code with a D65 white (1 BT.709, 9 BT.2020, 12 Display P3, …).
    ///   - sourcePeak: the content's brightest light, nits, as measured or as its metadata says; for HLG the
    ///     display peak it is rendered for (1,000 nits by default).
    ///   - targetPeak: the brightest light the result may hold, nits: SDR white by default.
    /// - Returns: nil when the primaries are unknown or have another white point.
    init?(
        transfer: HDRTransfer, primaries: Int, sourcePeak: Double,
        targetPeak: Double = HDRTransfer.referenceWhiteNits
    ) {
        guard Self.supports(primaries: primaries), let (white, rgb) = ColorTransformBuilder.cicpPrimaries(primaries),
            let source = Matrix3.rgbToXYZ(white: white, primaries: rgb),
            let bt709 = Matrix3.rgbToXYZ(white: white, primaries: ((0.640, 0.330), (0.300, 0.600), (0.150, 0.060))),
            let toBT709 = Matrix3.inverse(bt709)
        else { return nil }
        self.transfer = transfer
        self.sourcePeak = max(sourcePeak, HDRTransfer.referenceWhiteNits)
        self.targetPeak = targetPeak
        matrix = Matrix3.multiply(toBT709, source).map { Float($0) }
        luminance = SIMD3(Float(source[3]), Float(source[4]), Float(source[5]))
        signalTable = (0...Self.signalSteps).map { i in
            let v = Double(i) / Double(Self.signalSteps)
            return Float(transfer == .pq ? HDRTransfer.pqToNits(v) : HDRTransfer.hlgToScene(v))
        }
        gainTable = Self.gains(sourcePeak: self.sourcePeak, targetPeak: targetPeak)
        encodeTable = (0...Self.encodeSteps).map { i in
            let v = SRGBTransfer.fromLinear(Double(i) / Double(Self.encodeSteps))
            return UInt8(min(255, max(0, (v * 255).rounded())))
        }
    }

    /// Whether a CICP colour-primaries code is one the mapper converts: known, with a D65 white. A table look-up:
    /// the check for callers deciding whether an image will be tone-mapped.
    static func supports(primaries: Int) -> Bool {
        guard let (white, _) = ColorTransformBuilder.cicpPrimaries(primaries) else { return false }
        return abs(white.0 - 0.3127) < 1e-3 && abs(white.1 - 0.3290) < 1e-3
    }

    /// The same mapper rolling off from another source peak: only the gain table is rebuilt (the signal and
    /// encoding tables are shared, copy-on-write).
    func withSourcePeak(_ peak: Double) -> HDRToneMapper {
        var copy = self
        copy.sourcePeak = max(peak, HDRTransfer.referenceWhiteNits)
        copy.gainTable = Self.gains(sourcePeak: copy.sourcePeak, targetPeak: targetPeak)
        return copy
    }

    /// The roll-off as a gain on the largest component's light (0…`sourcePeak` nits), relative to SDR white.
    private static func gains(sourcePeak peak: Double, targetPeak: Double) -> [Float] {
        let sdrWhite = HDRTransfer.referenceWhiteNits
        return (0...lightSteps).map { i in
            let nits = peak * Double(i) / Double(lightSteps)
            guard nits > 0 else { return Float(1 / sdrWhite) }
            return Float(HDRTransfer.bt2390(nits, sourcePeak: peak, targetPeak: targetPeak) / nits / sdrWhite)
        }
    }

    /// Light of one pixel in the source primaries, nits, from its signal (each 0…1). HLG goes through the BT.2100
    /// OOTF for a display of ``HDRTransfer/hlgNominalPeakNits``.
    @inline(__always)
    func light(_ r: Float, _ g: Float, _ b: Float) -> SIMD3<Float> { light(SIMD3(r, g, b)) }

    /// ``light(_:_:_:)`` of a pixel's three signal values at once: the three look-ups share their arithmetic.
    @inline(__always)
    func light(_ signal: SIMD3<Float>) -> SIMD3<Float> {
        transfer == .hlg ? displayLight(ofScene: sceneLight(signal)) : sceneLight(signal)
    }

    /// HLG's OOTF: relative scene light (0…1, the source primaries) to the light, nits, BT.2100's reference display
    /// of ``HDRTransfer/hlgNominalPeakNits`` shows.
    @inline(__always)
    func displayLight(ofScene scene: SIMD3<Float>) -> SIMD3<Float> {
        let ys = max((scene * luminance).sum(), 0)
        return scene * (ys > 0 ? hlgPeak * powf(ys, hlgGamma - 1) : hlgPeak)
    }

    /// A pixel's signal through the transfer's table alone: nits for PQ, relative scene light (0…1, before the
    /// OOTF) for HLG.
    @inline(__always)
    func sceneLight(_ signal: SIMD3<Float>) -> SIMD3<Float> {
        let position = signal.clamped(lowerBound: .zero, upperBound: .one) * Float(Self.signalSteps)
        let last = Self.signalSteps - 1
        // (scalar conversions: the generic vector one is not specialized, and costs more than the rest together)
        let (i, j, k) = (min(Int(position.x), last), min(Int(position.y), last), min(Int(position.z), last))
        let fraction = position - SIMD3(Float(i), Float(j), Float(k))
        // (every index + 1 ≤ signalSteps, the table's last entry: the reads need no bounds checks)
        return signalTable.withUnsafeBufferPointer { t in
            let low = SIMD3(t[i], t[j], t[k])
            return low + fraction * (SIMD3(t[i + 1], t[j + 1], t[k + 1]) - low)
        }
    }

    /// A pixel's light (nits, the source primaries) rolled off to the target peak, relative to SDR white: the
    /// three components scaled together by the BT.2390 gain of the largest.
    @inline(__always)
    func rolledOff(_ light: SIMD3<Float>) -> SIMD3<Float> {
        let m = max(light.x, max(light.y, light.z))
        return light * lookUp(gainTable, m / Float(sourcePeak), steps: Self.lightSteps)
    }

    /// The sRGB bytes (red, green, blue) for a pixel's light in the source primaries, nits, with an SDR target.
    @inline(__always)
    func encode(_ light: SIMD3<Float>) -> (UInt8, UInt8, UInt8) {
        let l = rolledOff(light)
        var c = SIMD3(
            matrix[0] * l.x + matrix[1] * l.y + matrix[2] * l.z,
            matrix[3] * l.x + matrix[4] * l.y + matrix[5] * l.z,
            matrix[6] * l.x + matrix[7] * l.y + matrix[8] * l.z)
        if c.min() < 0 || c.max() > 1 { c = Self.fitGamut(c) }
        return (
            encodeTable[Int(c.x * Float(Self.encodeSteps) + 0.5)],
            encodeTable[Int(c.y * Float(Self.encodeSteps) + 0.5)],
            encodeTable[Int(c.z * Float(Self.encodeSteps) + 0.5)]
        )
    }

    /// Pulls a linear BT.709 colour towards its luminance until every component is in 0…1 (luminance above 1 is
    /// white).
    static func fitGamut(_ c: SIMD3<Float>) -> SIMD3<Float> {
        let y = min(max(0.2126 * c.x + 0.7152 * c.y + 0.0722 * c.z, 0), 1)
        var t: Float = 1
        for i in 0..<3 {
            if c[i] > 1 { t = min(t, (1 - y) / (c[i] - y)) }
            if c[i] < 0 { t = min(t, y / (y - c[i])) }
        }
        let fitted = SIMD3(repeating: y) + max(t, 0) * (c - SIMD3(repeating: y))
        return fitted.clamped(lowerBound: SIMD3(repeating: 0), upperBound: SIMD3(repeating: 1))
    }

    @inline(__always)
    private func lookUp(_ table: [Float], _ x: Float, steps: Int) -> Float {
        let p = min(max(x, 0), 1) * Float(steps)
        let i = min(Int(p), steps - 1)
        let f = p - Float(i)
        // (`i + 1` ≤ steps: every table has steps + 1 entries, so the reads need no bounds checks)
        return table.withUnsafeBufferPointer { t in t[i] + f * (t[i + 1] - t[i]) }
    }
}
