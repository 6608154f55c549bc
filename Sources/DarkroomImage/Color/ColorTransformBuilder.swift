import CLCMS2

/// Builds lcms2 transforms from embedded colour descriptions to sRGB.
///
/// Rendering intent: RGB and gray convert relative colorimetric (for the matrix/TRC profiles cameras and phones
/// embed, every intent gives the same result). CMYK converts perceptually, without black point compensation,
/// through the profile's own A2B0 table, as browsers (skcms reads only A2B0) and Pillow's ImageCms do: press
/// profiles such as Coated FOGRA39 carry a perceptual table built for viewing on screen that differs from the
/// colorimetric one by far more than a rounding. Gray images convert to gray with
/// the sRGB curve and stay one byte per pixel.
enum ColorTransformBuilder {
    /// Builds the conversion for `color` in `layout`, deciding whether it is an identity (every test colour
    /// within one level) so that sRGB-equivalent profiles cost nothing per decode.
    static func build(_ color: EmbeddedColor, layout: ColorLayout) -> ColorConversion {
        let source: cmsHPROFILE
        switch sourceProfile(color) {
        case .failure(let failure): return .unusable(failure.reason)
        case .success(let profile): source = profile
        }
        defer { cmsCloseProfile(source) }
        guard cmsGetColorSpace(source) == layout.profileSpace else {
            return .unusable(
                "a \(modelName(cmsGetColorSpace(source))) profile does not describe \(layoutName(layout)) pixels")
        }
        guard let destination = layout == .gray ? graySRGBProfile() : cmsCreate_sRGBProfile() else {
            return .unusable("lcms2 could not create the sRGB profile")
        }
        defer { cmsCloseProfile(destination) }
        // No black point compensation: on RGB it would keep lcms2 from joining matrix/TRC profiles into its fast
        // matrix-shaper form, and a perceptual CMYK table already maps the paper's black for the screen.
        let flags = UInt32(cmsFLAGS_NOCACHE | cmsFLAGS_COPY_ALPHA)
        guard
            let handle = cmsCreateTransform(
                source, layout.inputFormat, destination, layout.outputFormat, layout.renderingIntent, flags)
        else {
            return .unusable("lcms2 could not build a transform from the profile to sRGB")
        }
        let transform = ColorTransform(handle: handle, layout: layout, kernel: MatrixShaperKernel(profile: source))
        return isIdentity(transform)
            ? .identity : .transform(transform.measured(amplification: amplification(transform)))
    }

    /// The largest output change per input level along any channel axis, over steps of 16 levels between mid
    /// tones (avoiding clipped extremes): about 1.0–1.2 for Display P3, 1.5–2.5 for ProPhoto.
    static func amplification(_ transform: ColorTransform) -> Double {
        switch transform.layout {
        case .cmyk, .gray: return 1
        case .bgra, .bgraPremultiplied:
            let levels = stride(from: 32, through: 224, by: 32).map { UInt8($0) }
            var gain = 1.0
            for r in levels {
                for g in levels {
                    for b in levels {
                        let base: [UInt8] = [b, g, r, 255]
                        var input = base
                        for c in 0..<3 {
                            var p = base
                            p[c] += 16
                            input += p
                        }
                        var output = [UInt8](repeating: 0, count: input.count)
                        transform.convert(input, &output, count: 4)
                        for step in 1...3 {
                            for c in 0..<3 {
                                gain = max(gain, Double(abs(Int(output[4 * step + c]) - Int(output[c]))) / 16)
                            }
                        }
                    }
                }
            }
            return gain
        }
    }

    /// Whether `transform` moves no test colour by more than one level (never for CMYK).
    static func isIdentity(_ transform: ColorTransform) -> Bool {
        switch transform.layout {
        case .cmyk: return false
        case .gray:
            let input = (0..<256).map { UInt8($0) }
            var output = [UInt8](repeating: 0, count: 256)
            transform.convert(input, &output, count: 256)
            return zip(input, output).allSatisfy { abs(Int($0) - Int($1)) <= 1 }
        case .bgra, .bgraPremultiplied:
            let levels: [UInt8] = [0, 16, 48, 80, 112, 144, 176, 208, 240, 255]
            var input = [UInt8]()
            for r in levels { for g in levels { for b in levels { input += [b, g, r, 255] } } }
            var output = [UInt8](repeating: 0, count: input.count)
            transform.convert(input, &output, count: input.count / 4)
            return zip(input, output).allSatisfy { abs(Int($0) - Int($1)) <= 1 }
        }
    }

    /// Opens or synthesises the source profile. The caller closes it.
    private static func sourceProfile(_ color: EmbeddedColor) -> Result<cmsHPROFILE, Failure> {
        switch color {
        case .icc(let bytes):
            guard let profile = bytes.withUnsafeBytes({ cmsOpenProfileFromMem($0.baseAddress, UInt32($0.count)) })
            else {
                return .failure(Failure("lcms2 could not parse the ICC profile (\(bytes.count) bytes)"))
            }
            return .success(profile)
        case .cicp(let cicp):
            guard let (white, primaries) = cicpPrimaries(cicp.primaries) else {
                return .failure(Failure("CICP colour primaries \(cicp.primaries) are not supported"))
            }
            guard let curve = cicpTransfer(cicp.transfer) else {
                return .failure(
                    Failure("CICP transfer characteristics \(cicp.transfer) are not supported (HDR is not tone-mapped)")
                )
            }
            defer { cmsFreeToneCurve(curve) }
            return rgbProfile(white: white, primaries: primaries, curve: curve)
        case .pngChunks(let gamma, let chromaticities):
            let exponent = gamma.map { 100_000 / Double($0) } ?? 2.2
            guard exponent > 0.1, exponent < 10, let curve = cmsBuildGamma(nil, exponent) else {
                return .failure(Failure("PNG gAMA \(gamma ?? 0) is out of range"))
            }
            defer { cmsFreeToneCurve(curve) }
            var white = (0.3127, 0.3290)
            var primaries = ((0.640, 0.330), (0.300, 0.600), (0.150, 0.060))
            if let c = chromaticities?.map({ Double($0) / 100_000 }), c.count == 8 {
                white = (c[0], c[1])
                primaries = ((c[2], c[3]), (c[4], c[5]), (c[6], c[7]))
            }
            return rgbProfile(white: white, primaries: primaries, curve: curve)
        }
    }

