import DarkroomImage
import DarkroomTestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import Testing

@testable import DarkroomServer

@Suite("GET /v1/info, /health, /metrics")
struct InfoHealthMetricsTests {
    let root = ServerHarness.makeRoot()

    @Test("info answers the probe as JSON: format, size, upright size, alpha, frames")
    func info() async throws {
        try await ServerHarness.withServer(ServerHarness.configuration(root: root)) { _, client in
            let jpeg = try await client.execute(uri: "/v1/info?src=photo.jpg", method: .get)
            let png = try await client.execute(uri: "/v1/info?src=alpha.png", method: .get)
            #expect(jpeg.status == .ok && jpeg.headers[.contentType] == "application/json; charset=utf-8")
            let j = try JSONSerialization.jsonObject(with: Data(jpeg.bytes)) as! [String: Any]
            #expect(j["format"] as? String == "jpeg")
            #expect(j["width"] as? Int == 640 && j["height"] as? Int == 480)
            #expect(j["orientedWidth"] as? Int == 640 && j["frameCount"] as? Int == 1)
            #expect(j["hasAlpha"] as? Bool == false)
            let p = try JSONSerialization.jsonObject(with: Data(png.bytes)) as! [String: Any]
            #expect(p["format"] as? String == "png" && p["hasAlpha"] as? Bool == true)
        }
    }

    @Test("info carries the image's ThumbHash placeholder, as the library computes it")
    func thumbHash() async throws {
        try await ServerHarness.withServer(ServerHarness.configuration(root: root)) { _, client in
            let response = try await client.execute(uri: "/v1/info?src=photo.jpg", method: .get)
            let j = try JSONSerialization.jsonObject(with: Data(response.bytes)) as! [String: Any]
            let hash = try #require((j["thumbhash"] as? String).flatMap { Data(base64Encoded: $0) })
            let bytes = try #require(FileManager.default.contents(atPath: root + "/photo.jpg"))
            let expected = try Array(bytes).withUnsafeBytes { try ThumbHash.compute($0) }
            #expect(Array(hash) == expected)
        }
    }

    @Test("info reports an Ultra HDR photo's gain map, and a warning when it is damaged")
    func gainMap() async throws {
        // Given an Ultra HDR JPEG, and a copy cut where its gain map starts (its MPF index points past the end)
        let (bytes, primaryLength) = try GainMapSamples.assembled(from: "jpeg/colorfulcups-2560x1600.jpg")
        try TemporaryDirectory.write(bytes, to: root + "/ultrahdr.jpg")
        let damaged = Array(bytes[..<primaryLength])
        try TemporaryDirectory.write(damaged, to: root + "/ultrahdr-damaged.jpg")
        try await ServerHarness.withServer(ServerHarness.configuration(root: root)) { _, client in
            // When /v1/info is asked about each
            let good = try await client.execute(uri: "/v1/info?src=ultrahdr.jpg", method: .get)
            let bad = try await client.execute(uri: "/v1/info?src=ultrahdr-damaged.jpg", method: .get)
            // Then the good one names its gain map and parameters, and no warning
            let g = try JSONSerialization.jsonObject(with: Data(good.bytes)) as! [String: Any]
            let map = try #require(g["gainMap"] as? [String: Any])
            #expect(map["container"] as? String == "jpeg-mpf" && map["metadataFormat"] as? String == "iso21496-1")
            #expect(map["width"] as? Int == 160 && map["height"] as? Int == 100)
            let metadata = try #require(map["metadata"] as? [String: Any])
            #expect(metadata["alternateHeadroom"] as? Double == 2)
            #expect(g["warnings"] == nil)
            // and the damaged one answers too, with a warning and the base image's facts
            #expect(bad.status == .ok)
            let b = try JSONSerialization.jsonObject(with: Data(bad.bytes)) as! [String: Any]
            let warnings = try #require(b["warnings"] as? [String])
            #expect(warnings.count == 1 && warnings[0].contains("lists no gain map"), "\(warnings)")
            #expect(b["width"] as? Int == 640)
            // and a thumbnail of it is the base image's, as the good file's is
            let thumbGood = try await client.execute(uri: "/v1/thumb?src=ultrahdr.jpg&w=128&format=png", method: .get)
            let thumbBad = try await client.execute(
                uri: "/v1/thumb?src=ultrahdr-damaged.jpg&w=128&format=png", method: .get)
            #expect(thumbGood.status == .ok && thumbBad.status == .ok)
            #expect(thumbGood.bytes == thumbBad.bytes)
        }
    }

