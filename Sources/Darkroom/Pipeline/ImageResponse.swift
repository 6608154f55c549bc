import DarkroomImage
import DarkroomSupport

/// A finished request: the image (or bytes), where it came from, and how long each stage took.
public struct ImageResponse: Sendable {
    /// The layer that answered.
    public enum Origin: String, Sendable, Codable, CaseIterable {
        /// The memory cache (synchronous hit).
        case memory
        /// An image table.
        case table
        /// The disk cache's processed image.
        case diskProcessed = "disk_processed"
        /// The disk cache's original bytes (fresh, or revalidated with a 304).
        case diskOriginal = "disk_original"
        /// The network.
        case network
        /// A local file.
        case file
        /// Bytes given in the request.
        case data
    }

    /// Seconds spent per stage (0 when a stage did not run). Shared work reports the shared stage's time to
    /// every waiter.
    public struct Timings: Sendable, Equatable, Codable {
        /// Reading the disk cache or table.
        public var cacheRead: Double = 0
        /// Fetching bytes (network transfer including queueing for a connection slot, or file read).
        public var fetch: Double = 0
        /// Waiting for a processing thread.
        public var queueWait: Double = 0
        /// Decoding (downsampling included).
        public var decode: Double = 0
        /// Running processors.
        public var process: Double = 0
        /// From the request to delivery.
        public var total: Double = 0

        /// All zero.
        public init() {}
    }

    /// The request this answers.
    public var request: ImageRequest
    /// The decoded, processed image; `nil` for ``ImageRequest/Options/returnData`` requests.
    public var container: ImageContainer?
    /// The original bytes, when the request asked for them (``ImageRequest/Options/returnData``).
    public var data: [UInt8]?
    /// Where the result came from.
    public var origin: Origin
    /// Stage times.
    public var timings: Timings

    /// The image's pixels (shorthand for `container?.bitmap`).
    public var bitmap: Bitmap? { container?.bitmap }
}

/// What the shared image job produces, before it is tied to each waiter's request.
struct ImageResult: Sendable {
    var container: ImageContainer?
    var data: [UInt8]?
    var origin: ImageResponse.Origin
    var timings: ImageResponse.Timings

    func response(for request: ImageRequest, started: Double) -> ImageResponse {
        var t = timings
        t.total = MonotonicClock.seconds() - started
        return ImageResponse(request: request, container: container, data: data, origin: origin, timings: t)
    }
}
