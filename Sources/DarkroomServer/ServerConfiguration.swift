import DarkroomImage
import DarkroomWorkers
import Foundation
import Logging

/// Everything `darkroom serve` is built from: where to listen, what to serve, who may be fetched, and every
/// limit. A value with safe defaults: no remote sources, no signing, bounded renders, queue, sizes and time.
///
/// Memory budget: ``memoryCacheBytes`` of encoded thumbnails + ``decodedCacheBytes`` of decoded bitmaps +
/// ``renderMemoryBudget`` for the renders running at once (at most ``maxRenders`` of them; a lone render larger
/// than the budget is still bounded by ``Limits/decode``) + the process's fixed base (~40 MB). Requests past
/// ``maxRenders`` + ``maxQueued`` are answered 429 at once, so load never turns into memory.
public struct ServerConfiguration: Sendable {
    /// Per-request limits.
    public struct Limits: Sendable {
        /// Largest `w` or `h` accepted. Default 4096.
        public var maxOutputDimension = 4096
        /// Quality when `q` is absent and ``formatQuality`` names no quality for the output format. Default 82.
        public var defaultQuality = 82
        /// Quality per output format when `q` is absent (imgproxy's `format_quality`), e.g. `[.avif: 63]`: AVIF
        /// holds up at lower settings than JPEG. Default empty: ``defaultQuality`` for every format.
        public var formatQuality: [ImageFileFormat: Int] = [:]

        /// The quality used for `format` when the request names none.
        public func quality(for format: ImageFileFormat) -> Int { formatQuality[format] ?? defaultQuality }
        /// Longest `src` accepted, in bytes. Default 2048.
        public var maxSourceLength = 2048
        /// Largest source file or download, in bytes. Default 64 MiB.
        public var maxSourceBytes = 64 << 20
        /// Most frames of an animated source kept in its animated thumbnail; later frames are dropped (the
        /// thumbnail ends there). Default 256 — about 10 s at 25 fps.
        public var maxAnimationFrames = 256
        /// Decoder limits applied to every source (pixels, dimensions, decoded bytes, scans, frames, colour
        /// profile bytes). Default: `DecodeLimits.default` tightened for a public server — sources up to 100 MP,
        /// 64 MiB of input and 256 MiB of decoded pixels.
        public var decode = DecodeLimits(
            maxInputBytes: 64 << 20, maxSourcePixels: 100_000_000, maxDecodedBytes: 256 << 20)

        /// The documented defaults.
        public init() {}
    }

    /// imgproxy-compatible URLs under `/imgproxy/` (`ImgproxyURL`).
    public struct Imgproxy: Sendable {
        /// The signing key (imgproxy's `IMGPROXY_KEY`, hex-decoded); `nil` accepts any signature.
        public var key: [UInt8]?
        /// The salt put before the path (imgproxy's `IMGPROXY_SALT`, hex-decoded).
        public var salt: [UInt8] = []
        /// Bytes of the HMAC kept in the signature (imgproxy's `IMGPROXY_SIGNATURE_SIZE`). Default 32, all of it.
        public var signatureSize = 32
        /// Named option sets in imgproxy syntax (`rs:fill:300:300/q:80`); `default` applies to every URL first.
        /// `pr:NAME` uses one in an imgproxy URL, `preset=NAME` in `/v1/thumb`.
        public var presets: [String: String] = [:]
        /// Whether URLs may name presets only (imgproxy's `IMGPROXY_ONLY_PRESETS`).
        public var onlyPresets = false
        /// A URL without an extension or `format` answers WebP to clients whose `Accept` names it (imgproxy's
        /// `IMGPROXY_AUTO_WEBP`, `Vary: Accept`). Default `false`, as imgproxy: the source's own format.
        public var autoWebP = false
        /// The same for AVIF (imgproxy's `IMGPROXY_AUTO_AVIF`; AVIF is offered when ``ServerConfiguration/autoAVIF``
        /// is on, which the CLI's `--imgproxy-auto-avif` also turns on). Default `false`.
        public var autoAVIF = false

        /// No key, no presets.
        public init() {}
    }

