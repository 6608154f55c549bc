import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A plain TCP connection to a loopback server, from a chosen loopback address, for the connection-limit tests:
/// open it, send bytes, read an answer, see whether the server closed it. The waiting calls are `async` and block
/// a Dispatch thread, never one of the few threads of Swift's shared pool the server under test needs; the
/// descriptor closes on `deinit`.
///
/// `@unchecked Sendable`: a test uses each connection from one task, one call at a time (each `async` call returns
/// only when its Dispatch work is done), so `fd` is never touched by two threads at once.
final class RawConnection: @unchecked Sendable {
    private(set) var fd: Int32

    /// Connects to `127.0.0.1:port` from `source` (any 127.x.y.z address is loopback on Linux).
    init(port: Int, from source: String = "127.0.0.1") throws {
        // Close-on-exec: a reference tool another suite starts meanwhile must not inherit the socket, or closing it
        // here would not close the connection at the server while that child lives
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.EMFILE) }
        var local = sockaddr_in()
        local.sin_family = sa_family_t(AF_INET)
        inet_pton(AF_INET, source, &local.sin_addr)
        var remote = sockaddr_in()
        remote.sin_family = sa_family_t(AF_INET)
        remote.sin_port = in_port_t(UInt16(port).bigEndian)
        inet_pton(AF_INET, "127.0.0.1", &remote.sin_addr)
        let size = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &local) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, size) }
        }
        let connected = withUnsafePointer(to: &remote) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, size) }
        }
        guard bound == 0, connected == 0 else {
            let code = POSIXErrorCode(rawValue: errno) ?? .ECONNREFUSED
            Glibc.close(fd)
            fd = -1
            throw POSIXError(code)
        }
    }

    deinit { close() }

    func close() {
        if fd >= 0 { Glibc.close(fd) }
        fd = -1
    }

    /// Sends `text` whole; false when the connection is broken.
    @discardableResult
    func send(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard n > 0 else { return false }
            sent += n
        }
        return true
    }

    /// Whether the server closed the connection (end of stream or reset) within `seconds`, reading and dropping
    /// whatever it sent before.
    func closedByPeer(within seconds: Double) async -> Bool {
        await Self.offPool { self.waitClosed(within: seconds) }
    }

    private func waitClosed(within seconds: Double) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let left = deadline.timeIntervalSinceNow
            guard left > 0 else { return false }
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, Int32(left * 1000) + 1) > 0 else { continue }
            let n = recv(fd, &buffer, buffer.count, Int32(MSG_DONTWAIT))
            if n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) { return true }
        }
    }

    /// Sends a GET for `target` and reads the answer (``readResponse(within:)``).
    func get(_ target: String, within seconds: Double = 10) async -> (status: Int, body: String)? {
        guard send("GET \(target) HTTP/1.1\r\nHost: test\r\n\r\n") else { return nil }
        return await readResponse(within: seconds)
    }

    /// Reads one answer's status and body (by `Content-Length`); `nil` when the connection closes or `seconds`
    /// pass first.
    func readResponse(within seconds: Double = 10) async -> (status: Int, body: String)? {
        await Self.offPool { self.read(within: seconds) }
    }

    private func read(within seconds: Double) -> (status: Int, body: String)? {
        let deadline = Date().addingTimeInterval(seconds)
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16384)
        while deadline.timeIntervalSinceNow > 0 {
            if let end = received.firstRange(of: Array("\r\n\r\n".utf8)) {
                let head = String(decoding: received[..<end.lowerBound], as: UTF8.self)
                let lines = head.split(separator: "\r\n")
                guard let status = lines.first?.split(separator: " ").dropFirst().first.flatMap({ Int($0) }) else {
                    return nil
                }
                let length =
                    lines.first { $0.lowercased().hasPrefix("content-length:") }
                    .flatMap { Int($0.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) } ?? 0
                if received.count - end.upperBound >= length {
                    return (status, String(decoding: received[end.upperBound..<end.upperBound + length], as: UTF8.self))
                }
            }
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, Int32(max(1, deadline.timeIntervalSinceNow * 1000))) > 0 else { continue }
            let n = recv(fd, &buffer, buffer.count, 0)
            guard n > 0 else { return nil }
            received += buffer[..<n]
        }
        return nil
    }

    /// Runs `work` on a Dispatch thread and returns its result.
    private static func offPool<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(returning: work()) }
        }
    }
}
