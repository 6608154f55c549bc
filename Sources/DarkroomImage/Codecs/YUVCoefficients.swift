import CAVIF

/// The Y'CbCr → R'G'B' arithmetic of ITU-T H.273's matrices (BT.601, BT.709, BT.2020 non-constant luminance), in
/// floating point on mean sample values: for reductions that average planes before converting (the conversion is
/// affine, so the order does not change the signal).
struct YUVCoefficients {
    let kr: Double, kb: Double
    /// Sample value of black and the span from black to white (luma), and of zero chroma and its half-span.
    let lumaOffset: Double, lumaRange: Double
    let chromaOffset: Double, chromaRange: Double

    /// Luma weights of red and blue for a CICP `matrix_coefficients` code, or nil for one not covered.
    static func weights(matrix: Int) -> (kr: Double, kb: Double)? {
        switch matrix {
        case 1: (0.2126, 0.0722)  // BT.709
        case 2, 5, 6: (0.299, 0.114)  // unspecified (as libheif reads it), BT.470 BG, BT.601
        case 9: (0.2627, 0.0593)  // BT.2020 NCL
        default: nil
        }
    }

    init?(matrix: Int, bitDepth: Int, fullRange: Bool) {
        guard let (kr, kb) = Self.weights(matrix: matrix), (8...16).contains(bitDepth) else { return nil }
        self.kr = kr
        self.kb = kb
        let scale = Double(1 << (bitDepth - 8))
        if fullRange {
            lumaOffset = 0
            lumaRange = Double((1 << bitDepth) - 1)
            chromaRange = lumaRange
        } else {
            lumaOffset = 16 * scale
            lumaRange = 219 * scale
            chromaRange = 224 * scale
        }
        chromaOffset = 128 * scale
    }

    /// An AVIF frame's coefficients (its matrix, depth and range); nil for matrices not covered (identity GBR,
    /// constant luminance, ICtCp) and for an unspecified matrix, which libavif reads as BT.601 only by default.
    init?(_ image: avifImage) {
        guard image.matrixCoefficients != 2 else { return nil }
        self.init(
            matrix: Int(image.matrixCoefficients), bitDepth: Int(image.depth),
            fullRange: image.yuvRange == AVIF_RANGE_FULL)
    }

    /// R', G', B' (0…1, unclamped) for mean sample values.
    @inline(__always)
    func rgb(y: Double, cb: Double, cr: Double) -> (Double, Double, Double) {
        let l = (y - lumaOffset) / lumaRange
        let u = (cb - chromaOffset) / chromaRange
        let v = (cr - chromaOffset) / chromaRange
        let r = l + 2 * (1 - kr) * v
        let b = l + 2 * (1 - kb) * u
        let g = (l - kr * r - kb * b) / (1 - kr - kb)
        return (r, g, b)
    }

    /// The same arithmetic in `Float`, folded for one conversion per pixel: R'G'B' (0…1, unclamped) of one
    /// pixel's samples.
    struct PerPixel {
        let lumaScale: Float, lumaBias: Float, chromaScale: Float, chromaBias: Float
        let redFromV: Float, greenFromU: Float, greenFromV: Float, blueFromU: Float

        @inline(__always)
        func rgb(y: Float, cb: Float, cr: Float) -> SIMD3<Float> {
            let l = y * lumaScale + lumaBias
            let u = cb * chromaScale + chromaBias
            let v = cr * chromaScale + chromaBias
            return SIMD3(l + redFromV * v, l - greenFromU * u - greenFromV * v, l + blueFromU * u)
        }
    }

    /// ``PerPixel`` for these coefficients.
    var perPixel: PerPixel {
        let kg = 1 - kr - kb
        return PerPixel(
            lumaScale: Float(1 / lumaRange), lumaBias: Float(-lumaOffset / lumaRange),
            chromaScale: Float(1 / chromaRange), chromaBias: Float(-chromaOffset / chromaRange),
            redFromV: Float(2 * (1 - kr)), greenFromU: Float(2 * kb * (1 - kb) / kg),
            greenFromV: Float(2 * kr * (1 - kr) / kg), blueFromU: Float(2 * (1 - kb)))
    }
}
