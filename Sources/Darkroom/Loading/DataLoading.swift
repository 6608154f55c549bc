import Foundation

/// One request for bytes: a URL and extra headers (the pipeline adds `If-None-Match`/`If-Modified-Since` when
/// revalidating a stale disk copy).
public struct DataRequest: Sendable {
    /// The resource.
    public var url: URL
    /// Extra request headers, in order.
    public var headers: [(name: String, value: String)]

    /// Creates a request.
    public init(url: URL, headers: [(name: String, value: String)] = []) {
        self.url = url
        self.headers = headers
    }
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

/// The network seam: fetches bytes for a URL.
///
/// Called from a task on Swift's cooperative pool; must not block a thread (await I/O instead). The pipeline
/// limits how many calls run at once (per host and in total) and cancels the calling task when every waiter
/// leaves, so an implementation must stop its transfer on task cancellation. Throw ``DarkroomError`` for
/// failures; ``DarkroomError/isTransient`` decides whether the pipeline's own loader retries.
public protocol DataLoading: Sendable {
    /// Fetches the resource, calling `progress(received, expected)` as bytes arrive.
    func loadData(_ request: DataRequest,
                  progress: @escaping @Sendable (_ received: Int64, _ expected: Int64?) -> Void) async throws -> DataResponse
}
