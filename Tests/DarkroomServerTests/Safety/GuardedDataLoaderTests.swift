import Darkroom
import DarkroomSupport
import DarkroomTestSupport
import Foundation
import Synchronization
import Testing

@testable import DarkroomServer

/// A resolver that answers from a table and records the names asked for; no DNS.
final class FakeResolver: HostResolving {
    let table: [String: [IPAddress]]
    private let asked = Locked<[String]>([])

    init(_ table: [String: [IPAddress]]) { self.table = table }

    var names: [String] { asked.withLock { $0 } }

    func resolve(host: String, port: Int) async throws(ServerError) -> [IPAddress] {
        asked.withLock { $0.append(host) }
        guard let addresses = table[host] else { throw ServerError(.upstreamFailed, "no fake entry for \(host)") }
        return addresses
    }
}

/// The `ServerError` `body` throws (directly or as a `DarkroomError`'s underlying error), or `nil` on success.
private func serverError(_ body: () async throws -> Void) async -> ServerError? {
    do {
        try await body()
        return nil
    } catch let error as DarkroomError {
        // The loader's errors are typed: the refusal the client will see is the underlying ServerError.
        if let reason = error.underlying as? ServerError { return reason }
        Issue.record("expected a DarkroomError carrying a ServerError, got \(error)")
        return nil
    } catch {
        Issue.record("expected a DarkroomError, got \(error)")
        return nil
    }
}

/// Fast limits so a failing test fails quickly.
/// No retries; timeouts generous, because no test here depends on one firing and the whole suite runs in parallel
/// on 2 cores (a 5 s read timeout once fired in CI before the loopback server got to answer).
private var fastHTTP: HTTPDataLoader.Configuration {
    var http = HTTPDataLoader.Configuration()
    http.connectTimeout = 20
    http.readTimeout = 30
    http.totalTimeout = 60
    http.maxAttempts = 1
    return http
}

/// Allows `hosts` and unblocks loopback (the test server's address); everything else stays blocked.
private func loopbackPolicy(_ hosts: Set<String>) -> RemotePolicy {
    var policy = RemotePolicy(allowedHosts: hosts)
    policy.blockedClasses.remove(.loopback)
    return policy
}

@Suite("GuardedDataLoader")
struct GuardedDataLoaderTests {
    @Test("(a) the default policy blocks an allowed loopback literal before connecting")
    func literalLoopbackBlocked() async throws {
        // Given a server on 127.0.0.1 and the default policy allowing that literal
        let server = try await LoopbackServer.start()
        let loader = GuardedDataLoader(policy: RemotePolicy(allowedHosts: ["127.0.0.1"]), http: fastHTTP)
        // When fetching from it
        let error = await serverError {
            _ = try await loader.loadData(DataRequest(url: server.url("/img")), progress: { _ in })
        }
        // Then the address is blocked and the server saw nothing
        #expect(error?.code == .addressBlocked)
        #expect(server.totalRequests == 0)
        await loader.shutdown()
        await server.stop()
    }

    @Test("(b) an allowed name resolving to loopback is blocked after DNS")
    func localhostBlocked() async throws {
        // Given the system resolver and "localhost" allowed
        let server = try await LoopbackServer.start()
        let loader = GuardedDataLoader(policy: RemotePolicy(allowedHosts: ["localhost"]), http: fastHTTP)
        // When fetching http://localhost:PORT/img
        let error = await serverError {
            _ = try await loader.loadData(DataRequest(url: server.url("/img", host: "localhost")), progress: { _ in })
        }
        // Then it is refused for its address without saying what localhost resolves to, and nothing connected
        #expect(error?.code == .addressBlocked)
        #expect(error?.message.contains("localhost") == true)
        #expect(error?.message.contains("127.0.0.1") == false)
        #expect(error?.message.contains("loopback") == false)
        #expect(server.totalRequests == 0)
        await loader.shutdown()
        await server.stop()
    }

