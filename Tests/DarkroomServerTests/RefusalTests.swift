import Crypto
import DarkroomImage
import DarkroomTestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import Testing

@testable import DarkroomServer

/// Every refusal the server's source-safety rules make, end to end through HTTP: status, JSON code, and that no work was done.
@Suite("Refusals")
struct RefusalTests {
    let root = ServerHarness.makeRoot()

    @Test("paths that leave the root are 403 path_outside_root: .., absolute, encoded, symlink escapes")
    func pathEscapes() async throws {
        // Given a root with a symlink to a file outside it and one to a directory outside it
        let outside = ServerHarness.temporaryDirectory("outside")
        ServerHarness.write(outside + "/secret.jpg", try ImageEncoderShim.jpeg())
        try FileManager.default.createSymbolicLink(
            atPath: root + "/link.jpg", withDestinationPath: outside + "/secret.jpg")
        try FileManager.default.createSymbolicLink(atPath: root + "/linkdir", withDestinationPath: outside)
        try await ServerHarness.withServer(ServerHarness.configuration(root: root)) { server, client in
            for src in [
                "../x.jpg", "sub/../../x.jpg", "/etc/passwd", "%2Fetc%2Fpasswd", "..%2F..%2Fetc%2Fpasswd",
                "link.jpg", "linkdir/secret.jpg", "sub/%2E%2E/%2E%2E/x.jpg",
            ] {
                // When a client asks for it
                let r = try await client.execute(uri: "/v1/thumb?src=\(src)&w=64", method: .get)
                // Then it is refused before anything is read
                #expect(r.status == .forbidden, "\(src)")
                #expect(r.errorCode == "path_outside_root", "\(src): \(String(buffer: r.body))")
                #expect(!String(buffer: r.body).contains(outside), "the message must not leak paths")
            }
            #expect(server.renderCounts.started == 0)
        }
    }

    @Test("a folder swapped for a symlink out of the root right after a request is not followed by the next")
    func swappedFolder() async throws {
        // Given root/album/photo.jpg and outside/photo.jpg, a different picture
        let outside = ServerHarness.temporaryDirectory("outside")
        ServerHarness.write(outside + "/photo.jpg", try ImageEncoderShim.jpeg())
        try FileManager.default.createDirectory(atPath: root + "/album", withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: root + "/photo.jpg", toPath: root + "/album/photo.jpg")
        try await ServerHarness.withServer(ServerHarness.configuration(root: root)) { _, client in
            let first = try await client.execute(uri: "/v1/thumb?src=album/photo.jpg&w=64", method: .get)
            #expect(first.status == .ok)
            // When album is replaced by a symlink to outside (within the resolved-path cache's lifetime)
            try FileManager.default.moveItem(atPath: root + "/album", toPath: root + "/album-old")
            try FileManager.default.createSymbolicLink(atPath: root + "/album", withDestinationPath: outside)
            // Then the same request, and any size of it, is refused as leaving the root
            for w in [64, 65] {
                let r = try await client.execute(uri: "/v1/thumb?src=album/photo.jpg&w=\(w)", method: .get)
                #expect(r.status == .forbidden && r.errorCode == "path_outside_root", "\(String(buffer: r.body))")
            }
        }
    }

    @Test("hidden files and folders are 404 on every route, named directly or through a symlink")
    func hiddenFiles() async throws {
        // Given a root holding .secret.jpg, .git/photo.jpg and a visible link to the hidden file
        ServerHarness.write(root + "/.secret.jpg", try ImageEncoderShim.jpeg())
        try FileManager.default.createDirectory(atPath: root + "/.git", withIntermediateDirectories: true)
        ServerHarness.write(root + "/.git/photo.jpg", try ImageEncoderShim.jpeg())
        try FileManager.default.createSymbolicLink(
            atPath: root + "/shown.jpg", withDestinationPath: root + "/.secret.jpg")
        try await ServerHarness.withServer(ServerHarness.configuration(root: root)) { server, client in
            for src in [".secret.jpg", ".git/photo.jpg", "sub/./.secret.jpg", "shown.jpg", "%2Esecret.jpg"] {
                // When a client asks for it on each route that takes a source
                for uri in [
                    "/v1/thumb?src=\(src)&w=64", "/v1/info?src=\(src)", "/view?src=\(src)",
                    "/imgproxy/insecure/rs:fit:64:64/plain/local:///\(src)", "/thumbor/unsafe/64x64/\(src)",
                ] {
                    let r = try await client.execute(uri: uri, method: .get)
                    // Then it is answered as missing, without naming the file's whereabouts
                    #expect(r.status == .notFound, "\(uri): \(r.status)")
                    #expect(r.errorCode == "not_found", "\(uri): \(String(buffer: r.body))")
                }
            }
            #expect(server.renderCounts.started == 0)
        }
    }

