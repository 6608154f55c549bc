import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOHTTP1

/// The default ``DataLoading``: AsyncHTTPClient with timeouts, bounded redirects, a response-size limit enforced
/// while streaming, and retries with exponential backoff on transient failures only.
///
/// Owns one `HTTPClient` (connection pool on NIO's shared event loops); call ``shutdown()`` when done, or let
/// `deinit` shut it down in the background.
public final class HTTPDataLoader: DataLoading {
    /// Limits and retry policy.
    public struct Configuration: Sendable {
        /// Seconds to establish a connection. Default 10.
        public var connectTimeout: Double = 10
        /// Seconds without a byte before the transfer fails (`timed_out`): a stalled server. Default 30.
        public var readTimeout: Double = 30
        /// Seconds for the whole transfer, redirects included. Default 60.
        public var totalTimeout: Double = 60
        /// Most redirects followed; cycles fail at once (`too_many_redirects`). Default 5.
        public var maxRedirects: Int = 5
        /// Largest body accepted, in bytes: refused from `Content-Length` before reading, or as soon as the
        /// streamed body passes it (`response_too_large`). Default 64 MiB.
        public var maxResponseBytes: Int64 = 64 << 20
        /// Attempts in all for transient failures (timeouts, broken connections, 408/429/502/503/504). Default 3.
        public var maxAttempts: Int = 3
        /// Delay before the first retry, doubled for each next one, with ±50 % jitter. Default 0.25 s.
        public var retryBaseDelay: Double = 0.25
        /// Longest delay between attempts. Default 4 s.
        public var retryMaxDelay: Double = 4
        /// `User-Agent` sent with every request.
        public var userAgent: String = "Darkroom/1"
        /// Whether AsyncHTTPClient follows redirects (up to ``maxRedirects``). When `false`, a 3xx other than 304
        /// is returned as a ``DataResponse`` with that status and its headers (`location` included) and an empty
        /// body (the body is not read; the connection may close), so a caller can vet each hop. Default `true`.
        public var followsRedirects: Bool = true
        /// Host name → IP address to connect to instead of resolving the name (`HTTPClient.Configuration.dnsOverride`).
        /// The URL's host is still sent as `Host`, as TLS SNI and checked against the certificate. Keys must match
        /// the URL's host exactly. Default empty.
        public var dnsOverride: [String: String] = [:]

        /// The documented defaults.
        public init() {}
    }

    /// The limits in force.
    public let configuration: Configuration
    let client: HTTPClient
    private let logger: Logger