    @Test("(c) a policy that allows loopback fetches the bytes, progress included, reusing the pooled loader")
    func loopbackAllowed() async throws {
        // Given loopback unblocked
        let server = try await LoopbackServer.start()
        let loader = GuardedDataLoader(policy: loopbackPolicy(["127.0.0.1"]), http: fastHTTP)
        let received = Locked<Int64>(0)
        // When fetching four times, one after another
        for _ in 0..<4 {
            let response = try await loader.loadData(DataRequest(url: server.url("/img"))) { p in
                received.withLock { $0 = max($0, p.received) }
            }
            // Then the body arrives intact with status 200
            #expect(response.statusCode == 200)
            #expect(response.data == LoopbackServer.image)
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(received.withLock { $0 } == Int64(LoopbackServer.image.count))
        #expect(server.requests("/img") == 4)
        // And later fetches reused a keep-alive connection. The client hands a finished connection back to its pool
        // just after the body completes, so on a loaded machine the next request can win that race once and open
        // a second connection; a loader without a pool would open four.
        #expect(server.connections <= 2)
        await loader.shutdown()
        await server.stop()
    }

    @Test("(d) a redirect to a private address is blocked after exactly one request")
    func redirectToPrivate() async throws {
        // Given a server answering 302 to http://10.20.30.40/x, both hosts allowed, loopback unblocked
        let server = try await LoopbackServer.start()
        let loader = GuardedDataLoader(policy: loopbackPolicy(["127.0.0.1", "10.20.30.40"]), http: fastHTTP)
        // When fetching
        let error = await serverError {
            _ = try await loader.loadData(
                DataRequest(url: server.url("/to?url=http://10.20.30.40/x")), progress: { _ in })
        }
        // Then the hop is refused for its address and the server saw only the first request
        #expect(error?.code == .addressBlocked)
        #expect(error?.message.contains("10.20.30.40") == true)
        #expect(server.totalRequests == 1)
        await loader.shutdown()
        await server.stop()
    }

    @Test("(e) a redirect to a host off the allow list is refused")
    func redirectToOtherHost() async throws {
        // Given a server answering 302 to a host not on the list
        let server = try await LoopbackServer.start()
        let resolver = FakeResolver(["127.0.0.1": [IPAddress("127.0.0.1")!]])
        let loader = GuardedDataLoader(policy: loopbackPolicy(["127.0.0.1"]), resolver: resolver, http: fastHTTP)
        // When fetching
        let error = await serverError {
            _ = try await loader.loadData(
                DataRequest(url: server.url("/to?url=http://elsewhere.test/x")), progress: { _ in })
        }
        // Then hostNotAllowed, the other host never resolved, one request made
        #expect(error?.code == .hostNotAllowed)
        #expect(!resolver.names.contains("elsewhere.test"))
        #expect(server.totalRequests == 1)
        await loader.shutdown()
        await server.stop()
    }

    @Test("(f) a redirect loop fails after maxRedirects hops")
    func redirectLoop() async throws {
        // Given /loop/a ↔ /loop/b (relative Locations) and maxRedirects = 3
        let server = try await LoopbackServer.start()
        var policy = loopbackPolicy(["127.0.0.1"])
        policy.maxRedirects = 3
        let loader = GuardedDataLoader(policy: policy, http: fastHTTP)
        // When fetching
        let error = await serverError {
            _ = try await loader.loadData(DataRequest(url: server.url("/loop/a")), progress: { _ in })
        }
        // Then upstreamFailed "too many redirects" after the first request and 3 redirects
        #expect(error?.code == .upstreamFailed)
        #expect(error?.message.contains("too many redirects") == true)
        #expect(server.totalRequests == 4)
        #expect(server.requests("/loop/a") == 2)
        #expect(server.requests("/loop/b") == 2)
        await loader.shutdown()
        await server.stop()
    }

    @Test("a 3xx without Location fails as upstreamFailed")
    func redirectWithoutLocation() async throws {
        // Given a server answering a bare 302
        let server = try await LoopbackServer.start()
        let loader = GuardedDataLoader(policy: loopbackPolicy(["127.0.0.1"]), http: fastHTTP)
        // When / Then
        let error = await serverError {
            _ = try await loader.loadData(DataRequest(url: server.url("/bare-redirect")), progress: { _ in })
        }
        #expect(error?.code == .upstreamFailed)
        #expect(server.totalRequests == 1)
        await loader.shutdown()
        await server.stop()
    }

    @Test("(g) a name a resolver maps to a private address is blocked with no connection")
    func fakeResolverPrivate() async throws {
        // Given evil.test → 192.168.1.5 and evil.test allowed
        let server = try await LoopbackServer.start()
        let resolver = FakeResolver(["evil.test": [IPAddress("192.168.1.5")!]])
        let loader = GuardedDataLoader(
            policy: RemotePolicy(allowedHosts: ["evil.test"]), resolver: resolver, http: fastHTTP)
        // When fetching
        let error = await serverError {
            _ = try await loader.loadData(
                DataRequest(url: URL(string: "http://evil.test:\(server.port)/img")!), progress: { _ in })
        }
        // Then it is refused after exactly one lookup, without a connection to anything, and the message does not
        // reveal the address the name resolved to or its class
        #expect(error?.code == .addressBlocked)
        #expect(error?.message.contains("evil.test") == true)
        #expect(error?.message.contains("192.168") == false)
        #expect(error?.message.contains("private") == false)
        #expect(resolver.names == ["evil.test"])
        #expect(server.connections == 0)
        #expect(server.totalRequests == 0)
        await loader.shutdown()
        await server.stop()
    }

    @Test("the connection goes to the checked address: a name only the resolver knows reaches the server")
    func pinnedToCheckedAddress() async throws {
        // Given pinned.test (not in DNS) → 127.0.0.1 by the resolver, loopback unblocked
        let server = try await LoopbackServer.start()
        let resolver = FakeResolver(["pinned.test": [IPAddress("127.0.0.1")!]])
        let loader = GuardedDataLoader(policy: loopbackPolicy(["pinned.test"]), resolver: resolver, http: fastHTTP)
        // When fetching http://pinned.test:PORT/img
        let response = try await loader.loadData(
            DataRequest(url: URL(string: "http://pinned.test:\(server.port)/img")!),
            progress: { _ in })
        // Then the bytes come from the loopback server: the loader connected to the address it checked
        #expect(response.data == LoopbackServer.image)
        #expect(server.requests("/img") == 1)
        await loader.shutdown()
        await server.stop()
    }

    @Test("the loader pool keeps the poolCapacity most recent hosts' connections and closes older ones")
    func poolEviction() async throws {
        // Given capacity + 1 names, all mapped to the loopback server
        let server = try await LoopbackServer.start()
        let names = (0...GuardedDataLoader.poolCapacity).map { "h\($0).test" }
        let resolver = FakeResolver(Dictionary(uniqueKeysWithValues: names.map { ($0, [IPAddress("127.0.0.1")!]) }))
        let loader = GuardedDataLoader(policy: loopbackPolicy(Set(names)), resolver: resolver, http: fastHTTP)
        func fetch(_ name: String) async throws {
            let response = try await loader.loadData(
                DataRequest(url: URL(string: "http://\(name):\(server.port)/img")!),
                progress: { _ in })
            #expect(response.data == LoopbackServer.image)
        }
        // When each is fetched once (the first is evicted by the last)
        for name in names { try await fetch(name) }
        #expect(server.connections == names.count)
        // Then the newest still has its connection, and the evicted first one needs a new one
        try await fetch(names[names.count - 1])
        #expect(server.connections == names.count)
        try await fetch(names[0])
        #expect(server.connections == names.count + 1)
        await loader.shutdown()
        await server.stop()
    }
}
