/// What a decode produces, as one value: the size and how the image is fitted to it, the region of the source kept
/// before the resize, the smallest result, whether it may enlarge, the pixel format, whether the EXIF orientation is
/// applied, which page of the file, and which frame of a video.
///
/// Every layer carries this value whole — ``DecodeOptions/geometry``, an image request's and a cache key's geometry,
/// the server's parsed parameters — so a new property of the output is declared here once. It holds the one sizing
/// rule (``outputSize(for:)``; the decoders' plan is worked out from the same code) and its own cache key (``key``).
/// A value type of a few words: copy, tweak, pass.
public struct OutputGeometry: Sendable, Hashable, Codable {
    /// The output size and how the image is fitted to it. Default ``TargetSize/original``.
    public var size: TargetSize
    /// A region of the upright source kept before the resize (``size`` then applies to it); the decode reads only
    /// what it needs for it. Default `nil`, the whole image.
    public var crop: CropRegion?
    /// With ``TargetSize/fit(width:height:)``: the smallest width and height the result may have; the image is
    /// scaled up to them (within ``allowsUpscaling``) and what then exceeds the box is cropped from the centre.
    /// Default `nil`.
    public var minimumSize: MinimumSize?
    /// Whether a target larger than the source (or the crop) enlarges it. Default `false`: thumbnails never upscale.
    /// An SVG has no native resolution and is always drawn at the size asked for.
    public var allowsUpscaling: Bool
    /// The output pixel format. Default ``PixelFormatPreference/auto`` (the smallest that loses nothing).
    public var pixelFormat: PixelFormatPreference
    /// Whether the EXIF orientation is applied so the result is upright. Default `true`.
    public var appliesOrientation: Bool
    /// Which page of a multi-page file (TIFF) to decode, from 0. Default 0, the first; other formats have one page
    /// and refuse any other value with `.invalidArgument`.
    public var page: Int
    /// For a video: the frame at this many seconds from its start (the first whose time is at or after it, as
    /// `ffmpeg -ss` gives; the last frame when past the end). Default `nil`, the poster frame, chosen as thumbnailers
    /// do (a keyframe near a tenth of the way in that is not black or blank). Images ignore it.
    public var time: Double?

    /// Creates a geometry; omitted values take their documented defaults.
    public init(
        size: TargetSize = .original, crop: CropRegion? = nil, minimumSize: MinimumSize? = nil,
        allowsUpscaling: Bool = false, pixelFormat: PixelFormatPreference = .auto, appliesOrientation: Bool = true,
        page: Int = 0, time: Double? = nil
    ) {
        self.size = size
        self.crop = crop
        self.minimumSize = minimumSize
        self.allowsUpscaling = allowsUpscaling
        self.pixelFormat = pixelFormat
        self.appliesOrientation = appliesOrientation
        self.page = page
        self.time = time
    }

    /// A short stable string of every property, for memory, disk and sharing keys (`fill256x256|bgra8Premultiplied`,
    /// with the crop, minimum size, `up`, `stored` orientation, page and video time in front when they are not the
    /// defaults).
    /// Cost: a few small string appends.
    public var key: String {
        var key = ""
        if let crop { key += crop.key + "|" }
        if let minimumSize { key += minimumSize.key + "|" }
        if allowsUpscaling { key += "up|" }
        if !appliesOrientation { key += "stored|" }
        if page != 0 { key += "page\(page)|" }
        if let time { key += "t\(time)|" }
        return key + size.key + "|" + pixelFormat.key
    }

    /// Whether the output is the whole image, only resized: no crop, and a size that fits or stretches
    /// (``TargetSize/original``, ``TargetSize/maxPixelSize(_:)``, ``TargetSize/fit(width:height:)``,
    /// ``TargetSize/stretch(width:height:)``) rather than one that may crop. An output made with a gain map needs
    /// it, the map being laid over the whole image. Cost: a comparison.
    public var isWholeImage: Bool {
        guard crop == nil else { return false }
        switch size {
        case .original, .maxPixelSize, .fit, .stretch: return true
        case .fill, .cover, .fillDown, .auto: return false
        }
    }

    /// The output's width and height (upright when ``appliesOrientation``) for an image with `probe`'s header: the
    /// size the decode will return, known before any pixel is decoded. Cost: arithmetic only.
    /// - Throws: `.invalidArgument` for a non-positive target size or a crop outside the image.
    public func outputSize(for probe: ImageProbe) throws(DarkroomImageError) -> (width: Int, height: Int) {
        let plan = try plan(for: probe)
        let transposed = appliesOrientation && probe.orientation.swapsDimensions
        return transposed ? (plan.outputHeight, plan.outputWidth) : (plan.outputWidth, plan.outputHeight)
    }

