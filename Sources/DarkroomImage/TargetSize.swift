/// How big a decoded image should be.
public enum TargetSize: Sendable, Hashable, Codable {
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
public struct MinimumSize: Sendable, Hashable, Codable {
    /// The smallest width, or `nil`.
    public var width: Int?
    /// The smallest height, or `nil`.
    public var height: Int?

    /// Creates a minimum size.
    public init(width: Int? = nil, height: Int? = nil) { (self.width, self.height) = (width, height) }

    /// A short stable description for cache keys.
    public var key: String { "min\(width.map(String.init) ?? "-")x\(height.map(String.init) ?? "-")" }
}

extension TargetSize {
    /// A short stable description for cache keys and logs (`max256`, `fill300x200`, …).
    public var key: String {
        switch self {
        case .original: "original"
        case .maxPixelSize(let n): "max\(n)"
        case .fit(let w, let h): "fit\(w)x\(h)"
        case .fill(let w, let h): "fill\(w)x\(h)"
        case .cover(let w, let h): "cover\(w)x\(h)"
        case .stretch(let w, let h): "stretch\(w)x\(h)"
        case .fillDown(let w, let h): "filldown\(w)x\(h)"
        case .auto(let w, let h): "auto\(w)x\(h)"
        }
    }
}

extension TargetSize {
    /// The largest output this size can produce, whatever the source: the box (the side for
    /// ``maxPixelSize(_:)``), or `nil` where the source's own size binds (``original``, and ``cover(width:height:)``,
    /// whose longer side follows the source's aspect).
    public var bounds: (width: Int, height: Int)? {
        switch self {
        case .original, .cover: nil
        case .maxPixelSize(let n): (n, n)
        case .fit(let w, let h), .fill(let w, let h), .stretch(let w, let h), .fillDown(let w, let h),
            .auto(let w, let h):
            (w, h)
        }
    }
}
