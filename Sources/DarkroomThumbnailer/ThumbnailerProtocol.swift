import DarkroomDesktop

/// The Thumbnail Management D-Bus Specification's fixed vocabulary: bus names, error codes, schedulers, flavors and
/// the files this service reads. One home for what the bus answers and what the queue accepts.
public enum ThumbnailerProtocol {
    /// The thumbnailer's well-known bus name (also its interface); its object is at
    /// `/org/freedesktop/thumbnails/Thumbnailer1`.
    public static let thumbnailerName = "org.freedesktop.thumbnails.Thumbnailer1"
    /// The cache's well-known bus name (also its interface); its object is at `/org/freedesktop/thumbnails/Cache1`.
    public static let cacheName = "org.freedesktop.thumbnails.Cache1"

    /// The codes of the `Error` signal, as tumbler numbers them.
    public enum ErrorCode: Int32, Sendable {
        /// The file's kind or the URI's scheme is not one this service reads.
        case unsupported = 0
        /// The file could not be reached.
        case connection = 1
        /// The file (or its URI) is not what it claims to be: damaged, or not an image.
        case invalidFormat = 2
        /// The file is itself a thumbnail in the cache.
        case isThumbnail = 3
        /// The thumbnail could not be written.
        case saveFailed = 4
        /// The flavor is not one ``ThumbnailerProtocol/flavors`` lists.
        case unsupportedFlavor = 5
        /// The file is empty.
        case noContent = 6
        /// The service stopped before the file's turn.
        case shuttingDown = 7
        /// Anything else (a file system error, a limit), the message saying what.
        case other = 8
    }

    /// How a request is scheduled. `foreground` requests (what is on screen) go before `background` ones, newest
    /// first; `default` is `background`, as in tumbler.
    public static let schedulers = ["default", "foreground", "background"]

    /// The flavors (thumbnail sizes) in the order `GetFlavors` lists them.
    public static let flavors = DesktopThumbnailCache.Size.allCases.map(\.rawValue)

    /// The MIME types `GetSupported` lists (each with the `file` scheme): every still image, camera RAW and video
    /// container the decoders read, under the names shared-mime-info gives them.
    public static let mimeTypes: [String] = [
        "image/jpeg", "image/png", "image/apng", "image/gif", "image/webp", "image/heic", "image/heif",
        "image/heic-sequence", "image/heif-sequence", "image/avif", "image/jxl", "image/tiff", "image/bmp",
        "image/x-bmp", "image/vnd.microsoft.icon", "image/x-icon", "image/svg+xml",
        "image/x-dcraw", "image/x-adobe-dng", "image/x-canon-cr2", "image/x-canon-cr3", "image/x-canon-crw",
        "image/x-nikon-nef", "image/x-nikon-nrw", "image/x-sony-arw", "image/x-sony-sr2", "image/x-sony-srf",
        "image/x-fuji-raf", "image/x-olympus-orf", "image/x-panasonic-rw2", "image/x-panasonic-raw",
        "image/x-pentax-pef", "image/x-samsung-srw", "image/x-sigma-x3f", "image/x-minolta-mrw",
        "video/mp4", "video/quicktime", "video/x-m4v", "video/3gpp", "video/3gpp2", "video/webm",
        "video/x-matroska", "video/x-msvideo", "video/avi",
    ]
}
