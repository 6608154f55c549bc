import Foundation

/// The HDR transfer functions of ITU-R BT.2100 and the BT.2390 tone-mapping curve, in one place: what turns a PQ or
/// HLG signal into light, and light above SDR white into light an SDR display can show.
///
/// Light is in nits (cd/m²). Every function is a handful of `pow`/`exp` calls on one value: callers that touch many
/// pixels tabulate them (``HDRToneMapper``).
enum HDRTransfer: Sendable, Hashable {
    /// SMPTE ST 2084 perceptual quantizer (CICP transfer 16): absolute light, 0…10,000 nits.
    case pq
    /// ARIB STD-B67 hybrid log-gamma (CICP transfer 18): relative scene light, rendered for a display by the OOTF.
    case hlg

    /// The transfer a CICP `transfer_characteristics` code names, or nil for SDR ones.
    init?(cicp code: Int) {
        switch code {
        case 16: self = .pq
        case 18: self = .hlg
        default: return nil
        }
    }

    /// The transfer to tone-map an image with CICP `transfer` and `primaries` by, or nil when it is SDR or its
    /// primaries are not supported (``HDRToneMapper/supports(primaries:)``). An ICC profile, which takes
    /// precedence over CICP, is the caller's to rule out.
    static func toneMapped(cicp transfer: Int, primaries: Int) -> HDRTransfer? {
        guard let hdr = HDRTransfer(cicp: transfer), HDRToneMapper.supports(primaries: primaries) else { return nil }
        return hdr
    }

    /// The light BT.2408 calls reference (diffuse) white, nits: the level an SDR display's white stands for.
    static let referenceWhiteNits = 203.0

    /// The peak HLG is rendered for when nothing says otherwise (BT.2100's reference display), nits.
    static let hlgNominalPeakNits = 1000.0

    // MARK: PQ (SMPTE ST 2084)

    private static let m1 = 2610.0 / 16384
    private static let m2 = 2523.0 / 4096 * 128
    private static let c1 = 3424.0 / 4096
    private static let c2 = 2413.0 / 4096 * 32
    private static let c3 = 2392.0 / 4096 * 32

    /// PQ signal (0…1) to light, nits.
    static func pqToNits(_ signal: Double) -> Double {
        let p = pow(min(max(signal, 0), 1), 1 / m2)
        return 10_000 * pow(max(p - c1, 0) / (c2 - c3 * p), 1 / m1)
    }

    /// Light, nits, to a PQ signal (0…1).
    static func nitsToPQ(_ nits: Double) -> Double {
        let y = pow(min(max(nits, 0), 10_000) / 10_000, m1)
        return pow((c1 + c2 * y) / (1 + c3 * y), m2)
    }

    /// Light to PQ for many samples: `(nits / 10,000)^m1` by one `pow`, then the rest of the curve (smooth in that
    /// variable) from a table of 4,097 entries, linearly interpolated: within 1e-5 of ``nitsToPQ(_:)``, a
    /// hundredth of a 10-bit step. Built once (``pqEncoder``); thread-safe.
    struct PQEncoder: Sendable {
        static let steps = 4096
        private let table: [Float] = (0...steps).map { i in
            let y = Double(i) / Double(steps)
            return Float(pow((c1 + c2 * y) / (1 + c3 * y), m2))
        }

        /// Light, nits, to a PQ signal (0…1).
        @inline(__always)
        func encode(nits: Float) -> Float {
            let y = pow(min(max(nits, 0), 10_000) / 10_000, Float(m1)) * Float(Self.steps)
            let i = min(Int(y), Self.steps - 1)
            let t = y - Float(i)
            return table[i] + t * (table[i + 1] - table[i])
        }
    }

    /// The shared ``PQEncoder``.
    static let pqEncoder = PQEncoder()

    // MARK: HLG (ARIB STD-B67, BT.2100)

    private static let a = 0.17883277
    private static let b = 1 - 4 * a
    private static let c = 0.5 - a * log(4 * a)

    /// HLG signal (0…1) to relative scene light (0…1): the inverse OETF.
    static func hlgToScene(_ signal: Double) -> Double {
        let e = min(max(signal, 0), 1)
        return e <= 0.5 ? e * e / 3 : (exp((e - c) / a) + b) / 12
    }

    /// Relative scene light (0…1) to an HLG signal: the OETF.
    static func sceneToHLG(_ light: Double) -> Double {
        let e = min(max(light, 0), 1)
        return e <= 1.0 / 12 ? (3 * e).squareRoot() : a * log(12 * e - b) + c
    }

    /// The HLG system gamma for a display of `peak` nits (BT.2100: 1.2 at 1,000 nits, 1.2 + 0.42 log10(peak/1000)).
    static func hlgSystemGamma(peak: Double) -> Double { 1.2 + 0.42 * log10(peak / 1000) }

    // MARK: BT.2390 EETF

    /// The BT.2390 electrical-electrical transfer function: maps light `nits` from content whose peak is
    /// `sourcePeak` onto a display whose peak is `targetPeak`, both with black at 0. Below the knee (where the
    /// source's PQ range would start to exceed the target's) light is unchanged; above it a Hermite spline in the PQ
    /// domain rolls it off to reach `targetPeak` exactly at `sourcePeak`. Identity when the source fits the target.
    static func bt2390(_ nits: Double, sourcePeak: Double, targetPeak: Double) -> Double {
        guard sourcePeak > targetPeak else { return min(nits, targetPeak) }
        let sourcePQ = nitsToPQ(sourcePeak)
        let e1 = min(nitsToPQ(nits) / sourcePQ, 1)
        let maxLum = nitsToPQ(targetPeak) / sourcePQ
        let ks = max(1.5 * maxLum - 0.5, 0)
        guard e1 > ks else { return nits }
        let t = (e1 - ks) / (1 - ks)
        let t2 = t * t
        let t3 = t2 * t
        let e2 = (2 * t3 - 3 * t2 + 1) * ks + (t3 - 2 * t2 + t) * (1 - ks) + (-2 * t3 + 3 * t2) * maxLum
        return min(pqToNits(e2 * sourcePQ), targetPeak)
    }
}
