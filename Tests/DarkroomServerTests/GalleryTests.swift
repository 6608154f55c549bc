import DarkroomImage
import DarkroomTestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import Testing

@testable import DarkroomServer

@Suite("GET / gallery")
struct GalleryTests {
    let root = ServerHarness.makeRoot()

    @Test("lists the root's images as lazy thumbnails with 1× and 2× sources that load, and its folders")
    func index() async throws {
        try await ServerHarness.withServer(ServerHarness.configuration(root: root)) { _, client in
            let page = try await client.execute(uri: "/", method: .get)
            let html = String(buffer: page.body)
            #expect(page.status == .ok && page.headers[.contentType] == "text/html; charset=utf-8")
            // Given the root's three image files (one of them broken) and sub/inner.jpg, the root's are listed in
            // order and sub is a folder with its count
            let anchors = html.components(separatedBy: "<a class=\"thumb\"").count - 1
            #expect(anchors == 3)
            #expect(html.contains("alt=\"alpha.png\"") && !html.contains("alt=\"sub/inner.jpg\""))
            #expect(html.contains("<a class=\"folder\" href=\"/?dir=sub\">sub<span>1</span></a>"))
            #expect(html.contains("<title>Darkroom — Library — 4 images</title>"))
            #expect(html.components(separatedBy: "loading=\"lazy\"").count - 1 == 3)
            let sub = String(buffer: try await client.execute(uri: "/?dir=sub", method: .get).body)
            #expect(sub.contains("alt=\"sub/inner.jpg\"") && sub.contains("<a href=\"/\">Library</a> / sub"))
            // Then every srcset names 1× and 2× renders, and the 1× URL answers an image of the thumbnail size
            let srcsets = Self.attribute("srcset", in: html)
            #expect(srcsets.count == 3 && srcsets.allSatisfy { $0.contains(" 1x, ") && $0.hasSuffix(" 2x") })
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

    @Test("a video's cell is its poster frame, marked; its motion URL answers an animated WebP, its info its duration")
    func videoCells() async throws {
        // Given a clip beside the photos
        ServerHarness.write(root + "/clip.mp4", try FileBytes.read(MotionPhotoSamples.path("clip.mp4")))
        try await ServerHarness.withServer(ServerHarness.configuration(root: root)) { _, client in
            let page = try await client.execute(uri: "/", method: .get)
            let html = String(buffer: page.body)
            // Then the clip is listed in a cell marked as a video, with its motion's URL; the photos' cells are not
            let opening = try #require(html.range(of: "<a class=\"thumb video\""), "\(html.prefix(2000))")
            #expect(html.components(separatedBy: "<a class=\"thumb video\"").count == 2)
            let tag = html[opening.upperBound...].prefix { $0 != ">" }
            let motion = try #require(
                tag.range(of: "data-motion=\"").map { tag[$0.upperBound...].prefix { $0 != "\"" } })
            #expect(motion.contains("src=clip.mp4") && motion.contains("motion=1"))
            // And its poster answers a still, its motion an animated WebP of the clip's 2 s at 10 fps
            let poster = try #require(Self.attribute("src", in: html).first { $0.contains("clip.mp4") })
            let still = try await client.execute(uri: poster.replacingOccurrences(of: "&amp;", with: "&"), method: .get)
            #expect(still.status == .ok && still.probe?.frameCount == 1 && still.probe?.width == 256)
            let animated = try await client.execute(
                uri: String(motion).replacingOccurrences(of: "&amp;", with: "&"), method: .get,
                headers: [.accept: "image/webp"])
            #expect(animated.status == .ok && animated.probe?.format == .webp && animated.probe?.frameCount == 20)
            // And its info URL answers the clip's facts, whose duration the cell shows
            let info = try #require(
                tag.range(of: "data-info=\"").map { tag[$0.upperBound...].prefix { $0 != "\"" } })
            let facts = try await client.execute(
                uri: String(info).replacingOccurrences(of: "&amp;", with: "&"), method: .get)
            let json = try #require(
                try JSONSerialization.jsonObject(with: Data(facts.bytes)) as? [String: Any], "\(facts.status)")
            let video = try #require(json["video"] as? [String: Any], "\(json)")
            #expect(abs((video["duration"] as? Double ?? 0) - 2) < 0.05)
            // And the page lets its script read the info from the server (its only connection), and the script that
            // swaps them on hover, and shows the duration, is served
            #expect(page.headers[.contentSecurityPolicy]?.contains("connect-src 'self'") == true)
            let script = String(buffer: try await client.execute(uri: "/assets/gallery.js", method: .get).body)
            #expect(script.contains("a.thumb.video") && script.contains("dataset.info"))
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
            // And /view needs a signature too: the gallery links a signed one, an unsigned or altered one is refused
            let viewStart = try #require(html.range(of: "href=\"/view?"))
            let view = String(html[html.index(viewStart.lowerBound, offsetBy: 6)...].prefix { $0 != "\"" })
            #expect(view.contains("sig="))
            let viewURI = view.replacingOccurrences(of: "&amp;", with: "&")
            #expect(try await client.execute(uri: viewURI, method: .get).status == .ok)
            let unsigned = try await client.execute(uri: "/view?src=photo.jpg", method: .get)
            #expect(unsigned.status == .forbidden && String(buffer: unsigned.body).contains("bad_signature"))
            let altered = viewURI.replacingOccurrences(of: "src=", with: "src=sub%2F")
            #expect(try await client.execute(uri: altered, method: .get).status == .forbidden)
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

    @Test("a large library pages in a stable order with the true count; the listing is kept, not rescanned per view")
    func pages() async throws {
        // Given 450 images in one folder (empty files: the listing never opens them)
        let big = ServerHarness.temporaryDirectory("big")
        try FileManager.default.createDirectory(atPath: big + "/a/b", withIntermediateDirectories: true)
        for i in 0..<450 { ServerHarness.write(big + "/a/b/" + String(format: "img%04d.jpg", i), []) }
        var config = ServerHarness.configuration(root: big)
        config.galleryRefreshSeconds = 3600
        try await ServerHarness.withServer(config) { _, client in
            // When its folder is opened, page 3 of 3 (200 a page)
            let root = String(buffer: try await client.execute(uri: "/", method: .get).body)
            let third = try await client.execute(uri: "/?dir=a/b&page=3", method: .get)
            let html = String(buffer: third.body)
            // Then the root shows the folder with its true count, page 3 shows images 400…449 and a way back
            #expect(root.contains(">a<span>450</span></a>") && root.contains("— 450 images</title>"))
            #expect(third.status == .ok)
            #expect(html.components(separatedBy: "<a class=\"thumb\"").count - 1 == 50)
            #expect(html.contains("alt=\"a/b/img0400.jpg\"") && html.contains("alt=\"a/b/img0449.jpg\""))
            #expect(!html.contains("img0399.jpg") && html.contains("rel=\"prev\"") && !html.contains("rel=\"next\""))
            #expect(html.contains("<a href=\"/\">Library</a> / <a href=\"/?dir=a\">a</a> / b"))
            // And a file added afterwards is not listed until the listing is refreshed (it is kept, not rebuilt)
            ServerHarness.write(big + "/a/b/img9999.jpg", [])
            let again = String(buffer: try await client.execute(uri: "/?dir=a/b&page=3", method: .get).body)
            #expect(!again.contains("img9999.jpg"))
            // And unknown folders, pages past the end and paths outside the root are 404s
            for uri in ["/?dir=nope", "/?dir=a/b&page=4", "/?dir=../etc", "/?dir=a&page=0"] {
                #expect(try await client.execute(uri: uri, method: .get).status == .notFound, "\(uri)")
            }
        }
    }

    @Test(
        "an image's ThumbHash, remembered from its first thumbnail, rides on its gallery cell for the script to paint")
    func placeholders() async throws {
        try await ServerHarness.withServer(ServerHarness.configuration(root: root)) { _, client in
            // Given a gallery page before any thumbnail was rendered: no placeholders
            let before = String(buffer: try await client.execute(uri: "/", method: .get).body)
            #expect(!before.contains("data-thumbhash"))
            // When photo.jpg's gallery thumbnail is rendered
            let thumb = try await client.execute(uri: "/v1/thumb?src=photo.jpg&w=256&h=256&fit=cover", method: .get)
            #expect(thumb.status == .ok)
            // Then its cell carries the ThumbHash of that thumbnail (the library's, byte for byte), the others none
            let after = String(buffer: try await client.execute(uri: "/", method: .get).body)
            let hashes = Self.attribute("data-thumbhash", in: after)
            #expect(hashes.count == 1)
            let bytes = try #require(FileManager.default.contents(atPath: root + "/photo.jpg"))
            let decoded = try ImageDecoder().decode(
                Array(bytes), options: DecodeOptions(size: .fill(width: 256, height: 256)))
            let store = GalleryPlaceholders()
            store.remember("photo.jpg", from: decoded.bitmap)
            #expect(hashes.first == store.hash(for: "photo.jpg").map { Data($0).base64EncodedString() })
            // And the script that paints them is served
            let script = String(buffer: try await client.execute(uri: "/assets/gallery.js", method: .get).body)
            #expect(script.contains("thumbHashToRGBA") && script.contains("data-thumbhash"))
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
