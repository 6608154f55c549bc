import DarkroomCache
import DarkroomSupport
import Dispatch

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Turns a host name into the addresses a connection to it may use, so ``RemotePolicy`` can check them before
/// anything connects. A test double can map names to any addresses without DNS.
protocol HostResolving: Sendable {
    /// Every address `host` resolves to (IP literals return themselves). Throws ``ServerError`` only:
    /// ``ServerError/Code/upstreamFailed`` when resolution fails, ``ServerError/Code/timedOut`` when it is slow.
    func resolve(host: String, port: Int) async throws(ServerError) -> [IPAddress]
}

/// The system resolver: `getaddrinfo` (`/etc/hosts`, DNS, nsswitch) on a Dispatch queue, never on Swift's
/// cooperative pool.
///
/// Cost: one blocking `getaddrinfo` on a Dispatch worker thread per non-literal host; no caching (the system's
/// resolver may cache). Limit: `getaddrinfo` cannot be interrupted, so on timeout or task cancellation the caller
/// is answered at once but the worker thread stays busy until the lookup ends on its own.
struct SystemHostResolver: HostResolving {
    /// Seconds before a lookup fails with ``ServerError/Code/timedOut``.
    var timeout: Double

    private static let queue = DispatchQueue(label: "darkroom.server.getaddrinfo", attributes: .concurrent)

    /// Creates a resolver with the given timeout (default 5 s).
    init(timeout: Double = 5) {
        self.timeout = timeout
    }

    /// Resolves `host` (brackets around an IPv6 literal and a trailing dot allowed) for TCP on `port`.
    /// Duplicates are removed; order is `getaddrinfo`'s.
    func resolve(host: String, port: Int) async throws(ServerError) -> [IPAddress] {
        if let literal = IPAddress(host) { return [literal] }
        guard !host.isEmpty, !host.utf8.contains(0) else {
            throw ServerError(.upstreamFailed, "cannot resolve an empty or malformed host name")
        }
        let slot = Locked<CheckedContinuation<Result<[IPAddress], ServerError>, Never>?>(nil)
        let timeout = self.timeout
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation {
                (continuation: CheckedContinuation<Result<[IPAddress], ServerError>, Never>) in
                slot.withLock { $0 = continuation }
                if Task.isCancelled {
                    Self.finish(slot, .failure(ServerError(.upstreamFailed, "lookup of \(host) cancelled")))
                    return
                }
                Self.queue.async {
                    Self.finish(slot, Self.lookup(host: host, port: port))
                }
                Self.queue.asyncAfter(deadline: .now() + timeout) {
                    Self.finish(
                        slot, .failure(ServerError(.timedOut, "lookup of \(host) took longer than \(timeout) s")))
                }
            }
        } onCancel: {
            Self.finish(slot, .failure(ServerError(.upstreamFailed, "lookup of \(host) cancelled")))
        }
        return try result.get()
    }

    /// Resumes the continuation if nobody has yet; later calls do nothing.
    private static func finish(
        _ slot: Locked<CheckedContinuation<Result<[IPAddress], ServerError>, Never>?>,
        _ result: Result<[IPAddress], ServerError>
    ) {
        let continuation = slot.withLock { value -> CheckedContinuation<Result<[IPAddress], ServerError>, Never>? in
            let taken = value
            value = nil
            return taken
        }
        continuation?.resume(returning: result)
    }

    /// The blocking lookup.
    private static func lookup(host: String, port: Int) -> Result<[IPAddress], ServerError> {
        var name = host
        if name.hasPrefix("["), name.hasSuffix("]") { name = String(name.dropFirst().dropLast()) }
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        #if canImport(Glibc)
            hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        #else
            hints.ai_socktype = SOCK_STREAM
        #endif
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(name, String(port), &hints, &list)
        guard status == 0 else {
            let reason = String(cString: gai_strerror(status))
            return .failure(ServerError(.upstreamFailed, "cannot resolve \(host): \(reason)"))
        }
        defer { freeaddrinfo(list) }
        var addresses: [IPAddress] = []
        var node = list
        while let current = node {
            if let socketAddress = current.pointee.ai_addr,
                let address = IPAddress(socketAddress: UnsafePointer(socketAddress)),
                !addresses.contains(address)
            {
                addresses.append(address)
            }
            node = current.pointee.ai_next
        }
        guard !addresses.isEmpty else {
            return .failure(ServerError(.upstreamFailed, "cannot resolve \(host): no IPv4 or IPv6 addresses"))
        }
        return .success(addresses)
    }
}
