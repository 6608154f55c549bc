import DarkroomCache
import DarkroomImage
import Foundation
import Logging

extension ImagePipeline {
    /// Which encoded bytes go to the disk cache.
    public enum DiskCachePolicy: Sendable, Hashable {
        /// Original bytes for requests without processors (re-decoding with shrink-on-load is cheap); encoded
        /// processed images for requests with processors. The default.
        case automatic
        /// Original bytes only.
        case storeOriginalData
        /// Encoded processed images only.
        case storeEncodedImages
        /// Both.
        case storeAll
    }

    /// Everything a pipeline is built from. A value: build one, pass it to ``ImagePipeline/init(configuration:)``.
    public struct Configuration: Sendable {
        /// The memory cache (``ImageCaching``); `nil` disables it.
        public var imageCache: (any ImageCaching)?
        /// The disk cache for original and processed bytes (``DataCaching``); `nil` disables it.
        public var dataCache: (any DataCaching)?
        /// Image tables for requests whose ``ImageRequest/geometry`` they hold; `nil` disables them.
        public var imageTables: (any ImageTableCaching)?
        /// Fetches `http(s)` URLs. Default: an ``HTTPDataLoader`` with its default limits.
        public var dataLoader: any DataLoading
        /// URL schemes besides `http` and `https` that go to ``dataLoader`` (say `s3` for a loader that signs
        /// object-store requests); other schemes fail with `invalidRequest`. Default empty.
        public var loaderSchemes: Set<String> = []
        /// Which bytes the disk cache keeps. Default ``DiskCachePolicy/automatic``.
        public var diskCachePolicy: DiskCachePolicy = .automatic
        /// Most decodes and processors running at once, and most threads the pipeline starts for them.
        /// Default: active cores.
        public var processingLimit: Int = max(1, ProcessInfo.processInfo.activeProcessorCount)
        /// Threads for disk-cache and file reads (blocking I/O kept off Swift's cooperative pool). Default 2.
        public var ioLimit: Int = 2
        /// The Linux nice value (0…19) of the pipeline's decoding and I/O threads. Default 0 (a server's threads
        /// are all equal). An app with a drawing thread sets 5–10, so decoding ahead never takes the CPU from a
        /// frame: the scheduler then gives the drawing thread the core whenever both want one (about 10:1 at 10).
        public var threadNiceness: Int32 = 0
        /// Whether a task's ``ImageTask/cancel()`` and priority changes, the start of the job a new request begins
        /// and the priority a joined job gains reach the shared work on the pipeline's own control thread (nice 0,
        /// one thread) instead of on the caller's. The task itself stops at once either way (``ImageTask/cancel()``
        /// still delivers `cancelled` before it returns, and a memory-cache hit is still answered before
        /// `loadImage` returns); what moves is the work on the shared jobs, whose locks the decoding threads also
        /// take. A caller with a frame budget (a drawing thread) sets it: a decoding thread at a higher nice value
        /// preempted while holding one of those locks waits up to a scheduler tick for a core, and the caller would
        /// wait with it. Cost: one enqueue per change; the queued work still starts or stops within microseconds.
        /// Default false (on a server every thread is equal, and the update is made before the call returns).
        public var defersTaskControl = false
        /// Most network transfers at once. Default 16.
        public var networkLimit: Int = 16
        /// Most network transfers at once to one host (as browsers). Default 6.
        public var perHostLimit: Int = 6
        /// Largest file read or network body accepted, in bytes (also enforced by ``HTTPDataLoader``'s own
        /// limit). Default 64 MiB.
        public var maxResponseBytes: Int = 64 << 20
        /// A remote video (an HTTP(S) or loader-scheme URL whose path ends in a video extension, when ``decoder``
        /// reads videos) is read by byte ranges of this size where it lies, never fetched whole: the decoder asks
        /// for the container's header and the frames one thumbnail needs, and the ranges read in all count against
        /// ``maxResponseBytes``. A server that ignores `Range` sends the whole file (within that limit). 0 fetches
        /// videos whole. Default 256 KiB.
        public var videoRangeBytes: Int = 256 << 10
        /// How long a decode waits for one range of a remote video before failing, in seconds. Default 30.
        public var rangeReadTimeout: Double = 30
        /// Freshness for responses that say nothing about it (no `Cache-Control`, `Expires`, `Last-Modified`).
        /// Default 1 day.
        public var defaultMaxAge: Double = 86_400
        /// Base decode options (filter, limits, truncation policy, colour); the geometry is each request's own.
        public var decodeOptions = DecodeOptions()
        /// Decodes (and probes) every image: the built-in codecs, and the custom decoders given to it — DarkroomVideo's
        /// `VideoDecoder.imageDecoder` reads videos too, a local video file by its decoder from the file (only the
        /// parts a frame needs, never the file whole), a remote one from its fetched bytes.
        public var decoder = ImageDecoder()
        /// The frame buffer of each player made from an animated response (``ImageRequest/Options/animated``),
        /// which the memory cache charges with the image; nil for ``AnimationPlayer/defaultBudget(for:)``.
        /// Default nil.
        public var animationBufferBytes: Int?
        /// Quality of processed images stored on disk as JPEG (opaque) — others are stored as PNG. Default 85.
        public var encodeQuality: Int = 85
        /// Shortest time between the starts of two preview decodes of one request with
        /// ``ImageRequest/Options/progressivePreviews``, seconds (one runs at a time regardless). Default 0.1.
        public var progressivePreviewInterval: Double = 0.1
        /// The share of a progressive JPEG's own decode time its previews may add, as a fraction (0.2: at most 20 %
        /// more). The scans are read once as they arrive, so a preview costs one output pass at the display size;
        /// the first preview is always made, later ones only within this share. `.infinity`: one at every scan the
        /// interval allows. Default 0.2.
        public var progressivePreviewCPUShare: Double = 0.2
        /// Debounce of ``ImagePipeline/networkActivity``, seconds. Default 0.1.
        public var activityDebounce: Double = 0.1
        /// Whether identical in-flight requests share work. Default `true` (turn off only to measure the gain).
        public var isSharingEnabled = true
        /// The logger (swift-log); debug level logs each request's stages.
        public var logger = Logger(label: "darkroom.pipeline")
        /// Label prefix for swift-metrics counters and timers.
        public var metricsPrefix = "darkroom"
        /// Unix time, replaceable in tests of HTTP freshness.
        public var now: @Sendable () -> Double = { Date().timeIntervalSince1970 }

        /// A configuration with the documented defaults: a new DarkroomCache `MemoryCache` (1/8 of available
        /// memory) unless another cache or `nil` is given, the given disk cache (none by default), and an
        /// ``HTTPDataLoader``.
        public init(
            imageCache: (any ImageCaching)? = MemoryCache<ImageCacheKey, ImageContainer>(),
            dataCache: (any DataCaching)? = nil, dataLoader: (any DataLoading)? = nil
        ) {
            self.imageCache = imageCache
            self.dataCache = dataCache
            self.dataLoader = dataLoader ?? HTTPDataLoader()
        }
    }
}
