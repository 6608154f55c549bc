import DarkroomSupport
import DarkroomTestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import Testing

@testable import DarkroomServer

/// A render nobody waits for any more — every request for it timed out or its client disconnected — is
/// cancelled at once and frees its render slot (or its place in the queue), fetches and retries included.
@Suite("Abandoned renders")
struct AbandonedRenderTests {
    let root = ServerHarness.makeRoot()

    /// Two render slots, eight queue places, remote sources from a hanging loopback origin.
    func configuration(timeout: Double) -> (ServerConfiguration, FakeResolver) {
        var config = ServerHarness.configuration(root: root)
        config.maxRenders = 2
        config.maxQueued = 8
        config.requestTimeout = timeout
        config.remote = RemotePolicy(allowedHosts: ["hang.example"])
        config.remote.blockedClasses.remove(.loopback)
        return (config, FakeResolver(["hang.example": [IPAddress("127.0.0.1")!]]))
    }

    /// Polls `/health` until nothing runs or waits (and, given `connections`, only that many connections are
    /// open), for at most `seconds`; returns the last body.
    static func waitIdle(
        _ client: any TestClientProtocol, seconds: Double, connections: Int? = nil
    ) async throws -> String {
        let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        var body = ""
        repeat {
            body = String(buffer: try await client.execute(uri: "/health", method: .get).body)
            if body.contains("\"rendersQueued\":0") && body.contains("\"rendersRunning\":0")
                && connections.map({ body.contains("\"connectionsOpen\":\($0)") }) ?? true
            {
                return body
            }
            try await Task.sleep(for: .milliseconds(20))
        } while ContinuousClock.now < deadline
        return body
    }

    @Test("renders whose requests timed out free both slots at once: a local thumbnail queued behind them is served")
    func timedOutRendersFreeTheirSlots() async throws {
        let origin = try await LoopbackServer.start()
        defer { Task { await origin.stop() } }
        // Given a 4 s request timeout and an origin that never answers in time
        let (config, resolver) = configuration(timeout: 4)
        try await ServerHarness.withLiveServer(config, resolver: resolver) { server, client in
            // When two requests for it take both render slots and a local thumbnail is asked for 3.5 s after both
            // run (so its own deadline leaves it 3.5 s to render once the others' pass, however late a loaded
            // machine delivered them)
            let hanging = (0..<2).map { i in
                Task {
                    let src = "http://hang.example:\(origin.port)/photo?delay=600000&n=\(i)"
                    return try await client.execute(uri: "/v1/thumb?w=32&src=" + src.queryEncoded, method: .get)
                }
            }
            let running = ContinuousClock.now + .seconds(20)
            while ContinuousClock.now < running,
                !String(buffer: try await client.execute(uri: "/health", method: .get).body).contains(
                    "\"rendersRunning\":2")
            {
                try await Task.sleep(for: .milliseconds(10))
            }
            try await Task.sleep(for: .milliseconds(3500))
            let local = try await client.execute(uri: "/v1/thumb?src=photo.jpg&w=48", method: .get)
            // Then the two hanging ones time out with 504, and the local one, which waited for a slot, is served
            for task in hanging {
                let r = try await task.value
                #expect(r.status == .gatewayTimeout && r.errorCode == "timed_out")
            }
            #expect(local.status == .ok, "\(String(buffer: local.body))")
            // And both abandoned renders were cancelled, leaving nothing running
            #expect(server.renderCounts.abandoned == 2)
            let health = try await Self.waitIdle(client, seconds: 1)
            #expect(health.contains("\"rendersRunning\":0"), "\(health)")
        }
    }

