import CLCMS2

extension ColorProfileSummary {
    /// Summarises ICC profile bytes with lcms2: description, colour space, whether usable and whether sRGB.
    init(icc data: [UInt8]) {
        guard let profile = data.withUnsafeBytes({ cmsOpenProfileFromMem($0.baseAddress, UInt32($0.count)) }) else {
            self.init(
                source: .icc, description: nil, model: .other, isSRGB: false, isUsable: false,
                problem: "lcms2 could not parse the ICC profile (\(data.count) bytes)", byteCount: data.count)
            return
        }
        defer { cmsCloseProfile(profile) }
        let space = cmsGetColorSpace(profile)
        let model: Model =
            switch space {
            case cmsSigRgbData: .rgb
            case cmsSigGrayData: .gray
            case cmsSigCmykData: .cmyk
            default: .other
            }
        var buffer = [CChar](repeating: 0, count: 256)
        let length = cmsGetProfileInfoASCII(profile, cmsInfoDescription, "en", "US", &buffer, UInt32(buffer.count))
        let description = length > 0 ? buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) } : nil
        self.init(
            source: .icc, description: description, model: model, isSRGB: false, isUsable: true, byteCount: data.count)
        let layout: ColorLayout? =
            switch model {
            case .rgb: .bgra
            case .gray: .gray
            case .cmyk: .cmyk(inverted: false)
            case .other: nil
            }
        guard let layout else {
            isUsable = false
            problem = "a \(ColorTransformBuilder.modelName(space)) profile is not supported"
            return
        }
        switch ColorTransformCache.shared.conversion(for: .icc(data), layout: layout) {
        case .identity: isSRGB = true
        case .transform: break
        case .unusable(let reason):
            isUsable = false
            problem = reason
        }
    }

    /// The summary of what reading a file's colour description found; nil when the file says nothing.
    static func describing(_ reading: ColorReading) -> ColorProfileSummary? {
        switch reading.color {
        case .icc(let data)?:
            return ColorProfileSummary(icc: data)
        case .cicp(let cicp)?:
            let text = "CICP \(cicp.primaries)/\(cicp.transfer)/\(cicp.matrix)\(cicp.fullRange ? " full range" : "")"
            var summary = ColorProfileSummary(
                source: .cicp, description: text, model: .rgb, isSRGB: cicp.isSRGB,
                isUsable: true)
            if let hdr = HDRTransfer(cicp: cicp.transfer) {
                // PQ and HLG are tone-mapped to SDR by the AVIF and HEIF decoders, not converted through lcms2.
                let name = hdr == .pq ? "PQ" : "HLG"
                if HDRToneMapper.supports(primaries: cicp.primaries) {
                    summary.description = text + " (\(name) HDR, tone-mapped to SDR)"
                } else {
                    summary.isUsable = false
                    summary.problem = "\(name) HDR with CICP colour primaries \(cicp.primaries) is not tone-mapped"
                }
            } else if case .unusable(let reason) = ColorTransformCache.shared.conversion(
                for: .cicp(cicp), layout: .bgra)
            {
                summary.isUsable = false
                summary.problem = reason
            }
            return summary
        case .pngChunks(let gamma, let chromaticities)?:
            var parts = [String]()
            if let gamma { parts.append("gAMA \(Double(gamma) / 100_000)") }
            if chromaticities != nil { parts.append("cHRM") }
            var summary = ColorProfileSummary(
                source: .pngChunks, description: parts.joined(separator: ", "),
                model: .rgb, isSRGB: false, isUsable: true)
            switch ColorTransformCache.shared.conversion(for: reading.color!, layout: .bgra) {
            case .identity: summary.isSRGB = true
            case .transform: break
            case .unusable(let reason):
                summary.isUsable = false
                summary.problem = reason
            }
            return summary
        case nil:
            if let source = reading.srgbSource {
                return ColorProfileSummary(
                    source: source, description: "sRGB", model: .rgb, isSRGB: true, isUsable: true)
            }
            if let problem = reading.problem {
                return ColorProfileSummary(
                    source: .icc, description: nil, model: .other, isSRGB: false, isUsable: false,
                    problem: problem)
            }
            return nil
        }
    }
}

extension ImageProber {
    /// The image's colour description (embedded ICC profile, CICP, PNG chunks), summarised with lcms2; nil when
    /// the file describes none or is not an image. Reads the headers only; costs a parse of the profile and, the
    /// first time a profile is seen, building its transform (about a millisecond).
    public static func colorProfile(of bytes: UnsafeRawBufferPointer, limits: DecodeLimits = .default)
        -> ColorProfileSummary?
    {
        guard let format = format(of: bytes) else { return nil }
        return ColorProfileSummary.describing(EmbeddedColor.read(bytes, format: format, limits: limits))
    }
}

extension ColorProfile {
    /// lcms2's built-in sRGB profile (ICC v4), for writing an explicit sRGB profile.
    public static let sRGB: ColorProfile = ColorProfile(data: saved(cmsCreate_sRGBProfile()))

    /// A gray profile with a pure power curve and D65 white (for tests of gray colour management).
    static func gray(gamma: Double) -> ColorProfile {
        var white = cmsCIExyY(x: 0.3127, y: 0.3290, Y: 1)
        let curve = cmsBuildGamma(nil, gamma)
        defer { cmsFreeToneCurve(curve) }
        return ColorProfile(data: saved(cmsCreateGrayProfile(&white, curve)))
    }

    /// Serialises and closes a profile handle; empty when lcms2 fails.
    private static func saved(_ profile: cmsHPROFILE?) -> [UInt8] {
        guard let profile else { return [] }
        defer { cmsCloseProfile(profile) }
        var size: UInt32 = 0
        guard cmsSaveProfileToMem(profile, nil, &size) != 0, size > 0 else { return [] }
        var data = [UInt8](repeating: 0, count: Int(size))
        guard cmsSaveProfileToMem(profile, &data, &size) != 0 else { return [] }
        return data
    }
}
