import Darkroom
import DarkroomImage
import Foundation

/// The validated parameters of one `GET /v1/thumb` request: what to render, how big, in which format.
///
/// Parsing never allocates more than the query itself and refuses anything outside the configured limits, so a
/// request that passes is safe to hand to the pipeline.
package struct ThumbnailParameters: Sendable, Hashable {
    /// How the image is fitted into `width × height`.
    enum Fit: String, Sendable, Hashable, CaseIterable {
        /// Scale to fit inside the box, keeping aspect; the result may be smaller on one side.
        case contain
        /// Scale to cover the box and crop to exactly its size, where ``gravity`` says (the centre by default).
        case cover
        /// As `cover`, but a source smaller than the box is cropped to the box's aspect instead of staying whole.
        case fillDown = "fill-down"
        /// Scale to exactly the box, not keeping aspect (both `w` and `h` required).
        case force
        /// Scale to cover the box, keeping aspect, without cropping: one side is the box's, the other at least as
        /// long (thumbor's `full-fit-in`).
        case outside
        /// `cover` when the box and the image are both landscape or both portrait, else `contain` (imgproxy's
        /// `auto`); both `w` and `h` required.
        case auto
    }

    /// The output format asked for; `auto` negotiates from `Accept` and the image's alpha.
    enum Format: String, Sendable, Hashable, CaseIterable {
        case auto, jpeg, png, webp, avif, gif, jxl, ico
        /// The source's own format where Darkroom writes it (JPEG, PNG, WebP, GIF, AVIF, JPEG XL), else JPEG (PNG
        /// with alpha); the same bytes for every client (thumbor's and imgproxy's default).
        case source
    }

    /// The `src` parameter, percent-decoded: a path relative to the root, or an http(s) URL.
    let source: String
    /// Box width in pixels; `nil` means "any" (bounded by the height).
    let width: Int?
    /// Box height in pixels; `nil` means "any" (bounded by the width).
    let height: Int?
    /// How to fit. Default `contain`.
    let fit: Fit
    /// Output format. Default `auto`.
    var format: Format
    /// Lossy quality 1–100 for JPEG, WebP and AVIF; `nil` takes the output format's default
    /// (``ServerConfiguration/Limits/quality(for:)``).
    var quality: Int?
    /// `fq=jpeg:80:webp:70`: quality per output format, used when `q` is absent (imgproxy's `format_quality`).
    var formatQuality: [ImageFileFormat: Int] = [:]
    /// What the decode produces, worked out once from the parameters: the box and fit as a ``TargetSize``
    /// (``targetSize(openSide:)``), `crop=` (the region of the upright source kept before the
    /// resize), `min-w=`/`min-h=` (with `contain`, the smallest result: scaled up to it within `enlarge`, the
    /// overflow cropped from the centre; imgproxy's `min-width`/`min-height`), `enlarge=1` (a box larger than the
    /// source or the crop enlarges it; off by default), `page=N` (a multi-page file's page, from 0; imgproxy's
    /// `page`) and `time=S` (a video's frame at S seconds, the first at or after it, instead of its poster frame;
    /// imgproxy's `video_thumbnail_second`, thumbor-video-engine's `still()` filter).
    private(set) var geometry = OutputGeometry()
    /// `strip=0` keeps the source's EXIF (Orientation set to 1), `keep_copyright=1` only its Artist and Copyright;
    /// JPEG and PNG thumbnails only. `nil` (the default): no metadata.
    var keepMetadata: ExifMetadata.Keep?
    /// `progressive=1`: a JPEG thumbnail is written progressive.
    var progressive = false
    /// `still=1`: an animated source answers its first frame only, as a still image.
    var still = false
    /// `motion=1`: a video, or a Motion Photo or Live Photo, answers its motion as an animation (WebP or GIF): a few
    /// seconds at the thumbnail's size from `time=` (a file under the root only).
    var motion = false
    /// `hdr=keep`: a JPEG thumbnail of an Ultra HDR photo is Ultra HDR too, an AVIF of a PQ or HLG photo a PQ or HLG
    /// AVIF (``HDROutputMode/keep``), when nothing but the resize applies (no crop, operation, kept metadata or byte
    /// budget); `hdr=apply`: a 10-bit PQ AVIF for HDR displays, a gain map applied or PQ/HLG light rolled off for
    /// ``headroom`` (``HDROutputMode/apply``; a resize only, refused with anything else); `hdr=sdr`, the default:
    /// SDR.
    var hdr = HDROutputMode.sdr
    /// Whether `hdr=keep` may keep the source's HDR: nothing but the resize applies (no crop or operation, no kept
    /// metadata, no byte budget), since the kept outputs are made from the source's bytes by their own encoders.
    var keepsHDRAsItIs: Bool { processors.isEmpty && keepMetadata == nil && maxBytes == nil }
    /// `headroom=S` with `hdr=apply`: the display's headroom in stops (log2 of its peak over SDR white), 0…10; nil
    /// applies a gain map in full and keeps a PQ or HLG photo's whole range.
    var headroom: Double?
    /// Rotation, flips, blur, sharpening, padding and background (``ThumbnailOperations``).
    let operations: ThumbnailOperations

    /// Whether `source` names a remote resource (http(s) or s3 URL) rather than a path under the root.
    var isRemote: Bool {
        let lower = source.prefix(8).lowercased()
        return lower.hasPrefix("http://") || lower.hasPrefix("https://") || lower.hasPrefix("s3://")
    }

    /// `max_bytes=N`: lower a lossy format's quality until the thumbnail fits in N bytes (1,024…16 MiB).
    var maxBytes: Int?
    /// `g=`: where a `cover` crop sits; nil for the centre.
    let gravity: Gravity?

    /// The box the image is decoded into: `w × h` (times `dpr`), turned when a quarter turn follows.
    private var box: (width: Int?, height: Int?) {
        // `w` and `h` name the output: a quarter turn applied afterwards swaps the box the image is decoded into.
        operations.swapsSides ? (height, width) : (width, height)
    }

    /// ``box`` with a missing side taking the other's value (a square), for the fits that need both sides; parsing
    /// guarantees them at least one.
    private var squareBox: (width: Int, height: Int) {
        let (width, height) = box
        return (width ?? height ?? Self.unbounded, height ?? width ?? Self.unbounded)
    }

    /// The decode size: `fit(w, h)` for contain (a missing side is `openSide`); for cover `fill(w, h)` (of the
    /// ``squareBox``), or `cover(w, h)` when a gravity other than the centre or a trim places the crop
    /// (``processors`` then crops); `fillDown` and `stretch` for the other two.
    private func targetSize(openSide: Int) -> TargetSize {
        let (w, h) = squareBox
        switch fit {
        case .contain: return .fit(width: box.width ?? openSide, height: box.height ?? openSide)
        case .cover:
            return gravity == nil && operations.trim == nil ? .fill(width: w, height: h) : .cover(width: w, height: h)
        case .outside: return .cover(width: w, height: h)
        case .fillDown: return .fillDown(width: w, height: h)
        case .force: return .stretch(width: w, height: h)
        case .auto: return .auto(width: w, height: h)
        }
    }

    /// The processors after the decode: the gravity crop of a `cover`, then the operations.
    var processors: [any ImageProcessing] {
        var list: [any ImageProcessing] = []
        if let trim = operations.trim { list.append(ImageProcessors.Trim(tolerance: trim)) }
        if fit == .cover, gravity != nil || operations.trim != nil {
            // A placed crop, or a centred one after the trim (the decode then keeps the whole image)
            let (w, h) = squareBox
            list.append(ImageProcessors.CropToFill(width: w, height: h, gravity: gravity ?? .center()))
        }
        return list + operations.processors(box: (width, height))
    }

    /// The size used for a side that was not given: large enough never to bind, small enough not to overflow.
    static let unbounded = 1 << 20

    /// A stable string of every parameter that changes the rendered bytes except the negotiated format.
    package var renderKey: String {
        "\(width.map(String.init) ?? "-")x\(height.map(String.init) ?? "-")|\(fit.rawValue)|q\(quality.map(String.init) ?? "-")"
            + (still ? "|still" : "") + (motion ? "|motion" : "") + (hdr == .sdr ? "" : "|hdr-" + hdr.rawValue)
            + (headroom.map { "|hr\($0)" } ?? "") + (maxBytes.map { "|max\($0)" } ?? "") + "|"
            + geometry.key
            + (progressive ? "|prog" : "") + (keepMetadata.map { "|keep-" + $0.rawValue } ?? "")
            + formatQuality.sorted { $0.key.rawValue < $1.key.rawValue }.map { "|fq\($0.key.rawValue)\($0.value)" }
            .joined()
            + processors.map { "|" + $0.identifier }.joined()
    }

    /// Parses and validates `GET /v1/thumb` query items (already percent-decoded). Unknown names are ignored.
    /// - Throws: ``ServerError`` `badRequest` naming the parameter and the accepted range.
    package init(query: [(name: String, value: String)], limits: ServerConfiguration.Limits) throws(ServerError) {
        var source: String?
        var width: Int?
        var height: Int?
        var fit = Fit.contain
        var format = Format.auto
        var quality: Int?
        var crop: CropRegion?
        var formatQuality: [ImageFileFormat: Int] = [:]
        var minimumSize: MinimumSize?
        var strip = true
        var keepCopyright = false
        var enlarge = false
        var progressive = false
        var still = false
        var motion = false
        var hdr = HDROutputMode.sdr
        var headroom: Double?
        var operations = ThumbnailOperations()
        var gravity: Gravity?
        var maxBytes: Int?
        var dpr = 1.0
        var page = 0
        var time: Double?
        for (name, value) in query {
            if try operations.read(name, value, maxPadding: limits.maxOutputDimension) { continue }
            switch name {
            case "src": source = value
            case "w": width = try Self.dimension(value, name: "w", max: limits.maxOutputDimension)
            case "h": height = try Self.dimension(value, name: "h", max: limits.maxOutputDimension)
            case "fit":
                guard let f = Fit(rawValue: value) else {
                    throw ServerError(
                        .badRequest,
                        "fit must be contain, cover, fill-down, force, auto or outside, got '\(value.prefix(40))'")
                }
                fit = f
            case "format":
                guard let f = Format(rawValue: value) else {
                    throw ServerError(
                        .badRequest,
                        "format must be auto, source, jpeg, png, webp, avif, gif, jxl or ico, got '\(value.prefix(40))'"
                    )
                }
                format = f
            case "q":
                guard let q = Int(value), (1...100).contains(q) else {
                    throw ServerError(.badRequest, "q must be an integer 1...100, got '\(value.prefix(40))'")
                }
                quality = q
            case "g": gravity = try Self.gravity(value)
            case "crop": crop = try Self.crop(value)
            case "min-w":
                let n = try Self.dimension(value, name: name, max: limits.maxOutputDimension)
                minimumSize = MinimumSize(width: n, height: minimumSize?.height)
            case "min-h":
                let n = try Self.dimension(value, name: name, max: limits.maxOutputDimension)
                minimumSize = MinimumSize(width: minimumSize?.width, height: n)
            case "fq": formatQuality = try Self.formatQuality(value)
            case "expires":
                // A link that stops working at a given time (imgproxy's `expires`): answered as not found
                guard let time = Int(value) else {
                    throw ServerError(.badRequest, "expires must be a Unix time in seconds, got '\(value.prefix(40))'")
                }
                if Double(time) < Date().timeIntervalSince1970 { throw ServerError(.notFound, "the link has expired") }
            case "enlarge": enlarge = try Self.flag(value, name: name)
            case "progressive": progressive = try Self.flag(value, name: name)
            case "strip": strip = try Self.flag(value, name: name)
            case "keep_copyright": keepCopyright = try Self.flag(value, name: name)
            case "max_bytes":
                guard let n = Int(value), (1024...(16 << 20)).contains(n) else {
                    throw ServerError(
                        .badRequest, "max_bytes must be an integer 1024...16777216, got '\(value.prefix(40))'")
                }
                maxBytes = n
            case "dpr":
                guard let d = Double(value), d.isFinite, (1...8).contains(d) else {
                    throw ServerError(.badRequest, "dpr must be a number 1...8, got '\(value.prefix(40))'")
                }
                dpr = d
            case "still": still = try Self.flag(value, name: name)
            case "motion": motion = try Self.flag(value, name: name)
            case "hdr":
                guard let mode = HDROutputMode(rawValue: value) else {
                    throw ServerError(.badRequest, "hdr must be sdr, keep or apply, got '\(value.prefix(40))'")
                }
                hdr = mode
            case "headroom":
                guard let h = Double(value), h.isFinite, (0...10).contains(h) else {
                    throw ServerError(
                        .badRequest, "headroom must be a number of stops 0...10, got '\(value.prefix(40))'")
                }
                headroom = h
            case "page":
                // Pages a file does not have are refused when it is decoded (400 as well), never drawn as page 0
                guard let n = Int(value), (0..<limits.decode.maxPages).contains(n) else {
                    throw ServerError(
                        .badRequest,
                        "page must be an integer 0...\(limits.decode.maxPages - 1), got '\(value.prefix(40))'")
                }
                page = n
            case "time":
                // A video's frame at this many seconds (the first at or after it) instead of its poster frame
                guard let t = Double(value), t.isFinite, (0...1e7).contains(t) else {
                    throw ServerError(.badRequest, "time must be a number of seconds ≥ 0, got '\(value.prefix(40))'")
                }
                time = t
            default: continue
            }
        }
        guard let source else { throw ServerError(.badRequest, "src is required") }
        try Self.checkSource(source, limits: limits)
        if width == nil && height == nil && fit != .contain {  // (auto and force are checked below)
            throw ServerError(.badRequest, "fit=\(fit.rawValue) needs w or h")
        }
        if fit == .force || fit == .auto, width == nil || height == nil {
            throw ServerError(.badRequest, "fit=\(fit.rawValue) needs both w and h")
        }
        if gravity != nil, fit != .cover { throw ServerError(.badRequest, "g applies to fit=cover only") }
        if minimumSize != nil, fit != .contain {
            throw ServerError(.badRequest, "min-w and min-h apply to fit=contain only")
        }
        if dpr != 1 {  // the box in device pixels, still within the limit
            let scale = { (side: Int?) in side.map { min(limits.maxOutputDimension, Int((Double($0) * dpr).rounded())) }
            }
            width = scale(width)
            height = scale(height)
            minimumSize = minimumSize.map { MinimumSize(width: scale($0.width), height: scale($0.height)) }
        }
        self.source = source
        self.width = width
        self.height = height
        self.fit = fit
        self.format = format
        self.quality = quality
        self.still = still
        self.motion = motion
        if still && motion { throw ServerError(.badRequest, "still=1 and motion=1 exclude each other") }
        if motion && hdr != .sdr { throw ServerError(.badRequest, "motion=1 writes SDR frames: hdr does not apply") }
        self.hdr = hdr
        self.headroom = headroom
        self.formatQuality = formatQuality
        keepMetadata = !strip ? .all : keepCopyright ? .copyright : nil
        if keepMetadata != nil, ![.auto, .source, .jpeg, .png].contains(format) {
            throw ServerError(
                .badRequest, "metadata can be kept in JPEG and PNG thumbnails only, not format=\(format.rawValue)")
        }
        self.progressive = progressive
        self.operations = operations
        self.gravity = gravity
        self.maxBytes = maxBytes
        // The side a `contain` box leaves open: unbounded (the source's size binds), or the output limit when
        // enlarging (so a long thin image cannot be blown up past it) or when no box is given at all
        let openSide = enlarge || (width == nil && height == nil) ? limits.maxOutputDimension : Self.unbounded
        geometry = OutputGeometry(
            size: targetSize(openSide: openSide),
            crop: crop, minimumSize: minimumSize, allowsUpscaling: enlarge, page: page, time: time)
        if headroom != nil, hdr != .apply { throw ServerError(.badRequest, "headroom applies to hdr=apply only") }
        if hdr == .apply {
            guard format == .auto || format == .avif else {
                throw ServerError(.badRequest, "hdr=apply writes AVIF (PQ), not format=\(format.rawValue)")
            }
            guard geometry.isWholeImage, processors.isEmpty, keepMetadata == nil, maxBytes == nil else {
                throw ServerError(
                    .badRequest,
                    "hdr=apply resizes the whole image only: no crop, cover, operations, kept metadata or max_bytes")
            }
        }
    }

    /// The `src` of `query` (the last one), checked: present, not empty, within ``ServerConfiguration/Limits/maxSourceLength``.
    static func source(in query: [(name: String, value: String)], limits: ServerConfiguration.Limits)
        throws(ServerError) -> String
    {
        guard let source = query.last(where: { $0.name == "src" })?.value else {
            throw ServerError(.badRequest, "src is required")
        }
        try checkSource(source, limits: limits)
        return source
    }

    private static func checkSource(_ source: String, limits: ServerConfiguration.Limits) throws(ServerError) {
        guard !source.isEmpty else { throw ServerError(.badRequest, "src is required") }
        guard source.utf8.count <= limits.maxSourceLength else {
            throw ServerError(.badRequest, "src is longer than \(limits.maxSourceLength) bytes")
        }
    }

    private static func dimension(_ value: String, name: String, max: Int) throws(ServerError) -> Int {
        guard let n = Int(value), (1...max).contains(n) else {
            throw ServerError(.badRequest, "\(name) must be an integer 1...\(max), got '\(value.prefix(40))'")
        }
        return n
    }
}
