/// What an HDR image says about its light: how its signal encodes light, in which primaries, and how bright it gets.
public struct HDRDetails: Sendable, Hashable, Codable {
    /// `pq` (SMPTE ST 2084, absolute light up to 10,000 nits) or `hlg` (ARIB STD-B67, relative scene light).
    public var transfer: String
    /// The CICP colour-primaries code: 9 BT.2020, 12 Display P3, 1 BT.709.
    public var primaries: Int
    /// The content light level (`clli`): the brightest pixel, nits; nil when the file has none.
    public var maxContentLightLevel: Int?
    /// The content light level (`clli`): the brightest frame's average, nits; nil when the file has none.
    public var maxFrameAverageLightLevel: Int?
    /// Whether a decode to sRGB tone-maps it to SDR (reference white, 203 nits, becomes SDR white); false when the
    /// primaries are not supported or an ICC profile takes precedence, and the pixels are then left as they are.
    public var toneMapped: Bool

    /// Creates details.
    public init(
        transfer: String, primaries: Int, maxContentLightLevel: Int? = nil, maxFrameAverageLightLevel: Int? = nil,
        toneMapped: Bool
    ) {
        self.transfer = transfer
        self.primaries = primaries
        self.maxContentLightLevel = maxContentLightLevel
        self.maxFrameAverageLightLevel = maxFrameAverageLightLevel
        self.toneMapped = toneMapped
    }
}

extension HDRDetails {
    /// The details of an image with CICP `primaries`/`transfer`, or nil when the transfer is SDR. `hasICC`: an ICC
    /// profile takes precedence over CICP; `level`: the content light level the file states (HEIF/AVIF `clli`, PNG
    /// `cLLi`), nits.
    package init?(primaries: Int, transfer: Int, hasICC: Bool, lightLevel level: (maxCLL: Int, maxFALL: Int)?) {
        guard let hdr = HDRTransfer(cicp: transfer) else { return nil }
        self.init(
            transfer: hdr == .pq ? "pq" : "hlg", primaries: primaries, maxContentLightLevel: level?.maxCLL,
            maxFrameAverageLightLevel: level?.maxFALL,
            toneMapped: !hasICC && HDRTransfer.toneMapped(cicp: transfer, primaries: primaries) != nil)
    }
}

extension HDRDetails {
    /// The transfer these details name.
    var signal: HDRTransfer { transfer == "pq" ? .pq : .hlg }

    /// The signal as CICP code points: these primaries, PQ (16) or HLG (18), RGB, full range.
    var cicp: EmbeddedColor.CICP {
        EmbeddedColor.CICP(primaries: primaries, transfer: signal == .pq ? 16 : 18, matrix: 0, fullRange: true)
    }
}
