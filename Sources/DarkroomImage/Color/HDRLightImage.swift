/// What an HDR output's light is reduced for.
struct HDRLightTarget: Sendable, Hashable {
    /// The brightest light the output may hold, nits; brighter content is rolled off by BT.2390. 10,000 (PQ's
    /// ceiling) keeps the content's light.
    var peak: Double = 10_000
    /// Whether an HLG source stays relative scene light (its signal through the inverse OETF, no OOTF), to be coded
    /// in HLG again; otherwise HLG becomes display light as BT.2100's 1,000-nit reference display shows it. PQ
    /// sources ignore it.
    var keepsHLGScene = false
}

/// A PQ or HLG image reduced in linear light for an HDR output: each source pixel's signal turned into light (nits,
/// the source primaries; HLG as BT.2100's 1,000-nit reference display shows it, or kept as relative scene light)
/// and averaged in blocks of the shrink denominator, so a highlight's light is averaged as light rather than as
/// signal (PQ's curve is steep: averaging signal darkens bright detail by many times what averaging sRGB does).
///
/// Cost: per source pixel a Y'CbCr conversion and three table look-ups (HLG display light also a `pow`); memory, 16 bytes a
/// reduced pixel while reducing and 12 for the light it yields (checked against ``DecodeLimits/maxDecodedBytes``).
/// Used by one thread.
final class HDRLightImage: HDRBlockReducer {
    let width: Int, height: Int, d: Int
    private let sourceWidth: Int, sourceHeight: Int
    private let mapper: HDRToneMapper
    /// Light summed per reduced pixel.
    private let sums: ScratchBuffer<SIMD3<Float>>
    /// Whether the sums are HLG relative scene light (``HDRLightTarget/keepsHLGScene``) rather than display light.
    let isHLGScene: Bool

    /// - Parameter target: the output's peak (``light()`` rolls brighter light off) and whether HLG stays scene light.
    /// - Returns: nil when `primaries` are not ones ``HDRToneMapper`` converts.
    init?(
        sourceWidth: Int, sourceHeight: Int, d: Int, transfer: HDRTransfer, primaries: Int, target: HDRLightTarget,
        limits: DecodeLimits, what: String
    ) throws(DarkroomImageError) {
        guard
            let mapper = HDRToneMapper(
                transfer: transfer, primaries: primaries, sourcePeak: 0, targetPeak: target.peak)
        else { return nil }
        isHLGScene = transfer == .hlg && target.keepsHLGScene
        width = (sourceWidth + d - 1) / d
        height = (sourceHeight + d - 1) / d
        self.d = d
        self.sourceWidth = sourceWidth
        self.sourceHeight = sourceHeight
        self.mapper = mapper
        let bytes = width * height * 28
        guard bytes <= limits.maxDecodedBytes else {
            throw DarkroomImageError(
                .limitExceeded,
                "an HDR output of a \(sourceWidth)×\(sourceHeight) \(what) needs \(bytes) bytes, over maxDecodedBytes (\(limits.maxDecodedBytes))"
            )
        }
        sums = try ScratchBuffer<SIMD3<Float>>(count: width * height, zeroed: true)
    }

    /// The reduced light of an image whose probe found a PQ or HLG signal the tone mapper reads, for an HDR output;
    /// nil for any other image and for one with transparency (not made yet).
    convenience init?(
        probe: ImageProbe, d: Int, target: HDRLightTarget, limits: DecodeLimits, what: String
    ) throws(DarkroomImageError) {
        guard let details = probe.hdr, details.toneMapped, !probe.hasAlpha else { return nil }
        try self.init(
            sourceWidth: probe.width, sourceHeight: probe.height, d: d, transfer: details.signal,
            primaries: details.primaries, target: target, limits: limits, what: what)
    }

    /// Each pixel takes the chroma sample that covers it, as the signal reduction does at `d` = 1.
    func reducePlanes<Sample: FixedWidthInteger & UnsignedInteger & SIMDScalar>(
        y: YCbCrRows.Plane, cb: YCbCrRows.Plane?, cr: YCbCrRows.Plane?, as: Sample.Type, shiftX sx: Int,
        shiftY sy: Int, coefficients k: YUVCoefficients, rows: Range<Int>
    ) {
        func samples(_ plane: YCbCrRows.Plane, _ row: Int) -> UnsafePointer<Sample> {
            UnsafeRawPointer(plane.base + row * plane.stride).assumingMemoryBound(to: Sample.self)
        }
        let convert = k.perPixel
        let neutral = Float(k.chromaOffset)
        let mapper = self.mapper  // a local copy: its tables stay retained for the loop, not fetched per pixel
        let scene = isHLGScene
        for row in rows {
            let luma = samples(y, row)
            let u = cb.map { samples($0, row >> sy) }
            let v = cr.map { samples($0, row >> sy) }
            let out = sums.pointer + (row / d) * width
            var x = 0
            for block in 0..<width {
                let end = min(x + d, sourceWidth)
                var sum = SIMD3<Float>()
                if let u, let v {
                    while x < end {
                        sum += Self.light(
                            convert.rgb(y: Float(luma[x]), cb: Float(u[x >> sx]), cr: Float(v[x >> sx])), mapper, scene)
                        x += 1
                    }
                } else {
                    while x < end {
                        sum += Self.light(convert.rgb(y: Float(luma[x]), cb: neutral, cr: neutral), mapper, scene)
                        x += 1
                    }
                }
                out[block] += sum
            }
        }
    }

    func addRGBA16(_ row: UnsafePointer<UInt16>, sourceRow y: Int) {
        let out = sums.pointer + (y / d) * width
        let scale: Float = 1 / 65535
        let (mapper, scene) = (self.mapper, isHLGScene)
        for x in 0..<sourceWidth {
            out[x / d] += Self.light(
                SIMD3(Float(row[4 * x]) * scale, Float(row[4 * x + 1]) * scale, Float(row[4 * x + 2]) * scale),
                mapper, scene)
        }
    }

    /// One pixel's light from its signal: display light, or HLG's relative scene light when `scene`.
    @inline(__always)
    private static func light(_ signal: SIMD3<Float>, _ mapper: HDRToneMapper, _ scene: Bool) -> SIMD3<Float> {
        scene ? mapper.sceneLight(signal) : mapper.light(signal)
    }

    /// The reduced light: RGB in the source primaries, 1.0 at SDR white (203 nits), rolled off by BT.2390 to the
    /// target peak where the brightest reduced pixel is brighter, each pixel's components scaled together; or, for
    /// HLG kept as scene light, that light as it is (1.0 at the signal's peak). Call once, after every row is added.
    func light() -> [Float] {
        var peak: Float = 0
        for by in 0..<height {
            let rows = Float(min(d, sourceHeight - by * d))
            for bx in 0..<width {
                let i = by * width + bx
                sums.pointer[i] /= rows * Float(min(d, sourceWidth - bx * d))
                peak = max(peak, sums.pointer[i].max())
            }
        }
        let rollOff = mapper.withSourcePeak(Double(peak))
        var out = [Float](repeating: 0, count: width * height * 3)
        for i in 0..<(width * height) {
            let l = isHLGScene ? sums.pointer[i] : rollOff.rolledOff(sums.pointer[i])
            (out[3 * i], out[3 * i + 1], out[3 * i + 2]) = (l.x, l.y, l.z)
        }
        return out
    }
}
