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
    /// The light is converted from `profile`'s primaries (sRGB's without one) to BT.2020 with the profiles'
    /// colorants (relative colorimetric, as ICC stores them); BT.2020 holds every such gamut, so nothing is clipped
    /// but light over PQ's 10,000 nits. libavif 0.11 writes no content light level (`clli`).
    ///
    /// Cost: one PQ curve per sample and one RGB-to-YUV pass, then the AV1 encode; memory, 6 bytes per pixel
    /// besides the encoder's.
    /// - Parameters:
    ///   - light: linear RGB, three values per pixel row by row, 1.0 at SDR white.
    ///   - profile: the ICC profile whose primaries `light` is in: an RGB matrix/TRC profile (the kind cameras,
    ///     phones and gain-map bases carry).
    /// - Throws: ``DarkroomImageError`` `.unsupportedFeature` for a profile that is not RGB matrix/TRC,
    ///   `.encodeFailed` from libavif.
    static func encodePQAVIF(
        light: [Float], width: Int, height: Int, profile: ColorProfile?, options: EncodeOptions
    ) throws(DarkroomImageError) -> [UInt8] {
        precondition(light.count == width * height * 3)
        let m = try toBT2020(from: profile).map { Float($0) }
        let scale = Float(HDRTransfer.referenceWhiteNits)
        let pq = HDRTransfer.pqEncoder
        var signal = [UInt16](repeating: 0, count: light.count)
        for i in stride(from: 0, to: light.count, by: 3) {
            let (r, g, b) = (light[i], light[i + 1], light[i + 2])
            for c in 0..<3 {
                let v = (m[3 * c] * r + m[3 * c + 1] * g + m[3 * c + 2] * b) * scale
                signal[i + c] = UInt16(min(1023, (pq.encode(nits: v) * 1023).rounded()))
            }
        }
        let image = try makeAVIFImage(
            width: width, height: height, depth: 10, format: AVIF_PIXEL_FORMAT_YUV444,
            cicp: (
                Int(AVIF_COLOR_PRIMARIES_BT2020), Int(AVIF_TRANSFER_CHARACTERISTICS_SMPTE2084),
                Int(AVIF_MATRIX_COEFFICIENTS_BT2020_NCL)
            ))
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

    /// The row-major matrix from linear light in `profile`'s primaries (sRGB's without one) to BT.2020's.
    static func toBT2020(from profile: ColorProfile?) throws(DarkroomImageError) -> [Double] {
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