    /// thumbor-compatible URLs under `/thumbor/` (`ThumborURL`).
    public struct Thumbor: Sendable {
        /// The security key (thumbor's `SECURITY_KEY`). `nil`: only `/unsafe/` URLs are served (signed ones are
        /// refused, since nothing can check them).
        public var key: String?
        /// Whether `/unsafe/` URLs are served when a key is set (thumbor's `ALLOW_UNSAFE_URL`). Default `false`.
        public var allowUnsafe = false
        /// A URL without a `format()` filter answers WebP to clients whose `Accept` names it (thumbor's
        /// `AUTO_WEBP`, `Vary: Accept`). Default `false`, as thumbor: the source's own format, the same bytes for
        /// every client (what a thumbor site's CDN caches).
        public var autoWebP = false

        /// No key.
        public init() {}
    }

    /// An image sent, with the error's status, instead of the JSON error when a thumbnail request fails and the
    /// client asked for an image (`Accept` names `image/…` and not JSON, as browsers do for `<img>`). Its format is
    /// read from its bytes. Default `nil`: errors are always JSON.
    public var fallbackImage: [UInt8]?

    /// S3-compatible originals: `src=s3://BUCKET/KEY`.
    public struct S3: Sendable {
        /// The endpoint: `https://s3.REGION.amazonaws.com`, or a MinIO or moto server's URL.
        public var endpoint: URL
        /// The region requests are signed for (`AWS_REGION`). Default `us-east-1`.
        public var region: String
        /// The credentials (`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`).
        var credentials: SigV4Signer.Credentials
        /// Buckets clients may name (`--allow-bucket`); no others are fetched.
        public var allowedBuckets: Set<String>
        /// Path-style URLs (`endpoint/bucket/key`, what MinIO and moto expect) instead of `bucket.endpoint/key`.
        public var pathStyle: Bool

        /// S3 at `endpoint` for `region` with the given credentials and buckets.
        public init(
            endpoint: URL, region: String = "us-east-1", accessKeyID: String, secretAccessKey: String,
            sessionToken: String? = nil, allowedBuckets: Set<String>, pathStyle: Bool = true
        ) {
            self.endpoint = endpoint
            self.region = region
            credentials = .init(accessKeyID: accessKeyID, secretAccessKey: secretAccessKey, sessionToken: sessionToken)
            self.allowedBuckets = allowedBuckets
            self.pathStyle = pathStyle
        }
    }

    /// S3 sources; `nil` (the default) refuses `s3://` sources.
    public var s3: S3?

    /// imgproxy URL compatibility.
    public var imgproxy = Imgproxy()
    /// thumbor URL compatibility.
    public var thumbor = Thumbor()