    /// The decode plan for `probe`: output size and the part of the stored source it shows, both in the stored
    /// orientation (the way the codec delivers rows). The one place the sizing rule lives. Cost: arithmetic only.
    /// - Throws: `.invalidArgument` for a non-positive target size or a crop outside the image.
    package func plan(for probe: ImageProbe) throws(DarkroomImageError) -> DecodePlan {
        let transposed = appliesOrientation && probe.orientation.swapsDimensions
        let uprightWidth = Double(transposed ? probe.height : probe.width)
        let uprightHeight = Double(transposed ? probe.width : probe.height)
        // The crop (upright pixels) is the source every size below is worked out from
        let region =
            try crop?.rect(width: uprightWidth, height: uprightHeight)
            ?? SourceRect(x: 0, y: 0, width: uprightWidth, height: uprightHeight)
        let ow = region.width  // oriented source size
        let oh = region.height
        // A vector document has no native resolution: it is drawn at the size asked for, larger or smaller
        let cap = allowsUpscaling || probe.format == .svg ? Double.infinity : 1.0
        var outW: Int
        var outH: Int
        var cropW = ow
        var cropH = oh
        func scaled(_ v: Double, _ s: Double) -> Int { max(1, Int((v * s).rounded())) }
        var size = size
        if case .auto(let w, let h) = size {
            size = (w >= h) == (ow >= oh) ? .fill(width: w, height: h) : .fit(width: w, height: h)
        }
        switch size {
        case .original:
            outW = Int(ow)
            outH = Int(oh)
        case .maxPixelSize(let n):
            guard n > 0 else { throw DarkroomImageError(.invalidArgument, "max pixel size must be positive, got \(n)") }
            let s = min(Double(n) / max(ow, oh), cap)
            outW = scaled(ow, s)
            outH = scaled(oh, s)
            if max(outW, outH) > n { if outW >= outH { outW = n } else { outH = n } }
        case .fit(let w, let h):
            guard w > 0, h > 0 else {
                throw DarkroomImageError(.invalidArgument, "fit size must be positive, got \(w)×\(h)")
            }
            var s = min(min(Double(w) / ow, Double(h) / oh), cap)
            var grown = false
            if let minimumSize {
                // At least the minimum on each side it names (never past the cap); what then overflows the box is
                // cropped from the centre (imgproxy's min-width/min-height)
                let needed = min(max(Double(minimumSize.width ?? 0) / ow, Double(minimumSize.height ?? 0) / oh), cap)
                grown = needed > s
                s = max(s, needed)
            }
            outW = min(w, scaled(ow, s))
            outH = min(h, scaled(oh, s))
            if grown {
                cropW = min(ow, Double(outW) / s)
                cropH = min(oh, Double(outH) / s)
            }
        case .fill(var w, var h), .fillDown(var w, var h):
            guard w > 0, h > 0 else {
                throw DarkroomImageError(.invalidArgument, "fill size must be positive, got \(w)×\(h)")
            }
            let cover = max(Double(w) / ow, Double(h) / oh)
            if case .fillDown = size, cover > cap {
                // Too small to fill the box: the box shrinks (keeping its aspect) until the source covers it.
                w = max(1, Int((Double(w) / cover).rounded(.down)))
                h = max(1, Int((Double(h) / cover).rounded(.down)))
            }
            let s = min(max(Double(w) / ow, Double(h) / oh), cap)
            outW = min(w, scaled(ow, s))
            outH = min(h, scaled(oh, s))
            cropW = min(ow, Double(outW) / s)
            cropH = min(oh, Double(outH) / s)
        case .cover(let w, let h):
            guard w > 0, h > 0 else {
                throw DarkroomImageError(.invalidArgument, "cover size must be positive, got \(w)×\(h)")
            }
            let s = min(max(Double(w) / ow, Double(h) / oh), cap)
            outW = scaled(ow, s)
            outH = scaled(oh, s)
        case .stretch(let w, let h):
            guard w > 0, h > 0 else {
                throw DarkroomImageError(.invalidArgument, "stretch size must be positive, got \(w)×\(h)")
            }
            outW = allowsUpscaling ? w : min(w, Int(ow))
            outH = allowsUpscaling ? h : min(h, Int(oh))
        case .auto: preconditionFailure("auto is resolved to fill or fit above")
        }
        let upright = SourceRect(
            x: region.x + (ow - cropW) / 2, y: region.y + (oh - cropH) / 2, width: cropW, height: cropH)
        let orientation = appliesOrientation ? probe.orientation : .up
        return DecodePlan(
            outputWidth: transposed ? outH : outW, outputHeight: transposed ? outW : outH,
            sourceRect: orientation.storedRect(upright, uprightWidth: uprightWidth, uprightHeight: uprightHeight),
            sourceWidth: probe.width, sourceHeight: probe.height)
    }
}

extension PixelFormatPreference {
    /// A short stable description for cache keys: `auto`, or the exact format's name.
    public var key: String {
        switch self {
        case .auto: "auto"
        case .exactly(let format): format.rawValue
        }
    }
}