    @Test("a missing file is 404 not_found; a text file named .jpg is 415")
    func missingAndNotImage() async throws {
        try await ServerHarness.withServer(ServerHarness.configuration(root: root)) { _, client in
            let missing = try await client.execute(uri: "/v1/thumb?src=nope.jpg&w=64", method: .get)
            #expect(missing.status == .notFound && missing.errorCode == "not_found")
            let text = try await client.execute(uri: "/v1/thumb?src=broken.jpg&w=64", method: .get)
            #expect(text.status == .unsupportedMediaType && text.errorCode == "unsupported_media_type")
        }
    }

    @Test(
        "remote sources: host not allowed, loopback, private and link-local addresses, redirect into a private address")
    func remote() async throws {
        let origin = try await LoopbackServer.start()
        defer { Task { await origin.stop() } }
        // Given a server that allows 127.0.0.1, localhost and two private addresses as hosts, with the default
        // address policy (only public unicast)
        var config = ServerHarness.configuration(root: root)
        config.remote = RemotePolicy(allowedHosts: ["127.0.0.1", "localhost", "10.1.2.3", "169.254.169.254"])
        try await ServerHarness.withServer(config) { _, client in
            func code(_ url: String) async throws -> (HTTPResponse.Status, String?) {
                let r = try await client.execute(uri: "/v1/thumb?w=64&src=" + url.queryEncoded, method: .get)
                return (r.status, r.errorCode)
            }
            // Then a host not named is refused, and so are the allowed names whose addresses are not public —
            // literal loopback, loopback after DNS (localhost), private, and the cloud metadata address
            let cases: [(String, HTTPResponse.Status, String)] = [
                ("http://example.com/a.jpg", .forbidden, "host_not_allowed"),
                (origin.url("/photo").absoluteString, .forbidden, "address_blocked"),
                (origin.url("/photo", host: "localhost").absoluteString, .forbidden, "address_blocked"),
                ("http://10.1.2.3/a.jpg", .forbidden, "address_blocked"),
                ("http://169.254.169.254/latest/meta-data", .forbidden, "address_blocked"),
                ("file:///etc/passwd", .badRequest, "bad_request"),
            ]
            for (url, status, expected) in cases {
                let (got, code) = try await code(url)
                #expect(got == status && code == expected, "\(url): \(got) \(code ?? "-")")
            }
        }
        // And the origin never saw a request
        #expect(origin.totalRequests == 0)
    }

    @Test("a redirect from an allowed public host into a private address is refused before connecting")
    func redirectIntoPrivate() async throws {
        let origin = try await LoopbackServer.start()
        defer { Task { await origin.stop() } }
        // Given an allowed host that DNS puts on a public address (the fake resolver maps it to the loopback test
        // origin, standing in for a public server) and that redirects to a private address
        let resolver = FakeResolver(["images.example": [IPAddress("127.0.0.1")!], "10.9.9.9": [IPAddress("10.9.9.9")!]])
        var config = ServerHarness.configuration(root: root)
        config.remote = RemotePolicy(allowedHosts: ["images.example", "10.9.9.9"])
        config.remote.blockedClasses.remove(.loopback)  // the stand-in's real address
        let good = "http://images.example:\(origin.port)/photo"
        let bad = "http://images.example:\(origin.port)/to?url=" + "http://10.9.9.9/x.jpg".queryEncoded
        try await ServerHarness.withServer(config, resolver: resolver) { _, client in
            // When the direct URL and the redirecting one are asked for
            let ok = try await client.execute(uri: "/v1/thumb?w=64&format=jpeg&src=" + good.queryEncoded, method: .get)
            let refused = try await client.execute(uri: "/v1/thumb?w=64&src=" + bad.queryEncoded, method: .get)
            // Then the direct one renders and the redirect into 10/8 is refused
            #expect(ok.status == .ok && ok.probe.map { [$0.width, $0.height] } == [64, 48])
            #expect(refused.status == .forbidden && refused.errorCode == "address_blocked")
        }
        #expect(origin.requests("/to") == 1)
    }

