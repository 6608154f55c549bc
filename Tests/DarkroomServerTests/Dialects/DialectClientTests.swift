import DarkroomImage
import DarkroomTestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

@testable import DarkroomServer

/// imgproxy and thumbor URLs as their published client libraries write them (`libthumbor` and `imgproxy` from
/// PyPI), signed and unsigned, answered by Darkroom and compared with Pillow doing the same operation.
@Suite("imgproxy and thumbor client URLs")
struct DialectClientTests {
    static let thumborKey = "darkroom-thumbor-test-key"
    /// `secret` and `hello` in hex, as in imgproxy's documentation.
    static let imgproxyKey = "736563726574"
    static let imgproxySalt = "68656C6C6F"
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("dialect_reference.py").path

    struct Case: Decodable {
        let name: String
        let url: String
        let op: String
        let format: String
    }

    struct Result: Decodable {
        let psnr: Double
        let width: Int
        let height: Int
        // swift-format-ignore: AlwaysUseLowerCamelCase
        let expected_width: Int
        // swift-format-ignore: AlwaysUseLowerCamelCase
        let expected_height: Int
    }

    /// Keys for both dialects (`/unsafe/` thumbor URLs allowed); `signed: false` leaves imgproxy keyless, so its
    /// `insecure` URLs are served.
    static func configuration(root: String, signed: Bool = true) -> ServerConfiguration {
        var configuration = ServerHarness.configuration(root: root)
        configuration.thumbor.key = thumborKey
        configuration.thumbor.allowUnsafe = true
        if signed {
            configuration.imgproxy.key = [0x73, 0x65, 0x63, 0x72, 0x65, 0x74]
            configuration.imgproxy.salt = [0x68, 0x65, 0x6C, 0x6C, 0x6F]
        }
        return configuration
    }

    @Test func urlsFromTheClientLibrariesRenderWhatPillowRenders() async throws {
        // Given a 600×375 photo and the URLs libthumbor and imgproxy's Python builder write for 20 operations
        let photo = try #require(SamplePhotos.files("orientation").first)
        let root = (photo as NSString).deletingLastPathComponent
        let source = (photo as NSString).lastPathComponent
        let cases = try JSONDecoder().decode(
            [Case].self,
            from: PythonReference.run(
                try String(contentsOfFile: Self.script, encoding: .utf8),
                ["urls", Self.thumborKey, Self.imgproxyKey, Self.imgproxySalt, source]))
        try #require(cases.count >= 20)
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let keyed = cases.filter { !$0.url.contains("/insecure/") }
        let keyless = cases.filter { $0.url.contains("/insecure/") }
        for (group, signed) in [(keyed, true), (keyless, false)] {
            try await ServerHarness.withServer(Self.configuration(root: root, signed: signed)) { _, client in
                for c in group {
                    // When Darkroom answers each
                    let response = try await client.execute(uri: c.url, method: .get, headers: [.accept: "*/*"])
                    // Then it is an image in the format the URL asked for
                    #expect(
                        response.status == .ok,
                        "\(c.name) \(c.url): \(String(decoding: response.bytes, as: UTF8.self).prefix(200))")
                    #expect(response.probe?.format.rawValue == c.format, "\(c.name)")
                    try Data(response.bytes).write(to: URL(fileURLWithPath: directory.file(c.name)))
                }
            }
        }
        // And its size and pixels are Pillow's for the same operation
        let casesFile = directory.file("cases.json")
        try JSONEncoder().encode(cases.map { ["name": $0.name, "url": $0.url, "op": $0.op, "format": $0.format] })
            .write(to: URL(fileURLWithPath: casesFile))
        let results = try JSONDecoder().decode(
            [String: Result].self,
            from: PythonReference.run(
                try String(contentsOfFile: Self.script, encoding: .utf8),
                ["compare", photo, casesFile, directory.path]))
        for c in cases {
            let r = try #require(results[c.name])
            #expect(r.width == r.expected_width && r.height == r.expected_height, "\(c.name): \(r)")
            #expect(r.psnr >= 30, "\(c.name): \(r.psnr) dB against Pillow")
        }
    }

    @Test func aTamperedOrMissingSignatureIs403() async throws {
        // Given signed URLs from both libraries
        let photo = try #require(SamplePhotos.files("orientation").first)
        let root = (photo as NSString).deletingLastPathComponent
        let cases = try JSONDecoder().decode(
            [Case].self,
            from: PythonReference.run(
                try String(contentsOfFile: Self.script, encoding: .utf8),
                ["urls", Self.thumborKey, Self.imgproxyKey, Self.imgproxySalt, (photo as NSString).lastPathComponent]))
        let signed = cases.filter { !$0.url.contains("/unsafe/") && !$0.url.contains("/insecure/") }
        try #require(signed.count >= 15)
        var configuration = Self.configuration(root: root)
        configuration.thumbor.allowUnsafe = false
        try await ServerHarness.withServer(configuration) { _, client in
            for c in signed {
                // When one character of the signature changes, or an option is added after it
                var parts = c.url.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
                let signature = parts[2]
                parts[2] =
                    String(signature.prefix(3)) + (signature.dropFirst(3).first == "A" ? "B" : "A")
                    + signature.dropFirst(4)
                let tampered = parts.joined(separator: "/")
                var added = c.url.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
                added.insert(c.url.hasPrefix("/thumbor") ? "trim" : "q:50", at: 3)
                for uri in [tampered, added.joined(separator: "/")] {
                    let response = try await client.execute(uri: uri, method: .get)
                    // Then the answer is 403 bad_signature
                    #expect(response.status == .forbidden, "\(c.name): \(uri)")
                    #expect(response.errorCode == "bad_signature", "\(c.name)")
                }
            }
            // And with keys set, unsigned forms are refused too
            let insecure = try await client.execute(
                uri: "/imgproxy/insecure/rs:fit:100:100/plain/fallenleaf-600x400-orientation-1.jpg", method: .get)
            #expect(insecure.status == .forbidden)
            let unsafe = try await client.execute(
                uri: "/thumbor/unsafe/100x100/fallenleaf-600x400-orientation-1.jpg", method: .get)
            #expect(unsafe.status == .forbidden)
        }
    }
}
