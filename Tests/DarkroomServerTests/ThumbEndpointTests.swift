import DarkroomImage
import DarkroomTestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import Testing

@testable import DarkroomServer

@Suite("GET /v1/thumb")
struct ThumbEndpointTests {
    let root = ServerHarness.makeRoot()
    static let cacheHeader = HTTPField.Name("X-Darkroom-Cache")!

    @Test("hdr=keep answers an Ultra HDR JPEG for an Ultra HDR photo; without it, the SDR base")
    func ultraHDRKept() async throws {
        // Given an Ultra HDR JPEG (640 × 400, its gain map at 1/4 size) beside the server's other files
        let bytes = try GainMapSamples.assembled(from: "jpeg/colorfulcups-2560x1600.jpg").bytes
        try TemporaryDirectory.write(bytes, to: root + "/ultrahdr.jpg")
        try await ServerHarness.withServer(ServerHarness.configuration(root: root)) { _, client in
            // When a 256 px JPEG is asked for with hdr=keep, and without
            let kept = try await client.execute(
                uri: "/v1/thumb?src=ultrahdr.jpg&w=256&format=jpeg&hdr=keep", method: .get)
            let plain = try await client.execute(uri: "/v1/thumb?src=ultrahdr.jpg&w=256&format=jpeg", method: .get)
            let bad = try await client.execute(uri: "/v1/thumb?src=ultrahdr.jpg&w=256&hdr=bright", method: .get)
            // Then the kept one carries the gain map at the source's proportion and its parameters
            #expect(kept.status == .ok && plain.status == .ok)
            let details = try #require(ImageProber.gainMap(of: kept.bytes))
            #expect(details.isUsable && details.width == 64 && details.height == 40)
            #expect(try ImageProber.probe(kept.bytes).width == 256)
            // and the plain one has none, while an unknown mode is refused
            #expect(ImageProber.gainMap(of: plain.bytes) == nil)
            #expect(bad.status == .badRequest)
        }
    }

    @Test("hdr=apply answers a 10-bit PQ AVIF for HDR displays; what it cannot make is a 400")
    func hdrApplied() async throws {
        // Given an Ultra HDR JPEG beside the server's other files
        let bytes = try GainMapSamples.assembled(from: "jpeg/colorfulcups-2560x1600.jpg").bytes
        try TemporaryDirectory.write(bytes, to: root + "/ultrahdr.jpg")
        try await ServerHarness.withServer(ServerHarness.configuration(root: root)) { _, client in
            // When a 256 px thumbnail is asked for with hdr=apply, for the full headroom and for one stop
            let full = try await client.execute(uri: "/v1/thumb?src=ultrahdr.jpg&w=256&hdr=apply", method: .get)
            let oneStop = try await client.execute(
                uri: "/v1/thumb?src=ultrahdr.jpg&w=256&hdr=apply&headroom=1", method: .get)
            // Then both are BT.2020 PQ AVIFs at 256 px, the one-stop one a different rendition
            for response in [full, oneStop] {
                #expect(response.status == .ok && response.headers[.contentType] == "image/avif")
                let probe = try ImageProber.probe(response.bytes)
                #expect(probe.width == 256 && probe.bitDepth == 10 && probe.hdr?.transfer == "pq", "\(probe)")
            }
            #expect(full.bytes != oneStop.bytes)
            // And a crop, another format, a headroom without hdr=apply or out of range are refused
            for query in [
                "w=64&h=64&fit=cover&hdr=apply", "w=64&format=jpeg&hdr=apply", "w=64&headroom=1",
                "w=64&hdr=apply&headroom=11", "w=64&hdr=apply&blur=2",
            ] {
                let response = try await client.execute(uri: "/v1/thumb?src=ultrahdr.jpg&" + query, method: .get)
                #expect(response.status == .badRequest, "\(query)")
            }
        }
    }

