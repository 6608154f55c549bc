import DarkroomCache
import DarkroomImage
import DarkroomSupport
import DarkroomTestSupport
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix

@testable import Darkroom

/// A real HTTP/1.1 server on 127.0.0.1 (ephemeral port) for pipeline tests, with routes that misbehave on
/// purpose. Every wait is bounded, so a test can never hang on it.
///
/// Routes (query `?v=` makes distinct URLs for the same content):
/// - `/img/NAME`: the image registered as NAME. `delay=MS` before the headers; `hold=NAME` until released; `slow=MS` between 1 KiB chunks (`chunk=BYTES` for another size);
///   `pause=NAME` stops after half the body until NAME is released; `stops=O1,O2,…&step=NAME` stops before
///   byte offset O(i) (ascending) until ``step(_:)`` has been called i + 1 times for NAME; `type=MIME` overrides Content-Type; `etag=1` sends an ETag with `max-age=0` and answers 304 to a match (`bare304=1`: with the ETag only);
///   `nostore=1` sends `Cache-Control: no-store`.
/// - `/html`: an HTML page served as `image/jpeg`.
/// - `/stall`: headers and 100 bytes of a 10 KB body, then silence (≤ 10 s).
/// - `/truncated`: Content-Length 20,000, 5,000 bytes, then close.
/// - `/huge`: announces 300 MB; `/huge-stream`: streams up to 300 MB without a Content-Length.
/// - `/status/N`: status N. `/flaky/KEY?fail=N&status=S`: status S for the first N requests of KEY, then the image.
/// - `/loop/a` ↔ `/loop/b`: a redirect loop. `/redirect/N`: N redirects, then the image `a`.
final class TestServer: Sendable {
    struct Stats: Sendable {
        var requests: [String: Int] = [:]
        var bytesSent: [String: Int] = [:]
        var inFlight = 0
        var maxInFlight = 0
        var order: [String] = []
        var conditional = 0
        var closedEarly: [String: Int] = [:]
    }

    private let http = Locked<LoopbackHTTPServer?>(nil)
    private let stats = Locked(Stats())
    private let images = Locked<[String: [UInt8]]>([:])
    private let flaky = Locked<[String: Int]>([:])
    private let holds = Locked<Set<String>>([])

    /// Requests with `hold=NAME` wait (at most 20 s) before answering until ``release(_:)``: lets a test line up
    /// concurrent requests deterministically instead of racing a delay.
    func hold(_ name: String) { holds.withLock { _ = $0.insert(name) } }
    func release(_ name: String) { holds.withLock { _ = $0.remove(name) } }
    private let steps = Locked<[String: Int]>([:])
    /// Lets a `stops=…&step=NAME` response go on to its next stop.
    func step(_ name: String) { steps.withLock { $0[name, default: 0] += 1 } }

    static func start() async throws -> TestServer {
        let server = TestServer()
        let http = try await LoopbackHTTPServer.start { [server] request, response in
            try await server.respond(request, response)
        }
        server.http.withLock { $0 = http }
        return server
    }

    private init() {}

    private var server: LoopbackHTTPServer { http.withLock { $0! } }

    var port: Int { server.port }

    func stop() async {
        await server.stop()
    }

    func url(_ path: String, host: String = "127.0.0.1") -> URL { server.url(path, host: host) }

    func register(_ name: String, _ bytes: [UInt8]) { images.withLock { $0[name] = bytes } }

    var snapshot: Stats { stats.withLock { $0 } }
    func requests(_ path: String) -> Int { stats.withLock { $0.requests[path] ?? 0 } }
    func bytesSent(_ path: String) -> Int { stats.withLock { $0.bytesSent[path] ?? 0 } }

