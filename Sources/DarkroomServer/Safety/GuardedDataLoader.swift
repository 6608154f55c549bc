import Darkroom
import DarkroomCache
import DarkroomSupport
import Foundation
import Logging

/// The remote-source loader for the server: checks every hop of a fetch against a ``RemotePolicy`` before
/// connecting, and connects only to the address it checked.
///
/// For the URL and each redirect: ``RemotePolicy/checkURL(_:)`` → resolve the host (``HostResolving``) →
/// ``RemotePolicy/checkAddresses(_:host:)`` → fetch that one hop with an ``HTTPDataLoader`` that does not follow
/// redirects and whose `dnsOverride` pins the host to the first checked address, so a second DNS answer cannot
/// change where it connects (no rebinding window). A 301/302/303/307/308 `Location` (relative ones resolved
/// against the hop's URL) starts the next hop, at most ``RemotePolicy/maxRedirects`` times.
///
/// Refusals throw ``ServerError`` (`badRequest`, `hostNotAllowed`, `addressBlocked`; `upstreamFailed` for too many
/// redirects, a redirect without `Location` or another 3xx; the resolver's `upstreamFailed`/`timedOut`); transfer
/// failures throw the hop loader's `DarkroomError`. Each hop has the full ``HTTPDataLoader/Configuration``
/// timeouts and retries.
///
/// Connections: loaders are kept per (scheme, host, pinned address) in an LRU of ``poolCapacity`` so keep-alive
/// connections are reused; an evicted loader is shut down once no fetch is using it. Cost per hop without a
/// pooled loader: one `HTTPClient` (a few allocations, no threads: NIO's shared event loops).
final class GuardedDataLoader: DataLoading {
    /// Most loaders kept for reuse.
    static let poolCapacity = 32

    /// The policy every hop is checked against.
    let policy: RemotePolicy
    private let resolver: any HostResolving
    private let http: HTTPDataLoader.Configuration
    private let logger: Logger
    private let pool = Locked(Pool())
    /// Where `s3://` sources go; `nil` refuses them.
    let s3: S3DataLoader?

    /// Creates a loader. `http` configures each hop's loader (its `followsRedirects` and `dnsOverride` are
    /// replaced); `s3`, when given, fetches `s3://` sources.
    init(
        policy: RemotePolicy, resolver: any HostResolving = SystemHostResolver(),
        http: HTTPDataLoader.Configuration = .init(),
        logger: Logger = Logger(label: "darkroom.server.fetch"), s3: S3DataLoader? = nil
    ) {
        self.policy = policy
        self.resolver = resolver
        self.http = http
        self.logger = logger
        self.s3 = s3
    }

    /// Shuts down every pooled loader, waiting for their connections to close; fetches still running fail.
    /// Later fetches still work (with fresh loaders).
    func shutdown() async {
        await s3?.shutdown()
        let loaders = pool.withLock { pool -> [HTTPDataLoader] in
            let all = pool.entries.values.map(\.loader) + pool.retired.values.map(\.loader)
            pool.entries = [:]
            pool.retired = [:]
            return all
        }
        for loader in loaders { await loader.shutdown() }
    }

