import DarkroomSupport
import DarkroomTestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import Logging
import NIOCore
import NIOEmbedded
import Testing

@testable import DarkroomServer

/// The connection limits, over real sockets on loopback: per client address, in all (the longest-idle connection
/// makes room, so `/health` and cached hits still answer), the head timeout against idle and slow senders, and
/// the descriptor limit they are fitted under.
@Suite("Connection limits")
struct ConnectionLimitTests {
    let root = ServerHarness.makeRoot()

    /// Opens `count` connections from `source`, each given a moment to be accepted.
    static func open(_ count: Int, port: Int, from source: String = "127.0.0.1") throws -> [RawConnection] {
        try (0..<count).map { _ in try RawConnection(port: port, from: source) }
    }

    /// Waits until the server has `count` connections open (or fewer, with `orFewer`), at most 5 s; returns the last
    /// count seen.
    static func waitOpen(_ server: ThumbnailServer, _ count: Int, orFewer: Bool = false) async throws -> Int {
        let deadline = ContinuousClock.now + .seconds(5)
        while !(server.openConnections == count || orFewer && server.openConnections < count)
            && ContinuousClock.now < deadline
        {
            try await Task.sleep(for: .milliseconds(10))
        }
        return server.openConnections
    }

    @Test("one address gets at most maxConnectionsPerClient; the rest are closed, counted, and others still answer")
    func perClient() async throws {
        // Given at most 20 connections per address (and a head timeout far past the test's length: each idle flood
        // connection is watched for a second in turn, which a loaded machine stretches past the default minute), and
        // one connection of 127.0.0.1's own, served once
        var config = ServerHarness.configuration(root: root)
        config.maxConnectionsPerClient = 20
        config.idleTimeout = 600
        try await ServerHarness.withLiveServer(config) { server, client in
            let port = try #require(client.port)
            // A kept-alive connection of this address's own, served once, counts toward its limit (a raw one: the
            // test client's would close itself after a minute idle, which a loaded machine can outlast)
            let first = try RawConnection(port: port)
            #expect(await first.get("/health")?.status == 200)
            let own = server.openConnections
            #expect(own == 1)
            // When 127.0.0.1 opens 30 more and sends nothing
            let flood = try Self.open(30, port: port)
            // Then exactly 20 - own of them stay open: the rest are closed at once and counted
            var closed = 0
            for connection in flood where await connection.closedByPeer(within: 1) { closed += 1 }
            #expect(closed == 30 - (20 - own), "own \(own), closed \(closed)")
            #expect(server.connections.counts[.perClient] == UInt64(closed))
            #expect(try await Self.waitOpen(server, 20) == 20)
            // And another address is served, /health and a thumbnail alike
            let other = try RawConnection(port: port, from: "127.0.0.2")
            let health = try #require(await other.get("/health"))
            #expect(health.status == 200 && health.body.contains("\"connectionsOpen\":21"), "\(health.body)")
            #expect(await other.get("/v1/thumb?src=photo.jpg&w=32")?.status == 200)
            // And once the flood's connections close, 127.0.0.1 may connect again
            for connection in flood { connection.close() }
            #expect(try await Self.waitOpen(server, own + 1) == own + 1)
            #expect(await (try RawConnection(port: port)).get("/health")?.status == 200)
            first.close()  // (held open to here)
        }
    }

    @Test("at maxConnections a new client replaces the longest-idle connection; one mid-request is kept")
    func totalEvictsIdle() async throws {
        let origin = try await LoopbackServer.start()
        defer { Task { await origin.stop() } }
        // Given at most 10 connections in all, no per-address limit, and a slow remote source
        var config = ServerHarness.configuration(root: root)
        config.maxConnections = 10
        config.maxConnectionsPerClient = 0
        config.remote = RemotePolicy(allowedHosts: ["slow.example"])
        config.remote.blockedClasses.remove(.loopback)
        let resolver = FakeResolver(["slow.example": [IPAddress("127.0.0.1")!]])
        try await ServerHarness.withLiveServer(config, resolver: resolver) { server, client in
            let port = try #require(client.port)
            // When one connection is mid-request (a render taking 2 s) and then 25 idle connections arrive
            let busy = try RawConnection(port: port, from: "127.0.0.3")
            let src = "http://slow.example:\(origin.port)/photo?delay=2000"
            #expect(busy.send("GET /v1/thumb?w=32&src=\(src.queryEncoded) HTTP/1.1\r\nHost: t\r\n\r\n"))
            try await Task.sleep(for: .milliseconds(300))
            let idle = try Self.open(25, port: port)
            try await Task.sleep(for: .milliseconds(300))
            // Then never more than 10 are kept: the oldest idle ones were closed to make room (a closing one is
            // open until its close completes, which a loaded machine may take a while to run)
            #expect(server.connections.keptCount <= 10)
            #expect(try await Self.waitOpen(server, 10, orFewer: true) <= 10)
            var evicted = 0
            for connection in idle where await connection.closedByPeer(within: 0.5) { evicted += 1 }
            #expect(evicted >= 16, "evicted \(evicted)")
            #expect(server.connections.counts[.evicted, default: 0] >= 16)
            #expect(server.connections.counts[.total] == nil)
            // And a new client's /health and thumbnail are answered (within a minute: the test is of eviction, and
            // other suites' work may hold both cores for seconds)
            let health = try RawConnection(port: port, from: "127.0.0.2")
            #expect(await health.get("/health", within: 60)?.status == 200)
            let hit = try RawConnection(port: port, from: "127.0.0.2")
            #expect(await hit.get("/v1/thumb?src=photo.jpg&w=32", within: 60)?.status == 200)
            // And the connection mid-request was kept and gets its thumbnail
            #expect(await busy.readResponse(within: 30)?.status == 200)
            #expect(server.connections.keptCount <= 10)
            #expect(try await Self.waitOpen(server, 10, orFewer: true) <= 10)
        }
    }