    @Test("hdr=keep answers an AVIF of a PQ photo in PQ, and SDR for other formats")
    func hdrKeptAsPQ() async throws {
        // Given a BT.2020 PQ AVIF (Darkroom's HDR output of an SDR photo) beside the server's other files
        let pq = try ImageEncoder.encodeHDRDisplayThumbnail(
            SamplePhotos.bytes("jpeg/colorfulcups-2560x1600.jpg"), options: DecodeOptions(size: .maxPixelSize(320)))
        try TemporaryDirectory.write(pq, to: root + "/pq.avif")
        try await ServerHarness.withServer(ServerHarness.configuration(root: root)) { _, client in
            // When a 128 px AVIF is asked for with hdr=keep and without, and a JPEG with hdr=keep
            let kept = try await client.execute(uri: "/v1/thumb?src=pq.avif&w=128&format=avif&hdr=keep", method: .get)
            let sdr = try await client.execute(uri: "/v1/thumb?src=pq.avif&w=128&format=avif", method: .get)
            let jpeg = try await client.execute(uri: "/v1/thumb?src=pq.avif&w=128&format=jpeg&hdr=keep", method: .get)
            // Then the kept one is a 10-bit PQ AVIF, the others SDR
            let keptProbe = try ImageProber.probe(kept.bytes)
            #expect(kept.status == .ok && kept.headers[.contentType] == "image/avif")
            #expect(
                keptProbe.width == 128 && keptProbe.bitDepth == 10 && keptProbe.hdr?.transfer == "pq", "\(keptProbe)")
            let sdrProbe = try ImageProber.probe(sdr.bytes)
            #expect(sdrProbe.width == 128 && sdrProbe.bitDepth == 8 && sdrProbe.hdr == nil, "\(sdrProbe)")
            #expect(jpeg.status == .ok && jpeg.headers[.contentType] == "image/jpeg")
            // And the imgproxy and thumbor spellings of keep give the same bytes as /v1/thumb's
            let imgproxy = try await client.execute(
                uri: "/imgproxy/_/w:128/hdr:keep/f:avif/plain/pq.avif", method: .get)
            let thumbor = try await client.execute(
                uri: "/thumbor/unsafe/fit-in/128x0/filters:hdr(keep):format(avif)/pq.avif", method: .get)
            #expect(imgproxy.status == .ok && thumbor.status == .ok)
            #expect(imgproxy.bytes == kept.bytes && thumbor.bytes == kept.bytes)
        }
    }

    @Test("contain fits inside the box without upscaling; cover fills it exactly")
    func sizes() async throws {
        // Given a 640×480 JPEG
        try await ServerHarness.withServer(ServerHarness.configuration(root: root)) { _, client in
            // When it is asked to fit inside 100×100, to cover 100×100, and to fit inside a box larger than itself
            let contain = try await client.execute(uri: "/v1/thumb?src=photo.jpg&w=100&h=100&format=jpeg", method: .get)
            let cover = try await client.execute(
                uri: "/v1/thumb?src=photo.jpg&w=100&h=100&fit=cover&format=jpeg", method: .get)
            let wide = try await client.execute(uri: "/v1/thumb?src=photo.jpg&w=120&format=png", method: .get)
            let large = try await client.execute(uri: "/v1/thumb?src=photo.jpg&w=2000&h=2000&format=jpeg", method: .get)
            // Then contain keeps aspect, cover is exact, a missing side is unbounded, and nothing is upscaled
            #expect(contain.status == .ok)
            #expect(contain.headers[.contentType] == "image/jpeg")
            #expect(contain.probe.map { [$0.width, $0.height] } == [100, 75])
            #expect(cover.probe.map { [$0.width, $0.height] } == [100, 100])
            #expect(wide.probe.map { [$0.format.rawValue, "\($0.width)", "\($0.height)"] } == ["png", "120", "90"])
            #expect(large.probe.map { [$0.width, $0.height] } == [640, 480])
        }
    }

    @Test("format=auto answers WebP when Accept names it, JPEG otherwise, PNG for alpha; always with Vary: Accept")
    func negotiation() async throws {
        try await ServerHarness.withServer(ServerHarness.configuration(root: root)) { _, client in
            // Given a browser that accepts WebP, an old one that sends only wildcards, and one that refuses WebP
            let webp = try await client.execute(
                uri: "/v1/thumb?src=photo.jpg&w=64", method: .get,
                headers: [.accept: "image/avif,image/webp,image/apng,*/*;q=0.8"])
            let legacy = try await client.execute(
                uri: "/v1/thumb?src=photo.jpg&w=64", method: .get, headers: [.accept: "*/*"])
            let refused = try await client.execute(
                uri: "/v1/thumb?src=photo.jpg&w=64", method: .get,
                headers: [.accept: "image/webp;q=0, image/*"])
            let alpha = try await client.execute(
                uri: "/v1/thumb?src=alpha.png&w=64", method: .get, headers: [.accept: "image/*"])
            let alphaWebP = try await client.execute(
                uri: "/v1/thumb?src=alpha.png&w=64", method: .get,
                headers: [.accept: "image/webp"])
            let explicit = try await client.execute(
                uri: "/v1/thumb?src=photo.jpg&w=64&format=png", method: .get,
                headers: [.accept: "image/webp"])
            // Then each gets the format it can show, and auto responses say they vary by Accept
            #expect(webp.headers[.contentType] == "image/webp" && webp.probe?.format == .webp)
            #expect(legacy.headers[.contentType] == "image/jpeg" && legacy.probe?.format == .jpeg)
            #expect(refused.headers[.contentType] == "image/jpeg")
            #expect(alpha.headers[.contentType] == "image/png" && alpha.probe?.hasAlpha == true)
            #expect(alphaWebP.probe?.format == .webp && alphaWebP.probe?.hasAlpha == true)
            #expect(explicit.headers[.contentType] == "image/png")
            for r in [webp, legacy, refused, alpha] { #expect(r.headers[.vary] == "Accept") }
            #expect(explicit.headers[.vary] == nil)
            // And the variants have different ETags (a cache must not serve WebP to the JPEG-only browser)
            #expect(webp.headers[.eTag] != legacy.headers[.eTag])
        }
    }

    @Test("ETag and Cache-Control on every thumbnail; a matching If-None-Match gets 304 with no body")
    func conditional() async throws {
        try await ServerHarness.withServer(ServerHarness.configuration(root: root)) { server, client in
            // Given a first response
            let first = try await client.execute(uri: "/v1/thumb?src=photo.jpg&w=64&format=jpeg", method: .get)
            let etag = try #require(first.headers[.eTag])
            #expect(etag.hasPrefix("\"") && etag.hasSuffix("\""))
            #expect(first.headers[.cacheControl] == "public, max-age=86400")
            // When the client revalidates with that tag, a list containing it, a weak form, and a stale tag
            let same = try await client.execute(
                uri: "/v1/thumb?src=photo.jpg&w=64&format=jpeg", method: .get,
                headers: [.ifNoneMatch: etag])
            let list = try await client.execute(
                uri: "/v1/thumb?src=photo.jpg&w=64&format=jpeg", method: .get,
                headers: [.ifNoneMatch: "\"nope\", W/\(etag)"])
            let stale = try await client.execute(
                uri: "/v1/thumb?src=photo.jpg&w=64&format=jpeg", method: .get,
                headers: [.ifNoneMatch: "\"0000000000000000\""])
            // Then matches are 304 with the tag and no body; the stale tag gets the image
            #expect(same.status == .notModified && same.body.readableBytes == 0 && same.headers[.eTag] == etag)
            #expect(list.status == .notModified)
            #expect(stale.status == .ok && stale.headers[.eTag] == etag)
            // And a different size has a different tag
            let other = try await client.execute(uri: "/v1/thumb?src=photo.jpg&w=65&format=jpeg", method: .get)
            #expect(other.headers[.eTag] != etag)
            #expect(server.renderCounts.started == 2)
        }
    }

    @Test("A changed file gets a new ETag and a fresh render")
    func changedFile() async throws {
        try await ServerHarness.withServer(ServerHarness.configuration(root: root)) { _, client in
            let before = try await client.execute(uri: "/v1/thumb?src=sub/inner.jpg&w=64&format=jpeg", method: .get)
            // When the file is replaced by a different image
            ServerHarness.write(
                root + "/sub/inner.jpg",
                try! ImageEncoder.encode(ServerHarness.gradient(200, 400, alpha: false), as: .jpeg))
            let after = try await client.execute(uri: "/v1/thumb?src=sub/inner.jpg&w=64&format=jpeg", method: .get)
            // Then the answer is the new picture under a new tag
            #expect(before.headers[.eTag] != after.headers[.eTag])
            #expect(before.probe.map { [$0.width, $0.height] } == [64, 48])
            #expect(after.probe.map { [$0.width, $0.height] } == [64, 128])
        }
    }

    @Test("Repeats come from memory; a new server over the same cache directory answers from disk without rendering")
    func cacheLayers() async throws {
        let cacheDir = ServerHarness.temporaryDirectory("cache")
        let config = ServerHarness.configuration(root: root, cacheDirectory: cacheDir)
        let uri = "/v1/thumb?src=photo.jpg&w=80&h=80&fit=cover&format=webp"
        let firstBytes = try await ServerHarness.withServer(config) { server, client in
            let first = try await client.execute(uri: uri, method: .get)
            let second = try await client.execute(uri: uri, method: .get)
            #expect(first.headers[Self.cacheHeader] == "rendered")
            #expect(second.headers[Self.cacheHeader] == "memory")
            #expect(first.bytes == second.bytes)
            #expect(server.renderCounts.started == 1)
            // The disk write follows the answer: wait for it before opening the directory again
            #expect(await eventually { server.pendingDiskWrites == 0 })
            return first.bytes
        }
        try await ServerHarness.withServer(config) { server, client in
            let third = try await client.execute(uri: uri, method: .get)
            #expect(third.headers[Self.cacheHeader] == "disk")
            #expect(third.bytes == firstBytes)
            #expect(third.headers[.contentType] == "image/webp")
        }
    }

    @Test("Identical requests in flight share one render and one decode")
    func sharing() async throws {
        let photos = ServerHarness.photos
        try await ServerHarness.withLiveServer(ServerHarness.configuration(root: photos)) { server, client in
            // Given 8 clients asking at once for the same uncached thumbnail of a 12 MP photo
            let uri = "/v1/thumb?src=\(ServerHarness.twelveMP.queryEncoded)&w=201&h=201&format=jpeg"
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<8 { group.addTask { Int(try await client.execute(uri: uri, method: .get).status.code) } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            // Then all succeed and at most one render ran (the rest joined it or hit the cache it filled)
            #expect(statuses == Array(repeating: 200, count: 8))
            #expect(server.renderCounts.started == 1)
        }
    }

    @Test("12 MP photo to 256 px: JPEG of the right size")
    func realPhoto() async throws {
        try await ServerHarness.withServer(ServerHarness.configuration(root: ServerHarness.photos)) { _, client in
            let r = try await client.execute(
                uri: "/v1/thumb?src=\(ServerHarness.twelveMP.queryEncoded)&w=256&h=256", method: .get)
            #expect(r.status == .ok)
            #expect(r.probe.map { [$0.width, $0.height] } == [256, 192])
        }
    }

    @Test("Bad parameters are 400 with a JSON error naming the parameter")
    func badParameters() async throws {
        try await ServerHarness.withServer(ServerHarness.configuration(root: root)) { _, client in
            for (query, word) in [
                ("w=64", "src"), ("src=photo.jpg&fit=cover", "needs w or h"), ("src=photo.jpg&w=0", "w must"),
                ("src=photo.jpg&w=99999", "w must"), ("src=photo.jpg&w=abc", "w must"),
                ("src=photo.jpg&w=64&fit=stretch", "fit"), ("src=photo.jpg&w=64&format=bmp", "format"),
                ("src=photo.jpg&w=64&q=0", "q must"), ("src=photo.jpg&w=64&q=101", "q must"),
                ("src=%zz&w=64", "percent"), ("src=ftp://x/y.jpg&w=64", "http"),
            ] {
                let r = try await client.execute(uri: "/v1/thumb?" + query, method: .get)
                #expect(r.status == .badRequest, "\(query)")
                #expect(r.errorCode == "bad_request", "\(query)")
                #expect(String(buffer: r.body).contains(word), "\(query): \(String(buffer: r.body))")
                #expect(r.headers[.contentType] == "application/json; charset=utf-8")
            }
        }
    }

    @Test("Unknown routes are 404, other methods 405, HEAD has headers and no body — all JSON errors")
    func routing() async throws {
        try await ServerHarness.withServer(ServerHarness.configuration(root: root)) { _, client in
            let missing = try await client.execute(uri: "/v2/thumb", method: .get)
            #expect(missing.status == .notFound && missing.errorCode == "no_route")
            let post = try await client.execute(uri: "/v1/thumb?src=photo.jpg&w=10", method: .post)
            #expect(post.status == .methodNotAllowed && post.errorCode == "method_not_allowed")
            let head = try await client.execute(uri: "/v1/thumb?src=photo.jpg&w=10&format=png", method: .head)
            #expect(head.status == .ok && head.body.readableBytes == 0 && head.headers[.contentType] == "image/png")
            let get = try await client.execute(uri: "/v1/thumb?src=photo.jpg&w=10&format=png", method: .get)
            #expect(head.headers[.contentLength] == "\(get.body.readableBytes)" && get.body.readableBytes > 0)
        }
    }

    @Test("HEAD over a real connection: the GET's Content-Length, no body, and the connection stays usable")
    func headLive() async throws {
        try await ServerHarness.withLiveServer(ServerHarness.configuration(root: root)) { _, client in
            // Given a thumbnail's GET
            let get = try await client.execute(uri: "/v1/thumb?src=photo.jpg&w=40&format=jpeg", method: .get)
            // When it is asked for with HEAD, then with GET again
            let head = try await client.execute(uri: "/v1/thumb?src=photo.jpg&w=40&format=jpeg", method: .head)
            let again = try await client.execute(uri: "/v1/thumb?src=photo.jpg&w=40&format=jpeg", method: .get)
            // Then HEAD announces the GET's length without sending it, and the next GET is whole
            #expect(head.status == .ok && head.body.readableBytes == 0)
            #expect(head.headers[.contentLength] == "\(get.body.readableBytes)")
            #expect(again.status == .ok && again.body.readableBytes == get.body.readableBytes)
        }
    }
}