    /// An RGB profile of CIE xy `primaries` and `white`, `curve` for each channel (lcms2 adapts the colorants to
    /// D50, as ICC stores them). The caller closes it.
    static func rgbProfile(
        white: (Double, Double), primaries: ((Double, Double), (Double, Double), (Double, Double)),
        curve: OpaquePointer
    ) -> Result<cmsHPROFILE, Failure> {
        var whitePoint = cmsCIExyY(x: white.0, y: white.1, Y: 1)
        var triple = cmsCIExyYTRIPLE(
            Red: cmsCIExyY(x: primaries.0.0, y: primaries.0.1, Y: 1),
            Green: cmsCIExyY(x: primaries.1.0, y: primaries.1.1, Y: 1),
            Blue: cmsCIExyY(x: primaries.2.0, y: primaries.2.1, Y: 1))
        var curves: [OpaquePointer?] = [curve, curve, curve]
        guard let profile = cmsCreateRGBProfile(&whitePoint, &triple, &curves) else {
            return .failure(Failure("lcms2 could not build a profile from the chromaticities"))
        }
        return .success(profile)
    }

    /// White point and red, green, blue primaries (CIE xy) for ITU-T H.273 colour primaries.
    static func cicpPrimaries(_ code: Int) -> (
        (Double, Double), ((Double, Double), (Double, Double), (Double, Double))
    )? {
        let d65 = (0.3127, 0.3290)
        switch code {
        case 1, 2: return (d65, ((0.640, 0.330), (0.300, 0.600), (0.150, 0.060)))  // BT.709 / sRGB
        case 4: return ((0.310, 0.316), ((0.67, 0.33), (0.21, 0.71), (0.14, 0.08)))  // BT.470 M
        case 5: return (d65, ((0.64, 0.33), (0.29, 0.60), (0.15, 0.06)))  // BT.601 625
        case 6, 7: return (d65, ((0.630, 0.340), (0.310, 0.595), (0.155, 0.070)))  // BT.601 525, SMPTE 240
        case 9: return (d65, ((0.708, 0.292), (0.170, 0.797), (0.131, 0.046)))  // BT.2020
        case 11: return ((0.314, 0.351), ((0.680, 0.320), (0.265, 0.690), (0.150, 0.060)))  // DCI-P3
        case 12: return (d65, ((0.680, 0.320), (0.265, 0.690), (0.150, 0.060)))  // Display P3
        case 22: return (d65, ((0.630, 0.340), (0.295, 0.605), (0.155, 0.077)))  // EBU 3213
        default: return nil
        }
    }

    /// The decoding curve for ITU-T H.273 transfer characteristics (SDR curves only).
    private static func cicpTransfer(_ code: Int) -> OpaquePointer? {
        switch code {
        case 2, 13: return sRGBCurve()
        case 1, 6, 14, 15:  // BT.709 / BT.601 / BT.2020 (10 and 12 bit)
            var p: [Double] = [1 / 0.45, 1 / 1.099, 0.099 / 1.099, 1 / 4.5, 0.081]
            return cmsBuildParametricToneCurve(nil, 4, &p)
        case 4: return cmsBuildGamma(nil, 2.2)
        case 5: return cmsBuildGamma(nil, 2.8)
        case 8: return cmsBuildGamma(nil, 1.0)
        default: return nil
        }
    }

    private static func sRGBCurve() -> OpaquePointer? {
        var p: [Double] = [2.4, 1 / 1.055, 0.055 / 1.055, 1 / 12.92, 0.04045]
        return cmsBuildParametricToneCurve(nil, 4, &p)
    }

    /// A gray profile with the sRGB curve and D65 white: where gray images are converted to.
    private static func graySRGBProfile() -> cmsHPROFILE? {
        guard let curve = sRGBCurve() else { return nil }
        defer { cmsFreeToneCurve(curve) }
        var white = cmsCIExyY(x: 0.3127, y: 0.3290, Y: 1)
        return cmsCreateGrayProfile(&white, curve)
    }

    static func modelName(_ space: cmsColorSpaceSignature) -> String {
        switch space {
        case cmsSigRgbData: "RGB"
        case cmsSigGrayData: "gray"
        case cmsSigCmykData: "CMYK"
        default: "non-RGB"
        }
    }

    private static func layoutName(_ layout: ColorLayout) -> String {
        switch layout {
        case .bgra, .bgraPremultiplied: "RGB"
        case .gray: "gray"
        case .cmyk: "CMYK"
        }
    }

    struct Failure: Error {
        let reason: String
        init(_ reason: String) { self.reason = reason }
    }
}