    @Test("30 clients that disconnect right after sending, or once admitted, leave nothing running or queued")
    func disconnectedClientsFreeTheirSlots() async throws {
        let origin = try await LoopbackServer.start()
        defer { Task { await origin.stop() } }
        // Given a generous request timeout (so only the disconnects can free the slots)
        let (config, resolver) = configuration(timeout: 120)
        try await ServerHarness.withLiveServer(config, resolver: resolver) { server, client in
            let port = try #require(client.port)
            func request(_ i: Int) throws -> RawConnection {
                let connection = try RawConnection(port: port)
                let src = "http://hang.example:\(origin.port)/photo?delay=600000&n=\(i)"
                #expect(connection.send("GET /v1/thumb?w=32&src=\(src.queryEncoded) HTTP/1.1\r\nHost: t\r\n\r\n"))
                return connection
            }
            // When 30 clients each ask for a different hanging thumbnail and hang up at once
            for i in 0..<30 { try request(i).close() }
            // Then soon nothing is running or queued, and the server has seen every one of them go
            var health = try await Self.waitIdle(client, seconds: 15, connections: 1)
            #expect(health.contains("\"rendersRunning\":0") && health.contains("\"rendersQueued\":0"), "\(health)")
            #expect(health.contains("\"connectionsOpen\":1"), "\(health)")
            // When 30 more wait until 2 renders run, 8 wait for them and the other 20 were refused, then hang up
            let refusedBefore = server.service.admission.refusedCount
            let waiting = try (30..<60).map(request)
            let full = ContinuousClock.now + .seconds(20)
            func isFull() -> Bool {
                health.contains("\"rendersQueued\":8") && health.contains("\"rendersRunning\":2")
                    && server.service.admission.refusedCount - refusedBefore == 20
            }
            repeat {
                health = String(buffer: try await client.execute(uri: "/health", method: .get).body)
                if isFull() { break }
                try await Task.sleep(for: .milliseconds(20))
            } while ContinuousClock.now < full
            #expect(isFull(), "\(health), refused \(server.service.admission.refusedCount - refusedBefore)")
            let abandonedBefore = server.renderCounts.abandoned
            for connection in waiting { connection.close() }
            // Then soon nothing is running or queued (at most 15 s on a loaded machine): each of the 10 renders was
            // abandoned
            health = try await Self.waitIdle(client, seconds: 15)
            #expect(health.contains("\"rendersRunning\":0") && health.contains("\"rendersQueued\":0"), "\(health)")
            #expect(server.renderCounts.abandoned - abandonedBefore == 10, "\(server.renderCounts)")
            // And the server still renders
            #expect(try await client.execute(uri: "/v1/thumb?src=photo.jpg&w=40", method: .get).status == .ok)
        }
    }

    @Test("a render two requests share goes on when one leaves and stops when both have")
    func sharedRenderStopsWithItsLastWaiter() async throws {
        // Given a coalescer and a render that runs until cancelled
        let renders = RenderCoalescer<Int>()
        let cancelled = Locked(false)
        let render: @Sendable () async throws -> Int = {
            do { try await Task.sleep(for: .seconds(600)) } catch { cancelled.withLock { $0 = true } }
            return 1
        }
        let first = Task { try await renders.value(forKey: "k", render) }
        let second = Task { try await renders.value(forKey: "k", render) }
        while renders.counts.started + renders.counts.joined < 2 { try await Task.sleep(for: .milliseconds(5)) }
        // When the first waiter leaves, Then it gets CancellationError at once and the render goes on
        first.cancel()
        await #expect(throws: CancellationError.self) { try await first.value }
        try await Task.sleep(for: .milliseconds(50))
        #expect(!cancelled.withLock { $0 } && renders.inFlight == 1)
        // When the second leaves too, Then the render is cancelled and forgotten
        second.cancel()
        await #expect(throws: CancellationError.self) { try await second.value }
        let deadline = ContinuousClock.now + .seconds(5)
        while !cancelled.withLock({ $0 }) && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(5))
        }
        #expect(cancelled.withLock { $0 } && renders.inFlight == 0 && renders.counts.abandoned == 1)
        // And a new request starts a fresh render
        let value = try await renders.value(forKey: "k") { 7 }
        #expect(value == 7 && renders.counts.started == 2)
    }
}
