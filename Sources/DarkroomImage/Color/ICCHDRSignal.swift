import CLCMS2
import Foundation

/// Whether an ICC profile describes a PQ or HLG signal, which lcms2 cannot convert right (it maps the curve's top,
/// 10,000 nits for PQ, to SDR white, so the image comes out nearly black) and the HDR tone map must take instead.
///
/// Read through lcms2 (a profile parse, a few tags; nothing per pixel). Two kinds of profile are recognised:
/// - one with a `cicp` tag (ICC.1:2022), as current writers add to HDR profiles: its code points are taken as they
///   are;
/// - an RGB matrix/TRC profile from before that tag (libjxl 0.7 writes these for PQ and HLG images): each tone curve
///   is PQ's EOTF over 10,000 nits or HLG's inverse OETF within 0.5 % at five signal levels, and the colorants are
///   BT.2020, Display P3 or BT.709's, adapted to D50 by Bradford, within 0.003;
/// - a gray profile whose one tone curve is such a curve (libjxl writes these for gray PQ and HLG images): its signal
///   is given BT.2020 primaries, which leave a gray pixel gray as any D65 primaries would.
enum ICCHDRSignal {
    /// The profile's PQ or HLG signal as CICP code points (RGB, full range); nil for any other profile.
    static func cicp(_ icc: UnsafeRawBufferPointer) -> EmbeddedColor.CICP? {
        guard icc.count >= 132, let profile = cmsOpenProfileFromMem(icc.baseAddress, UInt32(icc.count)) else {
            return nil
        }
        defer { cmsCloseProfile(profile) }
        let space = cmsGetColorSpace(profile)
        guard space == cmsSigRgbData || space == cmsSigGrayData else { return nil }
        if let tag = cmsReadTag(profile, cmsSigcicpTag) {
            let signal = tag.assumingMemoryBound(to: cmsVideoSignalType.self).pointee
            let transfer = Int(signal.TransferCharacteristics)
            guard HDRTransfer(cicp: transfer) != nil, signal.MatrixCoefficients == 0 else { return nil }
            return EmbeddedColor.CICP(
                primaries: Int(signal.ColourPrimaries), transfer: transfer, matrix: 0,
                fullRange: signal.VideoFullRangeFlag != 0)
        }
        if space == cmsSigGrayData {
            return curvesTransfer(profile, tags: [cmsSigGrayTRCTag]).map {
                EmbeddedColor.CICP(primaries: 9, transfer: $0, matrix: 0, fullRange: true)
            }
        }
        guard let transfer = curvesTransfer(profile, tags: [cmsSigRedTRCTag, cmsSigGreenTRCTag, cmsSigBlueTRCTag]),
            let primaries = colorantPrimaries(profile)
        else { return nil }
        return EmbeddedColor.CICP(primaries: primaries, transfer: transfer, matrix: 0, fullRange: true)
    }

    /// 16 (PQ) or 18 (HLG) when all the tone curves `tags` name are that transfer's signal-to-light curve.
    private static func curvesTransfer(_ profile: cmsHPROFILE, tags: [cmsTagSignature]) -> Int? {
        let levels: [Double] = [0.1, 0.25, 0.5, 0.75, 0.9]
        let references: [(Int, (Double) -> Double)] = [
            (16, { HDRTransfer.pqToNits($0) / 10_000 }), (18, HDRTransfer.hlgToScene),
        ]
        var found: Int?
        for signature in tags {
            guard let tag = cmsReadTag(profile, signature) else { return nil }
            let curve = OpaquePointer(tag)
            let match = references.first { _, reference in
                levels.allSatisfy { level in
                    let value = Double(cmsEvalToneCurveFloat(curve, Float(level)))
                    let expected = reference(level)
                    return abs(value - expected) <= max(0.005 * expected, 0.0002)
                }
            }
            guard let code = match?.0, found == nil || found == code else { return nil }
            found = code
        }
        return found
    }

    /// The CICP primaries code (9, 12 or 1) whose D65 colorants, adapted to D50, are the profile's.
    private static func colorantPrimaries(_ profile: cmsHPROFILE) -> Int? {
        var colorants: [Double] = []
        for signature in [cmsSigRedColorantTag, cmsSigGreenColorantTag, cmsSigBlueColorantTag] {
            guard let tag = cmsReadTag(profile, signature) else { return nil }
            let xyz = tag.assumingMemoryBound(to: cmsCIEXYZ.self).pointee
            colorants += [xyz.X, xyz.Y, xyz.Z]
        }
        // Bradford adaptation from D65 to D50 (Lindbloom's matrix), as ICC profiles store colorants
        let bradford = [
            1.0478112, 0.0228866, -0.0501270, 0.0295424, 0.9904844, -0.0170491, -0.0092345, 0.0150436, 0.7521316,
        ]
        return [9, 12, 1].first { code in
            guard let (white, rgb) = ColorTransformBuilder.cicpPrimaries(code),
                let m = Matrix3.rgbToXYZ(white: white, primaries: rgb)
            else { return false }
            let adapted = Matrix3.multiply(bradford, m)
            // colorant c is column c of the adapted matrix; `colorants` holds them one after another
            return (0..<3).allSatisfy { c in
                (0..<3).allSatisfy { i in abs(adapted[3 * i + c] - colorants[3 * c + i]) <= 0.003 }
            }
        }
    }
}