    @Test("a connection that sends no complete request head within the idle timeout is closed, trickling or not")
    func headTimeout() async throws {
        // Given a 1 s idle timeout
        var config = ServerHarness.configuration(root: root)
        config.idleTimeout = 1
        try await ServerHarness.withLiveServer(config) { server, client in
            let port = try #require(client.port)
            // When one connection trickles a header line every 200 ms (for up to 6 s) and another answers one request then idles
            let slow = try RawConnection(port: port)
            let started = ContinuousClock.now
            #expect(slow.send("GET /health HTTP/1.1\r\n"))
            var closedAfter: Duration?
            for i in 0..<30 {
                if await slow.closedByPeer(within: 0.2) {
                    closedAfter = ContinuousClock.now - started
                    break
                }
                slow.send("X-Slow-\(i): y\r\n")
            }
            let idle = try RawConnection(port: port)
            #expect(await idle.get("/health")?.status == 200)
            // Then the slow sender is closed after the timeout, not kept alive by its bytes (bytes that reset the
            // timer would keep it open through all 6 s of trickling; the bound allows for a loaded machine)
            let after = try #require(closedAfter)
            #expect(after >= .milliseconds(900) && after < .seconds(5), "\(after)")
            // And the idle one is closed after the timeout too
            #expect(await idle.closedByPeer(within: 3))
            #expect(server.connections.counts[.headTimeout, default: 0] >= 2)
        }
    }

    @Test("refusals are logged: the first at once, the rest of a burst summed in one line when the interval ends")
    func refusalLog() async throws {
        // Given a guard allowing one connection per address, logging at most every 0.3 s
        let store = CapturingLogHandler.Store()
        let connections = ConnectionGuard(
            limits: .init(maxConnections: 100, maxPerClient: 1, headTimeout: 0),
            logger: Logger(label: "test") { _ in CapturingLogHandler(store) }, logInterval: 0.3)
        func channel() throws -> EmbeddedChannel {
            let channel = EmbeddedChannel()
            channel.remoteAddress = try SocketAddress(ipAddress: "10.0.0.1", port: 1)
            return channel
        }
        func lines() -> [CapturingLogHandler.Entry] { store.all.filter { $0.message.contains("connection limits") } }
        guard case .accepted = connections.open(try channel()) else {
            Issue.record("the first connection must be admitted")
            return
        }
        // When five more come from the same address
        for _ in 0..<5 {
            if case .accepted = connections.open(try channel()) { Issue.record("over the per-address limit") }
        }
        // Then the first refusal is logged at once, and the other four in one line after the interval
        #expect(lines().count == 1 && lines().first?.metadata["per_client"] == "1")
        #expect(lines().first?.level == .warning && lines().first?.metadata["last_client"] == "10.0.0.1")
        // (generous: in the full suite the shared pool the timer's task runs on can be busy for many seconds)
        let deadline = ContinuousClock.now + .seconds(60)
        while lines().count < 2 && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
        #expect(lines().count == 2 && lines().last?.metadata["per_client"] == "4", "\(lines().map(\.metadata))")
        #expect(connections.counts[.perClient] == 5)
        // And nothing more is logged without new refusals
        try await Task.sleep(for: .milliseconds(500))
        #expect(lines().count == 2)
    }

    @Test("the connection limit leaves the descriptor reserve free")
    func fittedToDescriptors() {
        #expect(ConnectionGuard.maxConnections(4096, descriptorLimit: 20_000, reserve: 512) == 4096)
        #expect(ConnectionGuard.maxConnections(4096, descriptorLimit: 1024, reserve: 512) == 512)
        #expect(ConnectionGuard.maxConnections(4096, descriptorLimit: 100, reserve: 512) == 16)
        #expect(ConnectionGuard.maxConnections(4096, descriptorLimit: nil, reserve: 512) == 4096)
    }
}
