import Foundation

/// 3 × 3 matrices as nine row-major `Double`s: what the colour conversions in linear light are built from (primaries
/// to XYZ, one gamut to another). Built once per conversion; nothing here runs per pixel.
enum Matrix3 {
    /// The RGB-to-XYZ matrix (row-major) of primaries with the given white, scaled so white has Y = 1.
    static func rgbToXYZ(white: (Double, Double), primaries: ((Double, Double), (Double, Double), (Double, Double)))
        -> [Double]?
    {
        func xyz(_ p: (Double, Double)) -> [Double] { [p.0 / p.1, 1, (1 - p.0 - p.1) / p.1] }
        let r = xyz(primaries.0)
        let g = xyz(primaries.1)
        let b = xyz(primaries.2)
        let m = [r[0], g[0], b[0], r[1], g[1], b[1], r[2], g[2], b[2]]
        guard let inverse = inverse(m) else { return nil }
        let w = xyz(white)
        let s = (0..<3).map { i in inverse[3 * i] * w[0] + inverse[3 * i + 1] * w[1] + inverse[3 * i + 2] * w[2] }
        return (0..<9).map { m[$0] * s[$0 % 3] }
    }

    /// `a · b`.
    static func multiply(_ a: [Double], _ b: [Double]) -> [Double] {
        (0..<9).map { k in
            let (i, j) = (k / 3, k % 3)
            return a[3 * i] * b[j] + a[3 * i + 1] * b[3 + j] + a[3 * i + 2] * b[6 + j]
        }
    }

    /// The inverse of `m`, or nil when it is singular.
    static func inverse(_ m: [Double]) -> [Double]? {
        let det =
            m[0] * (m[4] * m[8] - m[5] * m[7]) - m[1] * (m[3] * m[8] - m[5] * m[6]) + m[2] * (m[3] * m[7] - m[4] * m[6])
        guard abs(det) > 1e-12 else { return nil }
        return [
            (m[4] * m[8] - m[5] * m[7]) / det, (m[2] * m[7] - m[1] * m[8]) / det, (m[1] * m[5] - m[2] * m[4]) / det,
            (m[5] * m[6] - m[3] * m[8]) / det, (m[0] * m[8] - m[2] * m[6]) / det, (m[2] * m[3] - m[0] * m[5]) / det,
            (m[3] * m[7] - m[4] * m[6]) / det, (m[1] * m[6] - m[0] * m[7]) / det, (m[0] * m[4] - m[1] * m[3]) / det,
        ]
    }
}
