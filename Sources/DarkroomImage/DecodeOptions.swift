/// The resampling filter used for the final resize.
public enum ResamplingFilter: String, Sendable, Hashable, CaseIterable, Codable {
    /// Lanczos with 3 lobes: sharp, no aliasing; the default.
    case lanczos3
    /// Area average (box): every source pixel weighs by its coverage; softest, fastest.
    case box
    /// Triangle (bilinear with proper support when shrinking).
    case triangle
}

/// Options for one decode: the output (``geometry``) and how to get there (filter, shortcuts, colour, limits).
/// A value type: copy, tweak, pass.
public struct DecodeOptions: Sendable, Hashable, Codable {
    /// What the decode produces: size, crop, minimum size, upscaling, pixel format, orientation and page. Default
    /// the whole image at its own size, upright, in the smallest pixel format that loses nothing.
    public var geometry: OutputGeometry
    /// The final resampling filter. Default ``ResamplingFilter/lanczos3``.
    public var filter: ResamplingFilter
    /// How large the codec's shrink-on-load result must stay relative to the target before the final
    /// resample: JPEG picks the strongest DCT scale (1/2, 1/4, 1/8) whose output is at least
    /// `target × shrinkOnLoadMargin` on both axes. 1.0 (default) keeps the final resample a reduction, which measures
    /// as close to a full decode (docs/PERFORMANCE.md, "Decode"); larger values trade speed for fidelity.
    public var shrinkOnLoadMargin: Double
    /// Whether a truncated JPEG is returned with its missing rows filled gray, and an Adam7-interlaced PNG with the
    /// passes it holds whole (each pixel drawn from the nearest one they hold) (`true`), or refused with
    /// `.truncated` (`false`, the default: a cache must not keep half an image forever).
    public var acceptTruncated: Bool
    /// Limits against hostile input.
    public var limits: DecodeLimits
    /// Whether a JPEG thumbnail at about 1/16 of the source or smaller takes its 4:2:0 colour from the DC
    /// coefficients alone — one sample per 16×16 source pixels, about the output's own resolution there — so that
    /// the decode skips every chroma AC coefficient. Default `true`: faster, at the cost of fine colour detail
    /// (luma is unaffected); `false` gives colour exactly as libjpeg's 1/8 output. Both are measured against a full
    /// decode in docs/PERFORMANCE.md ("Decode").
    public var chromaFromDC: Bool
    /// What happens to the colours the file describes (ICC profile, CICP, PNG gAMA/cHRM). Default
    /// ``OutputColorSpace/sRGB``: converted with lcms2 after resampling, so the cost is the output's pixels, not the
    /// source's (none for sRGB-equivalent profiles, recognised once and cached).
    public var colorSpace: OutputColorSpace
    /// Whether a HEIF decode must use a thumbnail item (the largest of the primary's shape when none covers the
    /// output) and fail when there is none: set by ``ImageDecoder/decodeEmbeddedThumbnail(_:options:)``.
    var embeddedThumbnailOnly = false

    /// Creates options; omitted values take their documented defaults.
    public init(
        geometry: OutputGeometry, filter: ResamplingFilter = .lanczos3,
        shrinkOnLoadMargin: Double = 1.0, acceptTruncated: Bool = false, limits: DecodeLimits = .default,
        chromaFromDC: Bool = true, colorSpace: OutputColorSpace = .sRGB
    ) {
        self.geometry = geometry
        self.filter = filter
        self.shrinkOnLoadMargin = shrinkOnLoadMargin
        self.acceptTruncated = acceptTruncated
        self.limits = limits
        self.chromaFromDC = chromaFromDC
        self.colorSpace = colorSpace
    }

    /// Creates options from the commonest parts of a geometry (the rest of it takes its defaults); omitted values
    /// take their documented defaults.
    public init(
        size: TargetSize = .original, pixelFormat: PixelFormatPreference = .auto, allowsUpscaling: Bool = false,
        appliesOrientation: Bool = true, filter: ResamplingFilter = .lanczos3, shrinkOnLoadMargin: Double = 1.0,
        acceptTruncated: Bool = false,
        limits: DecodeLimits = .default, chromaFromDC: Bool = true, colorSpace: OutputColorSpace = .sRGB
    ) {
        self.init(
            geometry: OutputGeometry(
                size: size, allowsUpscaling: allowsUpscaling, pixelFormat: pixelFormat,
                appliesOrientation: appliesOrientation),
            filter: filter, shrinkOnLoadMargin: shrinkOnLoadMargin, acceptTruncated: acceptTruncated, limits: limits,
            chromaFromDC: chromaFromDC, colorSpace: colorSpace)
    }
}
