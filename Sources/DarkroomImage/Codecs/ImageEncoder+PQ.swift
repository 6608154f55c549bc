import CAVIF
import CLCMS2
import Foundation

extension ImageEncoder {
    /// Encodes linear light as a 10-bit AVIF for HDR displays, in BT.2100 PQ: BT.2020 primaries, the PQ transfer
    /// and the BT.2020 non-constant-luminance matrix (CICP 9/16/9, full range), SDR white at BT.2408's reference
    /// white (203 nits), so an SDR-range pixel keeps its place and brighter light climbs above it. Chroma is kept
    /// whole (4:4:4): subsampled PQ chroma overshoots at saturated edges, lifting SDR content visibly above SDR
    /// white, for about a quarter fewer bytes.
    ///
    /// The light is converted from its primaries to BT.2020: an ICC profile's by its colorants (relative
    /// colorimetric, as ICC stores them), CICP primaries by their chromaticities; BT.2020 holds every such gamut, so
    /// nothing is clipped but light over PQ's 10,000 nits. libavif 0.11 writes no content light level (`clli`).
    ///
    /// A rendition kept as HLG scene light (``HDRRendition/isHLGScene``) is coded in BT.2100 HLG instead (CICP
    /// 9/18/9): its scene light converted to BT.2020 and through HLG's OETF, so an HLG source stays HLG.
    ///
    /// Cost: one PQ (or HLG) curve per sample and one RGB-to-YUV pass, then the AV1 encode; memory, 6 bytes per
    /// pixel besides the encoder's.
    /// - Parameters:
    ///   - rendition: the light, and the primaries it is in (an ICC profile must be RGB matrix/TRC: the kind
    ///     cameras, phones and gain-map bases carry).
    /// - Throws: ``DarkroomImageError`` `.unsupportedFeature` for a profile that is not RGB matrix/TRC or primaries
    ///   not known, `.encodeFailed` from libavif.
    static func encodeHDRAVIF(_ rendition: HDRRendition, options: EncodeOptions) throws(DarkroomImageError) -> [UInt8] {
        let (light, width, height) = (rendition.pixels, rendition.width, rendition.height)
        precondition(light.count == width * height * 3)
        let m = try toBT2020(from: rendition.primaries).map { Float($0) }
        let scale = Float(HDRTransfer.referenceWhiteNits)
        let pq = HDRTransfer.pqEncoder
        let hlg = rendition.isHLGScene
        var signal = [UInt16](repeating: 0, count: light.count)
        for i in stride(from: 0, to: light.count, by: 3) {
            let (r, g, b) = (light[i], light[i + 1], light[i + 2])
            for c in 0..<3 {
                let v = m[3 * c] * r + m[3 * c + 1] * g + m[3 * c + 2] * b
                let coded = hlg ? Float(HDRTransfer.sceneToHLG(Double(v))) : pq.encode(nits: v * scale)
                signal[i + c] = UInt16(min(1023, max(0, (coded * 1023).rounded())))
            }
        }
        let transfer = hlg ? AVIF_TRANSFER_CHARACTERISTICS_HLG : AVIF_TRANSFER_CHARACTERISTICS_SMPTE2084
        let image = try makeAVIFImage(
            width: width, height: height, depth: 10, format: AVIF_PIXEL_FORMAT_YUV444,
            cicp: (Int(AVIF_COLOR_PRIMARIES_BT2020), Int(transfer), Int(AVIF_MATRIX_COEFFICIENTS_BT2020_NCL)))
        defer { avifImageDestroy(image) }
        var rgb = avifRGBImage()
        avifRGBImageSetDefaults(&rgb, image)
        rgb.format = AVIF_RGB_FORMAT_RGB
        rgb.depth = 10
        rgb.rowBytes = UInt32(width * 3 * 2)
        let converted = signal.withUnsafeMutableBytes { pixels in
            rgb.pixels = pixels.baseAddress?.assumingMemoryBound(to: UInt8.self)
            return avifImageRGBToYUV(image, &rgb)
        }
        try check(converted, "converting to YUV")
        return try write(image, options)
    }

    /// The row-major matrix from linear light in `primaries` to BT.2020's.
    static func toBT2020(from primaries: HDRRendition.Primaries) throws(DarkroomImageError) -> [Double] {
        switch primaries {
        case .profile(let profile): return try toBT2020(from: profile)
        case .cicp(let code):
            guard let (white, rgb) = ColorTransformBuilder.cicpPrimaries(code),
                let source = Matrix3.rgbToXYZ(white: white, primaries: rgb),
                let (bt2020White, bt2020) = ColorTransformBuilder.cicpPrimaries(9),
                let target = Matrix3.rgbToXYZ(white: bt2020White, primaries: bt2020).flatMap(Matrix3.inverse)
            else { throw DarkroomImageError(.unsupportedFeature, "the colour primaries \(code) are not known") }
            return Matrix3.multiply(target, source)
        }
    }

    /// The row-major matrix from linear light in `profile`'s primaries (sRGB's without one) to BT.2020's.
    private static func toBT2020(from profile: ColorProfile?) throws(DarkroomImageError) -> [Double] {
        let source: cmsHPROFILE? =
            if let data = profile?.data, !data.isEmpty {
                data.withUnsafeBytes { cmsOpenProfileFromMem($0.baseAddress, UInt32($0.count)) }
            } else {
                cmsCreate_sRGBProfile()
            }
        guard let source else {
            throw DarkroomImageError(.unsupportedFeature, "lcms2 could not parse the image's ICC profile")
        }
        defer { cmsCloseProfile(source) }
        guard cmsGetColorSpace(source) == cmsSigRgbData, cmsIsMatrixShaper(source) != 0,
            let colorants = MatrixShaperKernel.colorants(source)
        else {
            throw DarkroomImageError(
                .unsupportedFeature, "HDR output needs an RGB matrix/TRC colour profile; the image's is another kind")
        }
        guard let (white, primaries) = ColorTransformBuilder.cicpPrimaries(9), let linear = cmsBuildGamma(nil, 1),
            case .success(let bt2020) = ColorTransformBuilder.rgbProfile(
                white: white, primaries: primaries, curve: linear)
        else { throw DarkroomImageError(.encodeFailed, "lcms2 could not build a BT.2020 profile") }
        defer {
            cmsFreeToneCurve(linear)
            cmsCloseProfile(bt2020)
        }
        guard let target = MatrixShaperKernel.colorants(bt2020).flatMap(Matrix3.inverse) else {
            throw DarkroomImageError(.encodeFailed, "the BT.2020 colorants are singular")
        }
        return Matrix3.multiply(target, colorants)
    }
}
