import CLCMS2

/// The per-pixel arithmetic of an RGB matrix/TRC profile converted to sRGB, relative colorimetric: per-channel
/// curves to linear light, one 3×3 matrix (source colorants to sRGB's, both D50-adapted as ICC stores them),
/// sRGB's curve back. It is what lcms2 computes for such profiles (the ones cameras and phones embed), with the
/// curves, colorants and the inverse sRGB curve read from lcms2, but specialised for opaque BGRA8: about twice
/// lcms2's speed on a thumbnail, and within one level of it (a test compares every level).
struct MatrixShaperKernel: Sendable {
    /// Linear light for each 8-bit level, per source channel (R, G, B).
    private let red: [Float], green: [Float], blue: [Float]
    /// Row-major: sRGB linear (R, G, B) from source linear (R, G, B).
    private let matrix: [Float]
    /// sRGB-encoded 8-bit value for linear light quantised to 1/4095.
    private let encode: [UInt8]
    static let encodeSteps = 4095

    /// The kernel for `profile`, or nil when it is not an RGB matrix/TRC profile.
    init?(profile: cmsHPROFILE) {
        guard cmsGetColorSpace(profile) == cmsSigRgbData, cmsIsMatrixShaper(profile) != 0,
            let srgb = cmsCreate_sRGBProfile()
        else { return nil }
        defer { cmsCloseProfile(srgb) }
        guard let source = Self.colorants(profile), let target = Self.colorants(srgb),
            let inverse = Matrix3.inverse(target),
            let r = Self.curve(profile, cmsSigRedTRCTag), let g = Self.curve(profile, cmsSigGreenTRCTag),
            let b = Self.curve(profile, cmsSigBlueTRCTag),
            let srgbCurve = cmsReadTag(srgb, cmsSigRedTRCTag).map(OpaquePointer.init),
            let reversed = cmsReverseToneCurve(srgbCurve)
        else { return nil }
        defer { cmsFreeToneCurve(reversed) }
        matrix = Matrix3.multiply(inverse, source).map { Float($0) }
        red = r
        green = g
        blue = b
        encode = (0...Self.encodeSteps).map { i in
            UInt8(
                max(0, min(255, (cmsEvalToneCurveFloat(reversed, Float(i) / Float(Self.encodeSteps)) * 255).rounded())))
        }
    }

    /// Converts an opaque BGRA8 bitmap in place.
    func convert(_ bitmap: Bitmap) {
        let steps = Float(Self.encodeSteps)
        let m = matrix
        red.withUnsafeBufferPointer { r in
            green.withUnsafeBufferPointer { g in
                blue.withUnsafeBufferPointer { b in
                    encode.withUnsafeBufferPointer { e in
                        for y in 0..<bitmap.height {
                            let row = bitmap.row(y).assumingMemoryBound(to: UInt8.self)
                            for x in 0..<bitmap.width {
                                let p = row + 4 * x
                                let lr = r[Int(p[2])]
                                let lg = g[Int(p[1])]
                                let lb = b[Int(p[0])]
                                let or = m[0] * lr + m[1] * lg + m[2] * lb
                                let og = m[3] * lr + m[4] * lg + m[5] * lb
                                let ob = m[6] * lr + m[7] * lg + m[8] * lb
                                p[2] = e[Int(min(max(or, 0), 1) * steps + 0.5)]
                                p[1] = e[Int(min(max(og, 0), 1) * steps + 0.5)]
                                p[0] = e[Int(min(max(ob, 0), 1) * steps + 0.5)]
                            }
                        }
                    }
                }
            }
        }
    }

    /// The profile's colorants as a row-major 3×3 matrix whose columns are rXYZ, gXYZ, bXYZ.
    static func colorants(_ profile: cmsHPROFILE) -> [Double]? {
        var columns = [cmsCIEXYZ]()
        for tag in [cmsSigRedColorantTag, cmsSigGreenColorantTag, cmsSigBlueColorantTag] {
            guard let xyz = cmsReadTag(profile, tag)?.assumingMemoryBound(to: cmsCIEXYZ.self) else { return nil }
            columns.append(xyz.pointee)
        }
        return [
            columns[0].X, columns[1].X, columns[2].X, columns[0].Y, columns[1].Y, columns[2].Y,
            columns[0].Z, columns[1].Z, columns[2].Z,
        ]
    }

    /// 256 linear values of one channel's curve.
    private static func curve(_ profile: cmsHPROFILE, _ tag: cmsTagSignature) -> [Float]? {
        guard let curve = cmsReadTag(profile, tag).map(OpaquePointer.init) else { return nil }
        return (0..<256).map { cmsEvalToneCurveFloat(curve, Float($0) / 255) }
    }
}
