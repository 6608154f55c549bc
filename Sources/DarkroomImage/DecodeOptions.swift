/// How big a decoded image should be.
public enum TargetSize: Sendable, Hashable {
    /// The image's own size (after orientation).
    case original
    /// Scale so that the longest side (after orientation) is at most this many pixels, keeping aspect.
    case maxPixelSize(Int)
    /// Scale to fit inside `width × height`, keeping aspect (the result may be smaller on one side).
    case fit(width: Int, height: Int)
    /// Scale to cover `width × height` and crop the center to exactly that size.
    case fill(width: Int, height: Int)
    /// Scale to cover `width × height`, keeping aspect, without cropping: one side is the box's, the other at least
    /// as long (for a crop placed afterwards, e.g. by gravity).
    case cover(width: Int, height: Int)
    /// Scale to exactly `width × height`, not keeping aspect (each side capped at the source's unless upscaling).
    case stretch(width: Int, height: Int)
    /// Like ``fill(width:height:)``, except that a source smaller than the box is not enlarged but cropped to the
    /// box's aspect ratio at its own scale (imgproxy's `fill-down`).
    case fillDown(width: Int, height: Int)
    /// ``fill(width:height:)`` when the box and the (upright) image are both landscape or both portrait,
    /// ``fit(width:height:)`` otherwise (imgproxy's `auto`).
    case auto(width: Int, height: Int)
}

/// The smallest width and height a ``TargetSize/fit(width:height:)`` result may have (either may be `nil`).
public struct MinimumSize: Sendable, Hashable {
    /// The smallest width, or `nil`.
    public var width: Int?
    /// The smallest height, or `nil`.
    public var height: Int?

    /// Creates a minimum size.
    public init(width: Int? = nil, height: Int? = nil) { (self.width, self.height) = (width, height) }

    /// A short stable description for cache keys.
    public var key: String { "min\(width.map(String.init) ?? "-")x\(height.map(String.init) ?? "-")" }
}

/// The resampling filter used for the final resize.
public enum ResamplingFilter: String, Sendable, Hashable, CaseIterable {
    /// Lanczos with 3 lobes: sharp, no aliasing; the default.
    case lanczos3
    /// Area average (box): every source pixel weighs by its coverage; softest, fastest.
    case box
    /// Triangle (bilinear with proper support when shrinking).
    case triangle
}

/// Options for one decode. A value type: copy, tweak, pass.
public struct DecodeOptions: Sendable, Hashable {
    /// The output size. Default ``TargetSize/original``.
    public var size: TargetSize
    /// A region of the upright source kept before the resize (``size`` then applies to it). Default `nil`, the
    /// whole image.
    public var crop: CropRegion? = nil
    /// With ``TargetSize/fit(width:height:)``: the smallest width and height the result may have; the image is
    /// scaled up to them (within ``allowUpscaling``) and what then exceeds the box is cropped from the centre.
    /// Default `nil`.
    public var minimumSize: MinimumSize? = nil
    /// Whether the EXIF orientation is applied so the result is upright. Default `true`.
    public var applyOrientation: Bool
    /// Output pixel format. Default ``PixelFormatPreference/auto`` (the smallest that loses nothing).
    public var pixelFormat: PixelFormatPreference
    /// Whether a target larger than the source enlarges it. Default `false` (thumbnails never upscale).
    public var allowUpscaling: Bool
    /// The final resampling filter. Default ``ResamplingFilter/lanczos3``.
    public var filter: ResamplingFilter
    /// How large the codec's shrink-on-load result must stay relative to the target before the final
    /// resample: JPEG picks the strongest DCT scale (1/2, 1/4, 1/8) whose output is at least
    /// `target × shrinkOnLoadMargin` on both axes. 1.0 (default) measured 45–53 dB PSNR against a full decode
    /// (41–48 dB for 12 MP → 256 px with ``chromaFromDC``; docs/PERFORMANCE.md); larger values trade speed for
    /// fidelity.
    public var shrinkOnLoadMargin: Double
    /// Whether a truncated JPEG is returned with its missing rows filled gray (`true`) or refused with
    /// `.truncated` (`false`, the default: a cache must not keep half an image forever).
    public var acceptTruncated: Bool
    /// Limits against hostile input.
    public var limits: DecodeLimits
    /// Whether a JPEG thumbnail at about 1/16 of the source or smaller takes its 4:2:0 colour from the DC
    /// coefficients alone — one sample per 16×16 source pixels, about the output's own resolution there — so that
    /// the decode skips every chroma AC coefficient. Default `true`: a 12 MP → 256 px decode is ~1.4× faster;
    /// the cost is fine colour detail, measured 41.6–47.6 dB PSNR against a full decode where `false` (colour
    /// exactly as libjpeg's 1/8 output) gives 45.7–53.9 dB (docs/PERFORMANCE.md). Luma is unaffected.
    public var chromaFromDC: Bool
    /// What happens to the colours the file describes (ICC profile, CICP, PNG gAMA/cHRM). Default
    /// ``OutputColorSpace/sRGB``: converted with lcms2 after resampling, so the cost is the output's (about
    /// 1 ms for a 256 px thumbnail; none for sRGB-equivalent profiles, recognised once and cached).
    public var colorSpace: OutputColorSpace
    /// Which page of a multi-page file (TIFF) to decode, from 0. Default 0, the first; other formats have one page
    /// and refuse any other value with `.invalidArgument`.
    public var page: Int = 0

    /// Creates options; omitted values take their documented defaults.
    public init(
        size: TargetSize = .original, applyOrientation: Bool = true, pixelFormat: PixelFormatPreference = .auto,
        allowUpscaling: Bool = false, filter: ResamplingFilter = .lanczos3, shrinkOnLoadMargin: Double = 1.0,
        acceptTruncated: Bool = false, limits: DecodeLimits = .default, chromaFromDC: Bool = true,
        colorSpace: OutputColorSpace = .sRGB
    ) {
        self.size = size
        self.applyOrientation = applyOrientation
        self.pixelFormat = pixelFormat
        self.allowUpscaling = allowUpscaling
        self.filter = filter
        self.shrinkOnLoadMargin = shrinkOnLoadMargin
        self.acceptTruncated = acceptTruncated
        self.limits = limits
        self.chromaFromDC = chromaFromDC
        self.colorSpace = colorSpace
    }
}