    /// Fetches `request.url`, vetting each hop; headers, partial-data fractions and `progress` pass through to
    /// every hop.
    /// A refusal or a redirect failure is a ``DarkroomError`` (`refused` or `http_status`) whose underlying error
    /// is the ``ServerError`` the client will see; the transfer's own failures pass through unchanged.
    func loadData(
        _ request: DataRequest,
        progress: @escaping @Sendable (DataProgress) -> Void
    ) async throws(DarkroomError) -> DataResponse {
        if request.url.scheme?.lowercased() == "s3" {
            guard let s3 else {
                throw Self.refusal(ServerError(.badRequest, "this server has no S3 configuration"))
            }
            return try await s3.loadData(request, progress: progress)
        }
        var url = request.url
        var redirects = 0
        while true {
            if Task.isCancelled { throw DarkroomError(.cancelled, "the request was cancelled") }
            try Self.vetting { () throws(ServerError) in try policy.checkURL(url) }
            guard let host = url.host, !host.isEmpty else {
                throw Self.refusal(ServerError(.badRequest, "source URL has no host"))
            }
            let scheme = url.scheme?.lowercased() ?? "http"
            var addresses: [IPAddress] = []
            do throws(ServerError) {
                addresses = try await resolver.resolve(host: host, port: url.port ?? (scheme == "https" ? 443 : 80))
                try policy.checkAddresses(addresses, host: host)
            } catch {
                if let (address, addressClass) = policy.blockedAddress(in: addresses) {
                    // The detail stays in the log; the client's message names the host only
                    logger.notice(
                        "refused a blocked address",
                        metadata: ["host": "\(host)", "address": "\(address)", "class": "\(addressClass)"])
                }
                throw Self.refusal(error)
            }
            let key = PoolKey(scheme: scheme, host: host, address: addresses[0])
            let loader = checkOut(key)
            var hop = request
            hop.url = url
            let response: DataResponse
            do throws(DarkroomError) {
                response = try await loader.loadData(hop, progress: progress)
                checkIn(key, loader)
            } catch {
                checkIn(key, loader)
                throw error
            }
            guard (300..<400).contains(response.statusCode), response.statusCode != 304 else { return response }
            guard [301, 302, 303, 307, 308].contains(response.statusCode) else {
                throw Self.refusal(
                    ServerError(.upstreamFailed, "\(url) answered \(response.statusCode)"), status: response.statusCode)
            }
            guard let location = response.headers["location"], !location.isEmpty else {
                throw Self.refusal(
                    ServerError(.upstreamFailed, "\(url) answered \(response.statusCode) without a Location"),
                    status: response.statusCode)
            }
            guard redirects < policy.maxRedirects else {
                let message = "too many redirects (more than \(policy.maxRedirects)) from \(request.url)"
                throw DarkroomError(
                    .tooManyRedirects, message, underlying: ServerError(.upstreamFailed, message))
            }
            guard let next = URL(string: location, relativeTo: url)?.absoluteURL else {
                throw Self.refusal(
                    ServerError(.upstreamFailed, "\(url) redirected to an invalid Location"),
                    status: response.statusCode)
            }
            logger.debug(
                "following redirect",
                metadata: [
                    "from": "\(url)", "to": "\(next)",
                    "status": "\(response.statusCode)",
                ])
            redirects += 1
            url = next
        }
    }

    /// A policy refusal (or, with `status`, an unusable redirect) as the pipeline's error, carrying the
    /// ``ServerError`` the client will see.
    private static func refusal(_ error: ServerError, status: Int? = nil) -> DarkroomError {
        DarkroomError(status == nil ? .refused : .httpStatus, error.message, statusCode: status, underlying: error)
    }

    private static func vetting(_ check: () throws(ServerError) -> Void) throws(DarkroomError) {
        do throws(ServerError) { try check() } catch { throw refusal(error) }
    }

    // MARK: - Loader pool

    private struct PoolKey: Hashable, Sendable {
        var scheme: String
        var host: String
        var address: IPAddress
    }

    private struct Entry: Sendable {
        let loader: HTTPDataLoader
        var users: Int
        var lastUse: UInt64
    }

    private struct Pool: Sendable {
        var entries: [PoolKey: Entry] = [:]
        /// Evicted loaders still in use, by identity; shut down when their last user checks in.
        var retired: [ObjectIdentifier: Entry] = [:]
        var tick: UInt64 = 0
    }

    /// A loader pinned to `key.address`, marked in use; pair with ``checkIn(_:_:)``.
    private func checkOut(_ key: PoolKey) -> HTTPDataLoader {
        var configuration = http
        configuration.followsRedirects = false
        configuration.dnsOverride = [key.host: key.address.description]
        let logger = logger
        let (loader, evicted) = pool.withLock { pool -> (HTTPDataLoader, HTTPDataLoader?) in
            pool.tick += 1
            if var entry = pool.entries[key] {
                entry.users += 1
                entry.lastUse = pool.tick
                pool.entries[key] = entry
                return (entry.loader, nil)
            }
            let loader = HTTPDataLoader(configuration: configuration, logger: logger)
            pool.entries[key] = Entry(loader: loader, users: 1, lastUse: pool.tick)
            guard pool.entries.count > Self.poolCapacity,
                let oldest = pool.entries.min(by: { $0.value.lastUse < $1.value.lastUse })
            else { return (loader, nil) }
            pool.entries[oldest.key] = nil
            if oldest.value.users == 0 { return (loader, oldest.value.loader) }
            pool.retired[ObjectIdentifier(oldest.value.loader)] = oldest.value
            return (loader, nil)
        }
        if let evicted { Task { await evicted.shutdown() } }
        return loader
    }

    /// Marks `loader` no longer in use by this fetch; shuts it down if it was evicted and this was its last user.
    private func checkIn(_ key: PoolKey, _ loader: HTTPDataLoader) {
        let id = ObjectIdentifier(loader)
        let finished = pool.withLock { pool -> HTTPDataLoader? in
            if var entry = pool.entries[key], entry.loader === loader {
                entry.users -= 1
                pool.entries[key] = entry
                return nil
            }
            guard var entry = pool.retired[id] else { return nil }
            entry.users -= 1
            if entry.users > 0 {
                pool.retired[id] = entry
                return nil
            }
            pool.retired[id] = nil
            return entry.loader
        }
        if let finished { Task { await finished.shutdown() } }
    }
}
