import DarkroomSupport
import DarkroomImage
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import Synchronization

/// A small HTTP/1.1 server on 127.0.0.1 (ephemeral port) for the safety tests, cut down from the pipeline
/// tests' `TestServer`. Counts every request it answers and every connection it accepts.
///
/// Routes:
/// - `/img`: 64 bytes `0...63` as `image/jpeg`.
/// - `/to?url=U`: 302 with `Location: U`.
/// - `/loop/a` ↔ `/loop/b`: a redirect loop (relative `Location`s).
/// - `/bare-redirect`: 302 without `Location`.
/// - `/photo?delay=MS`: a real 400×300 JPEG, after an optional delay (slow origins for overload and timeouts).
final class LoopbackServer: Sendable {
    /// The body `/img` answers with.
    static let image: [UInt8] = Array(0..<64)
    /// The body `/photo` answers with: a 400×300 JPEG.
    static let photo: [UInt8] = try! ImageEncoder.encode(ServerHarness.gradient(400, 300, alpha: false), as: .jpeg)

    let port: Int
    private let channel: NIOAsyncChannel<NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>, Never>
    private let counts = Locked<[String: Int]>([:])
    private let accepted = Locked(0)

    static func start() async throws -> LoopbackServer {
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .bind(host: "127.0.0.1", port: 0) { child in
                child.eventLoop.makeCompletedFuture {
                    try child.pipeline.syncOperations.configureHTTPServerPipeline()
                    return try NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>(wrappingChannelSynchronously: child)
                }
            }
        let server = LoopbackServer(channel: channel)
        Task { await server.run() }
        return server
    }

    private init(channel: NIOAsyncChannel<NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>, Never>) {
        self.channel = channel
        port = channel.channel.localAddress?.port ?? 0
    }

    func stop() async {
        try? await channel.channel.close()
    }

    /// `http://HOST:PORT/PATH`.
    func url(_ path: String, host: String = "127.0.0.1") -> URL { URL(string: "http://\(host):\(port)\(path)")! }

    /// Requests answered so far, all paths.
    var totalRequests: Int { counts.withLock { $0.values.reduce(0, +) } }
    /// Connections accepted so far.
    var connections: Int { accepted.withLock { $0 } }
    /// Requests answered so far for `path`.
    func requests(_ path: String) -> Int { counts.withLock { $0[path] ?? 0 } }

    private func run() async {
        try? await channel.executeThenClose { inbound in
            try await withThrowingDiscardingTaskGroup { group in
                for try await connection in inbound {
                    group.addTask { await self.serve(connection) }
                }
            }
        }
    }

    private func serve(_ connection: NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>) async {
        accepted.withLock { $0 += 1 }
        try? await connection.executeThenClose { inbound, outbound in
            var head: HTTPRequestHead?
            for try await part in inbound {
                switch part {
                case .head(let h): head = h
                case .body: break
                case .end:
                    guard let head else { return }
                    try await respond(head, outbound)
                }
            }
        }
    }

    private func respond(_ head: HTTPRequestHead, _ out: NIOAsyncChannelOutboundWriter<HTTPServerResponsePart>) async throws {
        let components = URLComponents(string: head.uri)!
        let path = components.path
        counts.withLock { $0[path, default: 0] += 1 }

        func send(_ status: HTTPResponseStatus, _ headers: [(String, String)], _ body: [UInt8] = []) async throws {
            var h = HTTPHeaders(headers)
            h.add(name: "Content-Length", value: "\(body.count)")
            try await out.write(.head(HTTPResponseHead(version: .http1_1, status: status, headers: h)))
            if !body.isEmpty { try await out.write(.body(.byteBuffer(ByteBuffer(bytes: body)))) }
            try await out.write(.end(nil))
        }

        switch path {
        case "/img":
            try await send(.ok, [("Content-Type", "image/jpeg")], Self.image)
        case "/to":
            let target = components.queryItems?.first { $0.name == "url" }?.value ?? "/img"
            try await send(.found, [("Location", target)])
        case "/loop/a":
            try await send(.found, [("Location", "/loop/b")])
        case "/loop/b":
            try await send(.found, [("Location", "a")])
        case "/bare-redirect":
            try await send(.found, [])
        case "/photo":
            if let ms = components.queryItems?.first(where: { $0.name == "delay" })?.value.flatMap(Int.init) {
                try await Task.sleep(for: .milliseconds(ms))
            }
            try await send(.ok, [("Content-Type", "image/jpeg")], Self.photo)
        default:
            try await send(.notFound, [], Array("not found".utf8))
        }
    }
}