    /// Interface to bind. Default `127.0.0.1`.
    public var host = "127.0.0.1"
    /// Port to bind; 0 picks a free one. Default 8080.
    public var port = 8080
    /// The folder local sources (`src` paths) resolve in and the gallery lists; `nil` serves no local files.
    public var root: String?
    /// Where the disk caches live (encoded thumbnails, remote originals); `nil` keeps caches in memory only.
    public var cacheDirectory: String?
    /// Which remote hosts may be fetched and which addresses never; default: none.
    public var remote = RemotePolicy()
    /// With a key, every `/v1/*` request must carry `sig` (HMAC-SHA256 of the canonical path and query).
    public var signingKey: String?
    /// Per-request limits.
    public var limits = Limits()
    /// Most renders (fetch + decode + encode) at once. Default: active cores.
    public var maxRenders = max(1, ProcessInfo.processInfo.activeProcessorCount)
    /// Most renders waiting for a slot; past that, 429. Default 4 × ``maxRenders``.
    public var maxQueued = 4 * max(1, ProcessInfo.processInfo.activeProcessorCount)
    /// Bytes of working memory the renders running at once may hold together (each render's estimate comes
    /// from its source's header, see `AdmissionController`); a render alone may exceed it. Default 256 MiB.
    public var renderMemoryBudget = 256 << 20
    /// Seconds one request may take, queueing included; then 504. Default 30.
    public var requestTimeout: Double = 30
    /// Seconds a connection may wait for its next request: an idle keep-alive connection is closed after this
    /// long, and so is one that has not sent a complete request head this long after opening or after its
    /// previous response (a slow sender). Default 60.
    public var idleTimeout: Double = 60
    /// Most client connections open at once; a new one past it replaces the longest-idle connection, or is closed
    /// when all are mid-request. Lowered at start to leave ``descriptorReserve`` of the process's descriptor limit
    /// for files, caches and remote fetches. Default 4096.
    public var maxConnections = 4096
    /// Most connections open at once from one client address (a new one past it is closed at once); 0 for no
    /// limit — behind a reverse proxy every connection comes from the proxy. Default 128.
    public var maxConnectionsPerClient = 128
    /// Descriptors of the process's limit (`RLIMIT_NOFILE`) kept out of ``maxConnections``' reach. Default 512.
    public var descriptorReserve = 512
    /// `Cache-Control: public, max-age=` for thumbnails, and how long a remote source's thumbnail stays fresh in
    /// the disk cache. Default 86 400 (a day).
    public var cacheMaxAge = 86_400
    /// Bytes of encoded thumbnails kept in memory. Default 64 MiB.
    public var memoryCacheBytes = 64 << 20
    /// Bytes of decoded bitmaps kept in memory (one decode serves several formats). Default 32 MiB.
    public var decodedCacheBytes = 32 << 20
    /// Bytes kept on disk by each disk cache (encoded thumbnails; remote originals). Default 1 GiB.
    public var diskCacheBytes = 1 << 30
    /// Free space the disk caches leave on their file system: below it they trim themselves (checked with each
    /// trim, every minute), so a cache never fills the disk it shares. Default 256 MiB.
    public var minFreeDiskBytes = 256 << 20
    /// Whether JPEG thumbnails keep libjpeg's exact colour detail (`true`), or take 4:2:0 colour from DC
    /// coefficients when the thumbnail is ~1/16 of the source or smaller (`false`, the default: faster renders of
    /// large photos for a little fine colour detail; see `DecodeOptions.chromaFromDC`).
    public var exactChroma = false
    /// Whether `format=auto` answers AVIF to clients whose `Accept` names `image/avif`. Default `false`: an AVIF
    /// encode of a 256 px thumbnail costs several times a WebP one (docs/PERFORMANCE.md); `format=avif` works
    /// either way.
    public var autoAVIF = false
    /// Whether `format=auto` answers JPEG XL to clients whose `Accept` names `image/jxl` (Safari 17+), ahead of
    /// AVIF and WebP. Off by default, as AVIF: a JPEG XL encode costs more than WebP's.
    public var autoJXL = false
    /// The AV1 encoder speed for AVIF output, 0–10. Default 8.
    public var avifSpeed = 8
    /// Whether thumbnails keep the source's colour profile (pixels unconverted, profile embedded) instead of being
    /// converted to sRGB. Default `false`.
    public var keepColorProfile = false
    /// Images on one gallery page (a folder's images are paged in UTF-8 byte order). Default 200.
    public var galleryPageSize = 200
    /// Most images the gallery's listing keeps (further files are not listed). Default 1,000,000 — about 100 MB
    /// of names at most.
    public var galleryMaxImages = 1_000_000
    /// Seconds a gallery listing is served before it is rescanned in the background. Default 60.
    public var galleryRefreshSeconds = 60.0
    /// How the decode workers run: every still a render decodes (a local file by its open descriptor, a fetched
    /// original from its bytes) is decoded in a confined worker process (DarkroomWorkers), so a hostile file costs
    /// one request and reaches nothing; `nil` decodes in this process. Animations, motion, HDR outputs and remote
    /// videos' ranges are decoded in this process either way. The worker executable (`darkroom-worker` beside the
    /// running one, by default) must exist: the server refuses to start without it rather than decode unconfined.
    /// Default: a pool of the documented defaults (one worker per active core).
    public var decodeWorkers: DecodeWorkerPool.Configuration? = DecodeWorkerPool.Configuration()
    /// Logger for requests and failures.
    public var logger = Logger(label: "darkroom.server")

    /// The documented defaults.
    public init() {}
}
