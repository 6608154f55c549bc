#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The continuous reconstruction kernels behind ``ResamplingFilter``, evaluated the way Pillow's
/// `ImagingResample` evaluates them (same supports, same edge conventions), so results are comparable.
///
/// Cost: evaluated only while building weight tables (in `RowResampler.init`), never per source row.
/// ``fill(_:first:step:count:into:)`` evaluates a run of equally spaced Lanczos taps with two polynomial
/// `sin`/`cos` pairs per run (angle-addition recurrence) instead of two libm `sin` calls per tap.
enum FilterKernel {
    /// Half-width of the kernel in source pixels at scale 1. Shrinking widens it by the ratio.
    static func support(_ filter: ResamplingFilter) -> Double {
        switch filter {
        case .box: 0.5
        case .triangle: 1.0
        case .lanczos3: 3.0
        }
    }

    /// The kernel's value at `x` (in kernel units: source pixels divided by the filter scale).
    static func weight(_ filter: ResamplingFilter, _ x: Double) -> Double {
        switch filter {
        case .box:
            // Half-open so that two adjacent output pixels never both claim a boundary pixel.
            return (x > -0.5 && x <= 0.5) ? 1.0 : 0.0
        case .triangle:
            let a = abs(x)
            return a < 1.0 ? 1.0 - a : 0.0
        case .lanczos3:
            guard x >= -3.0 && x < 3.0 else { return 0.0 }
            return sinc(x) * sinc(x / 3.0)
        }
    }

    /// Writes `weight(filter, first + k × step)` for `k` in `0..<count` into `values`.
    static func fill(
        _ filter: ResamplingFilter, first: Double, step: Double, count: Int,
        into values: UnsafeMutablePointer<Double>
    ) {
        guard filter == .lanczos3, count > 2 else {
            for k in 0..<count { values[k] = weight(filter, first + Double(k) * step) }
            return
        }
        // sin(π t) and sin(π t / 3) advance by fixed rotations as t advances by `step`.
        var s1 = sinPi(first)
        var c1 = cosPi(first)
        var s3 = sinPi(first / 3)
        var c3 = cosPi(first / 3)
        let ds1 = sinPi(step)
        let dc1 = cosPi(step)
        let ds3 = sinPi(step / 3)
        let dc3 = cosPi(step / 3)
        let scale = 3.0 / (Double.pi * Double.pi)
        for k in 0..<count {
            let t = first + Double(k) * step
            if t < -3.0 || t >= 3.0 {
                values[k] = 0
            } else if abs(t) < 1e-7 {
                values[k] = 1
            } else {
                values[k] = scale * s1 * s3 / (t * t)
            }
            (s1, c1) = (s1 * dc1 + c1 * ds1, c1 * dc1 - s1 * ds1)
            (s3, c3) = (s3 * dc3 + c3 * ds3, c3 * dc3 - s3 * ds3)
        }
    }

    /// sin(π x), |error| < 1e-11: reduced to |r| ≤ 1/2 and a Taylor polynomial (exactly 0 at integers).
    static func sinPi(_ x: Double) -> Double {
        let n = x.rounded()
        let r = (x - n) * Double.pi
        let r2 = r * r
        var p = -1.0 / 1_307_674_368_000  // -1/15!
        p = p * r2 + 1.0 / 6_227_020_800  // 1/13!
        p = p * r2 - 1.0 / 39_916_800
        p = p * r2 + 1.0 / 362_880
        p = p * r2 - 1.0 / 5_040
        p = p * r2 + 1.0 / 120
        p = p * r2 - 1.0 / 6
        let value = r + r * r2 * p
        return Int(n) & 1 == 0 ? value : -value
    }

    /// cos(π x), |error| < 1e-11, same reduction as ``sinPi(_:)``.
    static func cosPi(_ x: Double) -> Double {
        let n = x.rounded()
        let r = (x - n) * Double.pi
        let r2 = r * r
        var p = 1.0 / 20_922_789_888_000  // 1/16!
        p = p * r2 - 1.0 / 87_178_291_200  // -1/14!
        p = p * r2 + 1.0 / 479_001_600
        p = p * r2 - 1.0 / 3_628_800
        p = p * r2 + 1.0 / 40_320
        p = p * r2 - 1.0 / 720
        p = p * r2 + 1.0 / 24
        p = p * r2 - 1.0 / 2
        let value = 1 + r2 * p
        return Int(n) & 1 == 0 ? value : -value
    }

    private static func sinc(_ x: Double) -> Double {
        if x == 0.0 { return 1.0 }
        let px = x * Double.pi
        return sin(px) / px
    }
}
