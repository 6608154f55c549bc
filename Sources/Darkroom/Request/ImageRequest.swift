import DarkroomImage
import Foundation

/// What to load and how to present it: a value type, cheap to copy (a source, a size, a few processors).
///
/// Two requests with the same ``source``, ``geometry``, ``processors`` identifiers and cache-relevant ``options`` are
/// *identical*: while one is in flight the other joins it. Requests that differ only in ``processors`` share the
/// fetch and the decode; requests that differ in ``geometry`` share the fetch.
public struct ImageRequest: Sendable {
    /// Where the encoded bytes come from.
    public enum Source: Sendable, Hashable {
        /// An `http`, `https` or `file` URL.
        case url(URL)
        /// A local file path.
        case file(String)
        /// Bytes already in memory; `id` names them for the caches (two sources with the same id are the same
        /// image) and is all that is hashed.
        case data(id: String, bytes: [UInt8])

        /// Sources are equal when their ``key``s are (in-memory bytes compare by id only).
        public static func == (a: Source, b: Source) -> Bool { a.key == b.key }
        /// Hashes the ``key``.
        public func hash(into hasher: inout Hasher) { hasher.combine(key) }

        /// The string that names this source in every cache key.
        public var key: String {
            switch self {
            case .url(let url): url.isFileURL ? url.path : url.absoluteString
            case .file(let path): path
            case .data(let id, _): "data:" + id
            }
        }

        /// The host for per-host network limits; `nil` for local sources.
        var host: String? {
            if case .url(let url) = self, !url.isFileURL { return url.host ?? "" }
            return nil
        }
    }

    /// Where the bytes come from.
    public var source: Source { didSet { sourceKey = imageID ?? source.key } }
    /// Names the image in every cache key and sharing key instead of ``Source/key`` when set (as Nuke's
    /// `imageId`): give a version-stamped name (say a path plus its inode and mtime) so a changed file is a new
    /// image, or one name to several URLs of the same image. Default `nil`.
    public var imageID: String? { didSet { sourceKey = imageID ?? source.key } }
    /// What the decode produces: size, crop, minimum size, upscaling, pixel format, orientation and page. Keys the
    /// caches and the shared decode whole. Default the image at its own size, upright, in the smallest pixel format
    /// that loses nothing.
    public var geometry: OutputGeometry
    /// Processors applied in order after decoding; their identifiers key the caches.
    public var processors: [any ImageProcessing] { didSet { processorsKey = Self.key(processors) } }
    /// How urgent the request is; changeable while in flight through ``ImageTask/priority``.
    public var priority: Priority
    /// Cache and decoding switches.
    public var options: Options

    /// Creates a request for a URL (`http`, `https` or `file`).
    public init(
        url: URL, size: TargetSize = .original, processors: [any ImageProcessing] = [],
        priority: Priority = .normal, options: Options = []
    ) {
        self.init(source: .url(url), size: size, processors: processors, priority: priority, options: options)
    }

    /// Creates a request for a local file.
    public init(
        path: String, size: TargetSize = .original, processors: [any ImageProcessing] = [],
        priority: Priority = .normal, options: Options = []
    ) {
        self.init(source: .file(path), size: size, processors: processors, priority: priority, options: options)
    }

    /// Creates a request for any source.
    public init(
        source: Source, size: TargetSize = .original, processors: [any ImageProcessing] = [],
        priority: Priority = .normal, options: Options = [], pixelFormat: PixelFormatPreference = .auto
    ) {
        self.source = source
        self.imageID = nil
        self.geometry = OutputGeometry(size: size, pixelFormat: pixelFormat)
        self.processors = processors
        self.sourceKey = source.key
        self.processorsKey = Self.key(processors)
        self.priority = priority
        self.options = options
    }

    /// The memory-cache key: source, geometry and processor identifiers. Cost: two retains and a copy of the
    /// geometry — the strings are computed when `source` or `processors` are set, not per lookup.
    public var cacheKey: ImageCacheKey {
        ImageCacheKey(
            source: options.contains(.animated) ? sourceKey + "#animated" : sourceKey, geometry: geometry,
            processors: processorsKey)
    }

    /// `source.key`, kept current by `source`'s observer.
    private(set) var sourceKey: String
    /// The processors' identifiers joined by `|`, kept current by `processors`' observer.
    private var processorsKey: String

    private static func key(_ processors: [any ImageProcessing]) -> String {
        processors.isEmpty ? "" : processors.map(\.identifier).joined(separator: "|")
    }
}

