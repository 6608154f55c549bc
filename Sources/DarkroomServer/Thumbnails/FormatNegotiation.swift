import DarkroomImage
import Foundation

/// Which encoding a thumbnail response uses, decided before decoding so the cache key and `ETag` are known early.
enum OutputVariant: String, Sendable, Hashable {
    /// An explicit `format=`.
    case jpeg, png, webp, avif, gif, jxl, ico
    /// `format=auto`, the client accepts JPEG XL and the server offers it (``ServerConfiguration/autoJXL``).
    case autoJXL = "auto-jxl"
    /// `format=auto`, the client accepts AVIF and the server offers it (``ServerConfiguration/autoAVIF``).
    case autoAVIF = "auto-avif"
    /// `format=auto` and the client accepts WebP.
    case autoWebP = "auto-webp"
    /// `format=auto` and it does not: JPEG, or PNG when the image has alpha.
    case autoLegacy = "auto-legacy"
    /// `format=source`: the source's own format where Darkroom writes it, else JPEG or PNG (never negotiated).
    case source

    /// Whether the response depends on `Accept` (so it needs `Vary: Accept`).
    var variesByAccept: Bool { self == .autoJXL || self == .autoAVIF || self == .autoWebP || self == .autoLegacy }

    /// Picks the variant for `format` and the request's `Accept` header; `auto` answers JPEG XL only when
    /// `offerJXL` and AVIF only when `offerAVIF` (their encodes cost several times WebP's); JPEG XL first.
    init(_ format: ThumbnailParameters.Format, accept: String?, offerAVIF: Bool = false, offerJXL: Bool = false) {
        switch format {
        case .jpeg: self = .jpeg
        case .png: self = .png
        case .webp: self = .webp
        case .avif: self = .avif
        case .gif: self = .gif
        case .jxl: self = .jxl
        case .ico: self = .ico
        case .source: self = .source
        case .auto:
            if offerJXL && Self.accepts("image/jxl", accept) {
                self = .autoJXL
                return
            }
            if offerAVIF && Self.accepts("image/avif", accept) {
                self = .autoAVIF
                return
            }
            self = Self.acceptsWebP(accept) ? .autoWebP : .autoLegacy
        }
    }

    /// The file format for an image that does or does not have alpha, from a source in `source` format (nil when
    /// unknown; only ``source`` looks at it).
    func fileFormat(hasAlpha: Bool, source: ImageFileFormat? = nil) -> ImageFileFormat {
        switch self {
        case .jpeg: .jpeg
        case .png: .png
        case .webp, .autoWebP: .webp
        case .avif, .autoAVIF: .avif
        case .autoLegacy: hasAlpha ? .png : .jpeg
        case .gif: .gif
        case .jxl, .autoJXL: .jxl
        case .ico: .ico
        case .source:
            switch source {
            case .jpeg?, .png?, .webp?, .gif?, .avif?, .jxl?: source!
            default: hasAlpha ? .png : .jpeg
            }
        }
    }

    /// The format an animated source in `source` format keeps its frames in, nil when the answer is a still (JPEG,
    /// PNG, AVIF: the first frame). `auto` answers animated WebP to clients that take WebP (every browser that takes
    /// AVIF does), else GIF; `source` keeps an animated GIF or WebP in its format.
    func animatedFormat(source: ImageFileFormat?) -> ImageFileFormat? {
        switch self {
        case .webp, .autoWebP, .autoAVIF, .autoJXL: .webp
        case .gif, .autoLegacy: .gif
        case .jpeg, .png, .avif, .jxl, .ico: nil
        case .source: source == .gif || source == .webp ? source : nil
        }
    }

    /// Whether some animated source can be answered animated (before the source's format is known).
    var mayAnimate: Bool { self == .source || animatedFormat(source: nil) != nil }

    /// True when `Accept` names `image/webp` with a non-zero quality. Wildcards (`*/*`, `image/*`) do not count:
    /// old browsers send them without decoding WebP.
    static func acceptsWebP(_ accept: String?) -> Bool { accepts("image/webp", accept) }

    /// True when `Accept` names `mediaType` (lowercase) with a non-zero quality; wildcards do not count.
    static func accepts(_ mediaType: String, _ accept: String?) -> Bool {
        guard let accept else { return false }
        for range in accept.split(separator: ",") {
            let parts = range.split(separator: ";")
            guard let type = parts.first?.trimmingCharacters(in: .whitespaces).lowercased(), type == mediaType
            else { continue }
            var q = 1.0
            for p in parts.dropFirst() {
                let kv = p.split(separator: "=", maxSplits: 1)
                if kv.count == 2, kv[0].trimmingCharacters(in: .whitespaces).lowercased() == "q" {
                    q = Double(kv[1].trimmingCharacters(in: .whitespaces)) ?? 0
                }
            }
            return q > 0
        }
        return false
    }
}
