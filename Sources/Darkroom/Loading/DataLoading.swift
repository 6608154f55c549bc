import Foundation

/// One request for bytes: a URL and extra headers (the pipeline adds `If-None-Match`/`If-Modified-Since` when
/// revalidating a stale disk copy).
public struct DataRequest: Sendable {
    /// The resource.
    public var url: URL
    /// Extra request headers, in order.
    public var headers: [(name: String, value: String)]
    /// Fractions of the announced length (0–1, ascending) at which the loader should hand over the bytes
    /// received so far (``DataProgress/partialData``), for progressive previews. Empty (the default) for none.
    public var partialDataFractions: [Double]
    /// Decides after each chunk whether the loader hands over the bytes received so far (besides
    /// ``partialDataFractions``); nil (the default) for never. The pipeline sets one for progressive previews.
    public var partialDataTrigger: (any PartialDataTrigger)?

    /// Creates a request.
    public init(
        url: URL, headers: [(name: String, value: String)] = [], partialDataFractions: [Double] = [],
        partialDataTrigger: (any PartialDataTrigger)? = nil
    ) {
        self.url = url
        self.headers = headers
        self.partialDataFractions = partialDataFractions
        self.partialDataTrigger = partialDataTrigger
    }
}

/// Decides, as a body arrives, when a loader hands over the bytes so far (``DataProgress/partialData``): the
/// pipeline's progressive previews hand them over at each complete scan of a progressive JPEG.
///
/// A loader keeps one copy per transfer and calls it after each chunk it appends, never after the last one (the
/// whole body is the response). Must cost little per call: it runs on the loader's task for every chunk.
public protocol PartialDataTrigger: Sendable {
    /// Whether to hand over `body` (everything received so far) now; `expected` is the announced length.
    mutating func shouldHandOver(_ body: [UInt8], expected: Int64?) -> Bool
}

/// The answer to a ``DataRequest``.
public struct DataResponse: Sendable {
    /// The body (empty for 304).
    public var data: [UInt8]
    /// The final HTTP status: 2xx, or 304 for a conditional request whose cached copy is still valid.
    public var statusCode: Int
    /// Response headers with lower-cased names (repeated headers joined by `", "`).
    public var headers: [String: String]

    /// Creates a response.
    public init(data: [UInt8], statusCode: Int = 200, headers: [String: String] = [:]) {
        self.data = data
        self.statusCode = statusCode
        self.headers = headers
    }
}

/// Progress of one transfer.
public struct DataProgress: Sendable {
    /// Body bytes received so far.
    public var received: Int64
    /// The announced body length, when known.
    public var expected: Int64?
    /// The body so far, only at the points ``DataRequest/partialDataFractions`` asked for (a copy-on-write
    /// share of the loader's buffer; holding it makes the loader's next append copy once).
    public var partialData: [UInt8]?

    /// Creates a progress report.
    public init(received: Int64, expected: Int64?, partialData: [UInt8]? = nil) {
        self.received = received
        self.expected = expected
        self.partialData = partialData
    }
}

/// The network seam: fetches bytes for a URL.
///
/// Called from a task on Swift's cooperative pool; must not block a thread (await I/O instead). The pipeline
/// limits how many calls run at once (per host and in total) and cancels the calling task when every waiter
/// leaves, so an implementation must stop its transfer on task cancellation (throwing ``DarkroomError/Code/cancelled``).
/// Failures are typed: ``DarkroomError/isTransient`` decides whether the pipeline's own loader retries, and a
/// loader that refuses a request by its own policy throws ``DarkroomError/Code/refused`` with its reason as the
/// underlying error.
public protocol DataLoading: Sendable {
    /// Fetches the resource, calling `progress` as bytes arrive.
    func loadData(
        _ request: DataRequest,
        progress: @escaping @Sendable (DataProgress) -> Void
    ) async throws(DarkroomError) -> DataResponse
}