    @Test("info on a rotated photo reports the upright size")
    func orientation() async throws {
        let dir = ServerHarness.photos + "/orientation"
        let name = try #require(
            try FileManager.default.contentsOfDirectory(atPath: dir).first { $0.hasSuffix("orientation-6.jpg") })
        try await ServerHarness.withServer(ServerHarness.configuration(root: ServerHarness.photos)) { _, client in
            let r = try await client.execute(uri: "/v1/info?src=orientation/\(name.queryEncoded)", method: .get)
            let j = try JSONSerialization.jsonObject(with: Data(r.bytes)) as! [String: Any]
            // Then the stored size is swapped and the upright one is what a viewer shows
            #expect(j["orientation"] as? Int == 6)
            #expect(
                j["orientedWidth"] as? Int == j["height"] as? Int && j["orientedHeight"] as? Int == j["width"] as? Int)
            #expect((j["orientedWidth"] as? Int ?? 0) > (j["orientedHeight"] as? Int ?? 0), "upright is landscape")
        }
    }

    @Test("info refuses what thumb refuses: missing src, escapes, non-images")
    func infoErrors() async throws {
        try await ServerHarness.withServer(ServerHarness.configuration(root: root)) { _, client in
            #expect(try await client.execute(uri: "/v1/info", method: .get).errorCode == "bad_request")
            #expect(
                try await client.execute(uri: "/v1/info?src=../x.jpg", method: .get).errorCode == "path_outside_root")
            #expect(try await client.execute(uri: "/v1/info?src=nope.jpg", method: .get).status == .notFound)
            let broken = try await client.execute(uri: "/v1/info?src=broken.jpg", method: .get)
            #expect(broken.status == .unsupportedMediaType && broken.errorCode == "unsupported_media_type")
        }
    }

    @Test("health is 200 JSON with the admission state")
    func health() async throws {
        try await ServerHarness.withServer(ServerHarness.configuration(root: root)) { _, client in
            let r = try await client.execute(uri: "/health", method: .get)
            #expect(r.status == .ok)
            let j = try JSONSerialization.jsonObject(with: Data(r.bytes)) as! [String: Any]
            #expect(
                j["status"] as? String == "ok" && j["rendersRunning"] as? Int == 0
                    && j["diskCache"] as? String == "none")
        }
    }

    @Test("a cache directory that cannot be opened: the server starts on memory caches and health says degraded")
    func unusableCacheDirectoryDegrades() async throws {
        // Given a cache "directory" that is a regular file (as unusable as a full or read-only disk)
        let file = ServerHarness.temporaryDirectory("not-a-directory") + "/file"
        ServerHarness.write(file, Array("x".utf8))
        var configuration = ServerHarness.configuration(root: root, cacheDirectory: file)
        configuration.cacheDirectory = file
        try await ServerHarness.withServer(configuration) { _, client in
            // When health and a thumbnail are asked for
            let health = try await client.execute(uri: "/health", method: .get)
            let thumb = try await client.execute(uri: "/v1/thumb?src=photo.jpg&w=40&format=png", method: .get)
            // Then the server answers both: degraded, with the reason, and the thumbnail rendered from memory
            let j = try JSONSerialization.jsonObject(with: Data(health.bytes)) as! [String: Any]
            #expect(health.status == .ok && j["status"] as? String == "degraded")
            #expect((j["diskCache"] as? String)?.hasPrefix("unavailable: cannot open the disk caches") == true)
            #expect(thumb.status == .ok && thumb.probe?.width == 40)
        }
    }

    @Test("metrics is Prometheus text with request counts by route and status, and render timings")
    func metrics() async throws {
        try await ServerHarness.withServer(ServerHarness.configuration(root: root)) { _, client in
            _ = try await client.execute(uri: "/v1/thumb?src=photo.jpg&w=33&format=jpeg", method: .get)
            _ = try await client.execute(uri: "/v1/thumb?src=nope.jpg&w=33", method: .get)
            let r = try await client.execute(uri: "/metrics", method: .get)
            let text = String(buffer: r.body)
            #expect(r.status == .ok && r.headers[.contentType]?.hasPrefix("text/plain; version=0.0.4") == true)
            #expect(text.contains("# TYPE darkroom_server_requests_total counter"))
            #expect(text.contains(#"darkroom_server_requests_total{route="/v1/thumb",status="200"}"#))
            #expect(text.contains(#"darkroom_server_requests_total{route="/v1/thumb",status="404"}"#))
            #expect(text.contains("darkroom_server_request_duration_seconds_bucket"))
            #expect(text.contains(#"darkroom_server_thumbnails_total{outcome="rendered"}"#))
        }
    }
}