    /// Responds; returns whether the connection may be reused.
    private func respond(_ request: LoopbackHTTPServer.Request, _ response: LoopbackHTTPServer.Response) async throws
        -> Bool
    {
        let head = request.head
        let path = request.path
        let query = request.query
        let out = response.outbound
        let channel = response.channel
        stats.withLock { s in
            s.requests[path, default: 0] += 1
            s.inFlight += 1
            s.maxInFlight = max(s.maxInFlight, s.inFlight)
            s.order.append(path)
            if head.headers["If-None-Match"].first != nil { s.conditional += 1 }
        }
        defer { stats.withLock { $0.inFlight -= 1 } }
        if let ms = query["delay"].flatMap(Int.init) { try await Task.sleep(for: .milliseconds(ms)) }
        @Sendable func waitWhileHeld(_ name: String?) async throws {
            guard let name else { return }
            for _ in 0..<4_000 where holds.withLock({ $0.contains(name) }) {
                try await Task.sleep(for: .milliseconds(5))
            }
        }
        try await waitWhileHeld(query["hold"])

        func send(
            _ status: HTTPResponseStatus, _ headers: [(String, String)], _ body: [UInt8], chunkDelayMS: Int? = nil
        ) async throws {
            var h = HTTPHeaders(headers)
            if h["Content-Length"].isEmpty { h.add(name: "Content-Length", value: "\(body.count)") }
            try await out.write(.head(HTTPResponseHead(version: .http1_1, status: status, headers: h)))
            var offset = 0
            var paused = false
            let chunk =
                chunkDelayMS == nil ? max(1, body.count) : query["chunk"].flatMap(Int.init).map { max(1, $0) } ?? 1024
            var stops = (query["stops"] ?? "").split(separator: ",").compactMap { Int($0) }[...]
            var stopsPassed = 0
            while offset < body.count {
                if !paused, let name = query["pause"], offset * 2 >= body.count {
                    paused = true
                    try await waitWhileHeld(name)
                }
                if let stop = stops.first, offset >= stop, let name = query["step"] {
                    stops.removeFirst()
                    stopsPassed += 1
                    for _ in 0..<4_000 where steps.withLock({ $0[name, default: 0] < stopsPassed }) {
                        try await Task.sleep(for: .milliseconds(5))
                    }
                }
                let end = min(body.count, offset + chunk, stops.first.map { max($0, offset + 1) } ?? .max)
                if let d = chunkDelayMS { try await Task.sleep(for: .milliseconds(d)) }
                guard channel.isActive else {
                    stats.withLock { $0.closedEarly[path, default: 0] += 1 }
                    throw CancellationError()
                }
                try await out.write(.body(.byteBuffer(ByteBuffer(bytes: body[offset..<end]))))
                stats.withLock { $0.bytesSent[path, default: 0] += end - offset }
                offset = end
            }
            try await out.write(.end(nil))
        }

        var parts = path.split(separator: "/").map(String.init)
        if parts == ["redirect", "0"] { parts = ["img", "a"] }
        guard parts.count >= 1 else {
            try await send(.notFound, [], [])
            return true
        }
        switch parts[0] {
        case "img", "flaky":
            guard parts.count == 2 else {
                try await send(.notFound, [], [])
                return true
            }
            if parts[0] == "flaky" {
                let fails = query["fail"].flatMap(Int.init) ?? 0
                let count = flaky.withLock { f in
                    f[parts[1], default: 0] += 1
                    return f[parts[1]]!
                }
                if count <= fails {
                    try await send(
                        HTTPResponseStatus(statusCode: query["status"].flatMap(Int.init) ?? 503), [], Array("busy".utf8)
                    )
                    return true
                }
            }
            let name = parts[0] == "img" ? parts[1] : "a"
            guard let bytes = images.withLock({ $0[name] }) else {
                try await send(.notFound, [], Array("no such image".utf8))
                return true
            }
            var headers = [("Content-Type", query["type"] ?? "image/jpeg")]
            if query["etag"] == "1" {
                let tag = "\"\(name)-v1\""
                headers += [("ETag", tag), ("Cache-Control", "max-age=0")]
                if head.headers["If-None-Match"].first == tag {
                    // `bare304=1`: the 304 carries the ETag only, as S3 and many origins answer
                    let answered = query["bare304"] == "1" ? [("ETag", tag)] : headers
                    try await send(.notModified, answered + [("Content-Length", "0")], [])
                    return true
                }
            }
            if query["nostore"] == "1" { headers.append(("Cache-Control", "no-store")) }
            try await send(.ok, headers, bytes, chunkDelayMS: query["slow"].flatMap(Int.init))
            return true
        case "redirect":
            let n = Int(parts[1]) ?? 0
            try await send(.found, [("Location", "/redirect/\(n - 1)")], [])
            return true
        case "loop":
            try await send(.found, [("Location", parts[1] == "a" ? "/loop/b" : "/loop/a")], [])
            return true
        case "html":
            try await send(
                .ok, [("Content-Type", "image/jpeg")], Array("<!doctype html><html><body>hi</body></html>".utf8))
            return true
        case "status":
            try await send(
                HTTPResponseStatus(statusCode: Int(parts[1]) ?? 500), [("Content-Type", "text/plain")],
                Array("status".utf8))
            return true
        case "stall":
            try await out.write(
                .head(
                    HTTPResponseHead(
                        version: .http1_1, status: .ok,
                        headers: ["Content-Length": "10000", "Content-Type": "image/jpeg"])))
            try await out.write(.body(.byteBuffer(ByteBuffer(bytes: [UInt8](repeating: 0xFF, count: 100)))))
            for _ in 0..<100 where channel.isActive { try await Task.sleep(for: .milliseconds(100)) }
            return false
        case "truncated":
            let bytes = images.withLock { $0["a"] } ?? []
            try await out.write(
                .head(
                    HTTPResponseHead(
                        version: .http1_1, status: .ok,
                        headers: ["Content-Length": "20000", "Content-Type": "image/jpeg"])))
            try await out.write(.body(.byteBuffer(ByteBuffer(bytes: bytes.prefix(5000)))))
            return false
        case "huge", "huge-stream":
            var headers: HTTPHeaders = ["Content-Type": "image/jpeg"]
            if parts[0] == "huge" {
                headers.add(name: "Content-Length", value: "\(300 << 20)")
            } else {
                headers.add(name: "Transfer-Encoding", value: "chunked")
            }
            try await out.write(.head(HTTPResponseHead(version: .http1_1, status: .ok, headers: headers)))
            var chunk = [UInt8](repeating: 0, count: 64 << 10)
            chunk[0] = 0xFF
            chunk[1] = 0xD8
            chunk[2] = 0xFF
            var sent = 0
            while sent < 300 << 20 {
                guard channel.isActive else {
                    stats.withLock { $0.closedEarly[path, default: 0] += 1 }
                    return false
                }
                do {
                    try await out.write(.body(.byteBuffer(ByteBuffer(bytes: chunk))))
                } catch {
                    stats.withLock { $0.closedEarly[path, default: 0] += 1 }
                    return false
                }
                sent += chunk.count
                stats.withLock { $0.bytesSent[path, default: 0] += chunk.count }
                chunk[0] = 0
            }
            try await out.write(.end(nil))
            return false
        default:
            try await send(.notFound, [], Array("not found".utf8))
            return true
        }
    }
}
