import DarkroomImage
import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import Testing

@testable import DarkroomServer

@Suite("GET / gallery")
struct GalleryTests {
    let root = ServerHarness.makeRoot()

    @Test("lists every image under the root as a lazy thumbnail with 1× and 2× sources that load")
    func index() async throws {
        try await ServerHarness.withServer(ServerHarness.configuration(root: root)) { _, client in
            let page = try await client.execute(uri: "/", method: .get)
            let html = String(buffer: page.body)
            #expect(page.status == .ok && page.headers[.contentType] == "text/html; charset=utf-8")
            // Given the root's four image files (one of them broken), all are listed, in order
            let anchors = html.components(separatedBy: "<a class=\"thumb\"").count - 1
            #expect(anchors == 4)
            #expect(html.contains("alt=\"alpha.png\"") && html.contains("alt=\"sub/inner.jpg\""))
            #expect(html.components(separatedBy: "loading=\"lazy\"").count - 1 == 4)
            // Then every srcset names 1× and 2× renders, and the 1× URL answers an image of the thumbnail size
            let srcsets = Self.attribute("srcset", in: html)
            #expect(srcsets.count == 4 && srcsets.allSatisfy { $0.contains(" 1x, ") && $0.hasSuffix(" 2x") })
            let first = try #require(Self.attribute("src", in: html).first { $0.contains("photo.jpg") })
            let image = try await client.execute(uri: first.replacingOccurrences(of: "&amp;", with: "&"), method: .get)
            #expect(image.status == .ok && image.probe.map { [$0.width, $0.height] } == [256, 256])
            // And the viewer script is served, and the no-script view page shows a large render
            let script = try await client.execute(uri: "/assets/gallery.js", method: .get)
            #expect(script.status == .ok && String(buffer: script.body).contains("showModal"))
            let view = try await client.execute(uri: "/view?src=photo.jpg", method: .get)
            #expect(view.status == .ok && String(buffer: view.body).contains("id=\"viewer-image\""))
            #expect(try await client.execute(uri: "/view?src=../etc/passwd", method: .get).status == .forbidden)
        }
    }

    @Test("with a key, the gallery's links are signed and the server accepts them")
    func signedLinks() async throws {
        var config = ServerHarness.configuration(root: root)
        config.signingKey = "gallery-secret"
        try await ServerHarness.withServer(config) { _, client in
            let html = String(buffer: try await client.execute(uri: "/", method: .get).body)
            let src = try #require(Self.attribute("src", in: html).first)
            #expect(src.contains("sig="))
            let signed = try await client.execute(uri: src.replacingOccurrences(of: "&amp;", with: "&"), method: .get)
            #expect(signed.status == .ok)
        }
    }

    @Test("file names are HTML-escaped")
    func escaping() async throws {
        ServerHarness.write(root + "/<b>&\"q\".jpg", try! ImageEncoderShim.jpeg())
        try await ServerHarness.withServer(ServerHarness.configuration(root: root)) { _, client in
            let html = String(buffer: try await client.execute(uri: "/", method: .get).body)
            #expect(!html.contains("<b>&"))
            #expect(html.contains("&lt;b&gt;&amp;&quot;q&quot;.jpg"))
        }
    }

    /// Values of `name="…"` attributes on `<img>` tags.
    static func attribute(_ name: String, in html: String) -> [String] {
        html.components(separatedBy: "<img ").dropFirst().compactMap { tag in
            guard let start = tag.range(of: " \(name)=\"") else { return nil }
            let rest = tag[start.upperBound...]
            return rest.firstIndex(of: "\"").map { String(rest[..<$0]) }
        }
    }
}

enum ImageEncoderShim {
    static func jpeg() throws -> [UInt8] {
        try ImageEncoder.encode(ServerHarness.gradient(50, 50, alpha: false), as: .jpeg)
    }
}
