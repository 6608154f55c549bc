import Foundation
import Testing

@testable import DarkroomServer

@Suite("RemotePolicy and SystemHostResolver")
struct RemotePolicyTests {
    @Test("checkURL refuses other schemes, credentials and hosts not on the list")
    func urlRefusals() {
        // Given a policy allowing one host
        let policy = RemotePolicy(allowedHosts: ["images.example.com"])
        // When / Then
        #expect(code { try policy.checkURL(URL(string: "ftp://images.example.com/a.jpg")!) } == .badRequest)
        #expect(code { try policy.checkURL(URL(string: "file:///etc/passwd")!) } == .badRequest)
        #expect(code { try policy.checkURL(URL(string: "http://user:pw@images.example.com/a.jpg")!) } == .badRequest)
        #expect(code { try policy.checkURL(URL(string: "http://user@images.example.com/a.jpg")!) } == .badRequest)
        #expect(code { try policy.checkURL(URL(string: "http://other.example.com/a.jpg")!) } == .hostNotAllowed)
        #expect(
            code { try policy.checkURL(URL(string: "http://images.example.com.evil.test/a.jpg")!) } == .hostNotAllowed)
        #expect(code { try policy.checkURL(URL(string: "http://example.com/a.jpg")!) } == .hostNotAllowed)
    }

    @Test("checkURL matches hosts case-insensitively, ignoring a trailing dot")
    func urlAccepted() {
        // Given a policy whose entry is spelled oddly
        let policy = RemotePolicy(allowedHosts: ["Images.Example.COM.", "::1"])
        // When / Then
        #expect(code { try policy.checkURL(URL(string: "https://images.example.com/a.jpg")!) } == nil)
        #expect(code { try policy.checkURL(URL(string: "HTTP://IMAGES.EXAMPLE.COM./a.jpg?x=1")!) } == nil)
        #expect(code { try policy.checkURL(URL(string: "http://[::1]:8080/a.jpg")!) } == nil)
    }

    @Test("an empty allow list allows no remote source")
    func emptyList() {
        // Given the default policy, When / Then
        #expect(code { try RemotePolicy().checkURL(URL(string: "https://example.com/a.jpg")!) } == .hostNotAllowed)
    }

    @Test("checkAddresses refuses empty lists and any blocked address, naming the host but not the address")
    func addresses() throws {
        // Given the default policy
        let policy = RemotePolicy(allowedHosts: ["x.test"])
        #expect(policy.blockedClasses == Set(AddressClass.allCases).subtracting([.publicUnicast]))
        let publicAddress = try #require(IPAddress("8.8.8.8"))
        let privateAddress = try #require(IPAddress("10.0.0.1"))
        // When / Then
        #expect(code { try policy.checkAddresses([publicAddress], host: "x.test") } == nil)
        #expect(code { try policy.checkAddresses([], host: "x.test") } == .addressBlocked)
        do {
            try policy.checkAddresses([publicAddress, privateAddress], host: "x.test")
            Issue.record("a private address among public ones must be refused")
        } catch {
            // Then the message names the host but not the address or its class; the detail is for the log
            #expect(error.code == .addressBlocked)
            #expect(error.message.contains("x.test"))
            #expect(!error.message.contains("10.0.0.1"))
            #expect(!error.message.contains("private"))
        }
        #expect(policy.blockedAddress(in: [publicAddress, privateAddress])?.address == privateAddress)
        #expect(policy.blockedAddress(in: [publicAddress, privateAddress])?.class == .privateNetwork)
        // Given loopback unblocked, Then loopback passes but private still fails
        var relaxed = policy
        relaxed.blockedClasses.remove(.loopback)
        #expect(code { try relaxed.checkAddresses([IPAddress("127.0.0.1")!], host: "x.test") } == nil)
        #expect(code { try relaxed.checkAddresses([privateAddress], host: "x.test") } == .addressBlocked)
    }

    @Test("SystemHostResolver resolves localhost to loopback and literals to themselves")
    func systemResolver() async throws {
        // Given the system resolver
        let resolver = SystemHostResolver()
        // When resolving localhost
        let addresses = try await resolver.resolve(host: "localhost", port: 80)
        // Then every answer is loopback
        #expect(!addresses.isEmpty)
        #expect(addresses.allSatisfy { $0.addressClass == .loopback }, "\(addresses)")
        // And literals come back as they are
        #expect(try await resolver.resolve(host: "192.0.2.7", port: 80) == [IPAddress("192.0.2.7")!])
        #expect(try await resolver.resolve(host: "[2001:db8::5]", port: 443) == [IPAddress("2001:db8::5")!])
    }

    @Test("SystemHostResolver fails clearly for a name that cannot exist")
    func resolverFailure() async {
        // Given a name under the reserved .invalid TLD, When resolving, Then upstreamFailed (or timedOut on a
        // slow resolver), never an address
        do {
            let addresses = try await SystemHostResolver().resolve(host: "no-such-host.invalid", port: 80)
            Issue.record("resolved to \(addresses)")
        } catch {
            #expect(error.code == .upstreamFailed || error.code == .timedOut)
            #expect(error.message.contains("no-such-host.invalid"))
        }
    }
}