    @Test("with a key: unsigned, badly signed and tampered requests are 403 bad_signature; a good sig passes")
    func signatures() async throws {
        var config = ServerHarness.configuration(root: root)
        config.signingKey = "s3cret"
        let signer = RequestSigner(key: "s3cret")
        let query: [(name: String, value: String)] = [("src", "photo.jpg"), ("w", "64"), ("format", "jpeg")]
        let signed = "/v1/thumb?" + signer.signedQuery(path: "/v1/thumb", query: query)
        // An independent HMAC of the canonical form, to check the signer against the definition
        let canonical = "/v1/thumb?format=jpeg&src=photo.jpg&w=64"
        let mac = HMAC<SHA256>.authenticationCode(
            for: Data(canonical.utf8), using: SymmetricKey(data: Data("s3cret".utf8)))
        let expected = mac.map { String(format: "%02x", $0) }.joined()
        #expect(signed.hasSuffix("sig=" + expected))
        try await ServerHarness.withServer(config) { server, client in
            let cases = [
                "/v1/thumb?src=photo.jpg&w=64&format=jpeg",
                "/v1/thumb?src=photo.jpg&w=64&format=jpeg&sig=" + String(repeating: "0", count: 64),
                signed.replacingOccurrences(of: "w=64", with: "w=65"),
                "/v1/info?src=photo.jpg&sig=" + expected,
            ]
            for uri in cases {
                let r = try await client.execute(uri: uri, method: .get)
                #expect(r.status == .forbidden && r.errorCode == "bad_signature", "\(uri)")
            }
            #expect(server.renderCounts.started == 0)
            let good = try await client.execute(uri: signed, method: .get)
            #expect(good.status == .ok)
            // Health, metrics and the gallery stay open
            #expect(try await client.execute(uri: "/health", method: .get).status == .ok)
        }
    }

    @Test("sources over the limits are 413 source_too_large: pixels, bytes")
    func oversized() async throws {
        // Given limits of 1 MP and 100 KB
        var pixels = ServerHarness.configuration(root: ServerHarness.photos)
        pixels.limits.decode.maxSourcePixels = 1_000_000
        var bytes = ServerHarness.configuration(root: ServerHarness.photos)
        bytes.limits.maxSourceBytes = 100_000
        let src = ServerHarness.twelveMP.queryEncoded
        // When a 12 MP, ~2 MB photo is asked for, as a thumbnail and as info
        try await ServerHarness.withServer(pixels) { _, client in
            let thumb = try await client.execute(uri: "/v1/thumb?src=\(src)&w=64", method: .get)
            let info = try await client.execute(uri: "/v1/info?src=\(src)", method: .get)
            // Then the thumbnail is refused with the limit named; info, which reads only the header, still answers
            #expect(
                thumb.status == .contentTooLarge && thumb.errorCode == "source_too_large",
                "\(String(buffer: thumb.body))")
            #expect(String(buffer: thumb.body).contains("maxSourcePixels"))
            #expect(info.status == .ok)
        }
        try await ServerHarness.withServer(bytes) { _, client in
            let thumb = try await client.execute(uri: "/v1/thumb?src=\(src)&w=64", method: .get)
            #expect(
                thumb.status == .contentTooLarge && thumb.errorCode == "source_too_large",
                "\(String(buffer: thumb.body))")
        }
    }
}