    /// Creates a loader with its own connection pool.
    public init(configuration: Configuration = Configuration(), logger: Logger = Logger(label: "darkroom.http")) {
        self.configuration = configuration
        self.logger = logger
        let redirects: HTTPClient.Configuration.RedirectConfiguration =
            configuration.followsRedirects
            ? .follow(max: configuration.maxRedirects, allowCycles: false) : .disallow
        var config = HTTPClient.Configuration(
            redirectConfiguration: redirects,
            timeout: .init(
                connect: .nanoseconds(Int64(configuration.connectTimeout * 1e9)),
                read: .nanoseconds(Int64(configuration.readTimeout * 1e9))))
        config.decompression = .disabled
        config.dnsOverride = configuration.dnsOverride
        // The pipeline's NetworkScheduler is the per-host limiter; AsyncHTTPClient's own soft limit (8) must not
        // be a second, hidden one.
        config.connectionPool = .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: 64)
        client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: config)
    }

    deinit {
        client.shutdown { _ in }
    }

    /// Closes the connection pool. Cost: waits for open connections to close.
    public func shutdown() async {
        try? await client.shutdown()
    }

    /// Fetches `request.url`: up to ``Configuration/maxAttempts`` attempts for transient failures, each bounded by
    /// the timeouts and the size limit; cancelling the calling task closes the connection.
    public func loadData(
        _ request: DataRequest,
        progress: @escaping @Sendable (DataProgress) -> Void
    ) async throws(DarkroomError) -> DataResponse {
        var attempt = 1
        while true {
            let failure: DarkroomError
            do throws(DarkroomError) {
                return try await loadOnce(request, progress: progress)
            } catch {
                failure = error
            }
            guard failure.isTransient, attempt < configuration.maxAttempts, !Task.isCancelled else { throw failure }
            let delay =
                min(configuration.retryMaxDelay, configuration.retryBaseDelay * Double(1 << (attempt - 1)))
                * Double.random(in: 0.5...1.5)
            logger.debug(
                "retrying after transient failure",
                metadata: [
                    "url": "\(request.url)", "attempt": "\(attempt)", "delay_s": "\(delay)",
                    "error": "\(failure.code.rawValue)",
                ])
            try? await Task.sleep(nanoseconds: UInt64(delay * 1e9))
            if Task.isCancelled { throw DarkroomError.cancelled }
            attempt += 1
        }
    }

    private func loadOnce(
        _ request: DataRequest,
        progress: @escaping @Sendable (DataProgress) -> Void
    ) async throws(DarkroomError) -> DataResponse {
        let url = request.url.absoluteString
        var outgoing = HTTPClientRequest(url: url)
        outgoing.method = .GET
        outgoing.headers.add(name: "User-Agent", value: configuration.userAgent)
        outgoing.headers.add(name: "Accept", value: "image/webp,image/png,image/jpeg,image/gif,image/*;q=0.8")
        for (name, value) in request.headers { outgoing.headers.add(name: name, value: value) }
        let limit = configuration.maxResponseBytes
        do {
            let response = try await client.execute(
                outgoing, timeout: .nanoseconds(Int64(configuration.totalTimeout * 1e9)))
            var headers: [String: String] = [:]
            for (name, value) in response.headers {
                let key = name.lowercased()
                headers[key] = headers[key].map { $0 + ", " + value } ?? value
            }
            let status = Int(response.status.code)
            if status == 304 { return DataResponse(data: [], statusCode: 304, headers: headers) }
            if !configuration.followsRedirects, (300..<400).contains(status) {
                return DataResponse(data: [], statusCode: status, headers: headers)
            }
            guard (200..<300).contains(status) else {
                throw DarkroomError(.httpStatus, "GET \(url) answered \(status)", statusCode: status)
            }
            let expected = headers["content-length"].flatMap { Int64($0.trimmingCharacters(in: .whitespaces)) }
            if let expected, expected > limit {
                throw DarkroomError(
                    .responseTooLarge,
                    "GET \(url) announces \(expected) bytes, over the limit of \(limit); not read")
            }
            var data = [UInt8]()
            data.reserveCapacity(Int(min(expected ?? 64 << 10, limit)))
            var received: Int64 = 0
            var fractions = request.partialDataFractions[...]
            var trigger = request.partialDataTrigger
            for try await buffer in response.body {
                received += Int64(buffer.readableBytes)
                guard received <= limit else {
                    throw DarkroomError(
                        .responseTooLarge,
                        "GET \(url) streamed past the limit of \(limit) bytes; transfer aborted after \(received)")
                }
                data.append(contentsOf: buffer.readableBytesView)
                var partial: [UInt8]?
                if let expected, let next = fractions.first, Double(received) >= next * Double(expected),
                    received < expected
                {
                    while let f = fractions.first, Double(received) >= f * Double(expected) { fractions.removeFirst() }
                    partial = data
                }
                if partial == nil, received < (expected ?? .max),
                    trigger?.shouldHandOver(data, expected: expected) == true
                {
                    partial = data
                }
                progress(DataProgress(received: received, expected: expected, partialData: partial))
            }
            if let expected, received < expected {
                throw DarkroomError(.network, "GET \(url) ended after \(received) of \(expected) bytes")
            }
            return DataResponse(data: data, statusCode: status, headers: headers)
        } catch let error as DarkroomError {
            throw error
        } catch {
            throw Self.map(error, url: url)
        }
    }

    static func map(_ error: any Error, url: String) -> DarkroomError {
        if error is CancellationError { return .cancelled }
        if let e = error as? HTTPClientError {
            switch e {
            case .cancelled: return .cancelled
            case .readTimeout, .connectTimeout, .deadlineExceeded, .getConnectionFromPoolTimeout:
                return DarkroomError(.timedOut, "GET \(url) timed out (\(e))", underlying: e)
            case .redirectLimitReached, .redirectCycleDetected:
                return DarkroomError(.tooManyRedirects, "GET \(url): \(e)", underlying: e)
            case .invalidURL, .emptyHost, .emptyScheme:
                return DarkroomError(.invalidRequest, "GET \(url): \(e)", underlying: e)
            default: break
            }
        }
        return DarkroomError(.network, "GET \(url) failed: \(error)", underlying: error)
    }
}
