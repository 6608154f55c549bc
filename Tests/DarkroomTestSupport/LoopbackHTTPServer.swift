import DarkroomSupport
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix

/// A real HTTP/1.1 server on 127.0.0.1 (an ephemeral port) for tests, answering through a route handler the test
/// suite supplies. It owns the plumbing (bind, accept, parse, keep-alive, close) and counts connections and
/// requests per path; the handler decides what each route does, misbehaving on purpose where a test needs it.
package final class LoopbackHTTPServer: Sendable {
    /// One parsed request.
    package struct Request: Sendable {
        /// The request line and headers.
        package let head: HTTPRequestHead
        /// The URI's path.
        package let path: String
        /// The query's items (first value wins).
        package let query: [String: String]
    }

    /// Writes one response; passed to the handler with the request.
    package struct Response: Sendable {
        /// The connection's outbound half, for handlers that write parts by hand (stalls, truncations).
        package let outbound: NIOAsyncChannelOutboundWriter<HTTPServerResponsePart>
        /// The connection, to tell whether the client is still there.
        package let channel: any Channel

        /// Sends a whole response: the head (with a Content-Length unless `headers` has one) and `body`.
        package func send(
            _ status: HTTPResponseStatus, _ headers: [(String, String)] = [],
            _ body: [UInt8] = []
        ) async throws {
            var h = HTTPHeaders(headers)
            if h["Content-Length"].isEmpty && h["Transfer-Encoding"].isEmpty {
                h.add(name: "Content-Length", value: "\(body.count)")
            }
            try await outbound.write(.head(HTTPResponseHead(version: .http1_1, status: status, headers: h)))
            if !body.isEmpty { try await outbound.write(.body(.byteBuffer(ByteBuffer(bytes: body)))) }
            try await outbound.write(.end(nil))
        }
    }

    /// Answers one request; returns whether the connection may serve another.
    package typealias Handler = @Sendable (Request, Response) async throws -> Bool

    /// The bound port.
    package let port: Int
    private let channel: NIOAsyncChannel<NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>, Never>
    private let handler: Handler
    private let counts = Locked<[String: Int]>([:])
    private let accepted = Locked(0)

    /// Binds 127.0.0.1:0 and starts answering with `handler`.
    package static func start(_ handler: @escaping Handler) async throws -> LoopbackHTTPServer {
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .bind(host: "127.0.0.1", port: 0) { child in
                child.eventLoop.makeCompletedFuture {
                    try child.pipeline.syncOperations.configureHTTPServerPipeline()
                    return try NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>(
                        wrappingChannelSynchronously: child)
                }
            }
        let server = LoopbackHTTPServer(channel: channel, handler: handler)
        // The server's tasks prefer their own threads: synchronous tests (decodes, child processes) can hold every
        // cooperative thread for many seconds on a 2-core machine, and an origin that cannot answer in that time
        // fails the client's read timeout for reasons that have nothing to do with the test.
        Task(executorPreference: TestServerExecutor.shared) { await server.run() }
        return server
    }

    private init(
        channel: NIOAsyncChannel<NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>, Never>,
        handler: @escaping Handler
    ) {
        self.channel = channel
        self.handler = handler
        port = channel.channel.localAddress?.port ?? 0
    }

    /// Closes the listener.
    package func stop() async {
        try? await channel.channel.close()
    }

    /// `http://HOST:PORT/PATH`.
    package func url(_ path: String, host: String = "127.0.0.1") -> URL {
        URL(string: "http://\(host):\(port)\(path)")!
    }

    /// Requests received so far for `path`.
    package func requests(_ path: String) -> Int { counts.withLock { $0[path] ?? 0 } }
    /// Requests received so far, all paths.
    package var totalRequests: Int { counts.withLock { $0.values.reduce(0, +) } }
    /// Connections accepted so far.
    package var connections: Int { accepted.withLock { $0 } }

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
                    let components = URLComponents(string: head.uri)
                    let path = components?.path ?? head.uri
                    let query = Dictionary(
                        (components?.queryItems ?? []).map { ($0.name, $0.value ?? "") },
                        uniquingKeysWith: { first, _ in first })
                    counts.withLock { $0[path, default: 0] += 1 }
                    let keepOpen = try await handler(
                        Request(head: head, path: path, query: query),
                        Response(outbound: outbound, channel: connection.channel))
                    if !keepOpen { return }
                }
            }
        }
    }
}