extension ImageRequest {
    /// Five levels of urgency. Queued work starts highest first (FIFO within a level); a shared task runs at the
    /// highest priority among its waiters.
    public enum Priority: Int, Sendable, Comparable, CaseIterable, Codable {
        case veryLow, low, normal, high, veryHigh

        /// Orders by urgency.
        public static func < (a: Priority, b: Priority) -> Bool { a.rawValue < b.rawValue }
    }

    /// Switches for one request.
    public struct Options: OptionSet, Sendable, Hashable {
        /// The option bits.
        public let rawValue: UInt16
        /// Creates options from raw bits.
        public init(rawValue: UInt16) { self.rawValue = rawValue }

        /// Do not look in the memory cache.
        public static let disableMemoryCacheReads = Options(rawValue: 1 << 0)
        /// Do not store the result in the memory cache.
        public static let disableMemoryCacheWrites = Options(rawValue: 1 << 1)
        /// Do not look in the disk cache (processed or original).
        public static let disableDiskCacheReads = Options(rawValue: 1 << 2)
        /// Do not store anything in the disk cache.
        public static let disableDiskCacheWrites = Options(rawValue: 1 << 3)
        /// Skip every cache read and go to the source; results are still stored.
        public static let reloadIgnoringCachedData: Options = [
            .disableMemoryCacheReads, .disableDiskCacheReads, .disableTableReads,
        ]
        /// Do not look in the image table.
        public static let disableTableReads = Options(rawValue: 1 << 4)
        /// Skip decoding: the response carries the original bytes only (``ImageResponse/data``).
        public static let returnData = Options(rawValue: 1 << 5)
        /// While a JPEG or an interlaced PNG downloads, deliver previews decoded at the request's size from the bytes
        /// received so far: at complete scans of a progressive JPEG, at a quarter, half and three quarters of the
        /// transfer of a baseline JPEG (the rows so far), as the Adam7 passes of an interlaced PNG arrive (the whole passes, when the response
        /// announces its length).
        /// A progressive JPEG's scans are read once as they arrive, so a preview costs an output pass, and the passes
        /// stay within ``ImagePipeline/Configuration/progressivePreviewCPUShare`` of the decode (the first preview is
        /// always made). At most one preview decode runs per request, at low priority, and starts are at least
        /// ``ImagePipeline/Configuration/progressivePreviewInterval`` apart; previews are never cached.
        public static let progressivePreviews = Options(rawValue: 1 << 6)

        /// For an animated GIF, WebP or APNG, also deliver the animation (``ImageContainer/animation``) to play with
        /// an ``AnimationPlayer``; the container's bitmap is the first frame. Kept apart from still requests in the
        /// memory cache, and never read from or written to image tables or the processed-image disk cache (they
        /// hold one frame). Processors apply to the first frame only.
        public static let animated = Options(rawValue: 1 << 7)

        /// When the bytes are in, first deliver the small picture the file carries beside its image as a preview —
        /// a camera or phone JPEG's EXIF thumbnail, a HEIF thumbnail item — decoded at the request's size
        /// (`ImageDecoder.decodeEmbeddedThumbnail(_:options:)` in DarkroomImage), then the image. The
        /// preview decode costs a thumbnail's pixels and runs on a thread of its own (one per pipeline, started when
        /// first needed), so it never waits for a full decode to finish; with decode workers it takes a worker too, so
        /// their pool needs one more than ``ImagePipeline/Configuration/processingLimit``. It is skipped when the file
        /// has no thumbnail of the image's shape, and never cached. For a grid that must show something real in every
        /// cell while the full decodes cannot keep up.
        public static let embeddedThumbnailPreview = Options(rawValue: 1 << 8)

        /// With ``progressivePreviews``, blur each preview as YYWebImage's progressive blur does, by a standard
        /// deviation that shrinks as more arrives: 32 × (1 / (3p + 0.6) − 0.25) pixels of the preview when a share
        /// p of the announced length has arrived (27.6 at 10 %, 7.2 at half, 0.9 at the end), 32 / n for the n-th
        /// preview when the length is unknown. Hides the blocks of early scans and the gray of the rows still to
        /// come. Cost: a box blur of the preview, a few additions per channel per pixel whatever the radius.
        public static let progressiveBlur = Options(rawValue: 1 << 9)

        /// The options that change what is fetched or produced (and so which in-flight task may be shared).
        var sharingBits: UInt16 {
            rawValue
                & ~(Options.progressivePreviews.rawValue | Options.embeddedThumbnailPreview.rawValue
                | Options.progressiveBlur.rawValue)
        }
    }
}
