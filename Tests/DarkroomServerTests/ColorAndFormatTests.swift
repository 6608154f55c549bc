import DarkroomImage
import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

@testable import DarkroomServer

/// Colour profiles, HEIC/AVIF sources and AVIF output through the server.
@Suite("Colour and formats through the server")
struct ColorAndFormatTests {
    /// A root with a Display P3 JPEG and a HEIC copied from the shared samples (copied, since the root refuses
    /// symlinks that lead out of it).
    static func makeRoot() throws -> String {
        let root = ServerHarness.makeRoot()
        for (sample, name) in [
            ("icc/displayp3-fallenleaf-4032x3024.jpg", "p3.jpg"), ("heic/summer_1am-2560x1600.heic", "photo.heic"),
            ("avif/fallenleaf-irot1-stored1600x2560.avif", "turned.avif"),
        ] {
            let path = ServerHarness.photos + "/" + sample
            let bytes = try #require(
                FileManager.default.contents(atPath: path), "missing sample \(path); set DARKROOM_PHOTOS")
            ServerHarness.write(root + "/" + name, Array(bytes))
        }
        return root
    }

    @Test("format=avif answers AVIF; auto answers AVIF only with --auto-avif and an Accept naming it")
    func avifOutput() async throws {
        let root = try Self.makeRoot()
        let accept = "image/avif,image/webp,*/*;q=0.8"
        try await ServerHarness.withServer(ServerHarness.configuration(root: root)) { _, client in
            let explicit = try await client.execute(uri: "/v1/thumb?src=photo.jpg&w=100&format=avif", method: .get)
            let auto = try await client.execute(
                uri: "/v1/thumb?src=photo.jpg&w=100", method: .get, headers: [.accept: accept])
            #expect(explicit.status == .ok && explicit.headers[.contentType] == "image/avif")
            #expect(explicit.probe.map { [$0.width, $0.height] } == [100, 75])
            #expect(auto.headers[.contentType] == "image/webp")
        }
        var configuration = ServerHarness.configuration(root: root)
        configuration.autoAVIF = true
        try await ServerHarness.withServer(configuration) { _, client in
            let auto = try await client.execute(
                uri: "/v1/thumb?src=photo.jpg&w=100", method: .get, headers: [.accept: accept])
            let webpOnly = try await client.execute(
                uri: "/v1/thumb?src=photo.jpg&w=100", method: .get, headers: [.accept: "image/webp"])
            #expect(auto.headers[.contentType] == "image/avif" && auto.probe?.format == .avif)
            #expect(auto.headers[.vary] == "Accept")
            #expect(webpOnly.headers[.contentType] == "image/webp")
            #expect(auto.headers[.eTag] != webpOnly.headers[.eTag])
        }
    }

    @Test("HEIC and AVIF sources render upright thumbnails")
    func heifSources() async throws {
        let root = try Self.makeRoot()
        try await ServerHarness.withServer(ServerHarness.configuration(root: root)) { _, client in
            let heic = try await client.execute(uri: "/v1/thumb?src=photo.heic&w=256&format=jpeg", method: .get)
            let avif = try await client.execute(uri: "/v1/thumb?src=turned.avif&w=256&format=png", method: .get)
            #expect(heic.status == .ok && heic.probe.map { [$0.width, $0.height] } == [256, 160])
            #expect(avif.status == .ok && avif.probe.map { [$0.width, $0.height] } == [256, 160])
        }
    }

    @Test("info reports the colour profile and the HEIF specifics")
    func info() async throws {
        let root = try Self.makeRoot()
        try await ServerHarness.withServer(ServerHarness.configuration(root: root)) { _, client in
            let p3 = try await client.execute(uri: "/v1/info?src=p3.jpg", method: .get)
            let heic = try await client.execute(uri: "/v1/info?src=photo.heic", method: .get)
            let j = try JSONSerialization.jsonObject(with: Data(p3.bytes)) as! [String: Any]
            let color = try #require(j["colorProfile"] as? [String: Any])
            #expect((color["description"] as? String)?.contains("Display P3") == true)
            #expect(
                color["isSRGB"] as? Bool == false && color["isUsable"] as? Bool == true
                    && color["model"] as? String == "rgb")
            let h = try JSONSerialization.jsonObject(with: Data(heic.bytes)) as! [String: Any]
            #expect(h["format"] as? String == "heic")
            let details = try #require(h["heif"] as? [String: Any])
            #expect(details["codec"] as? String == "hevc" && details["imageCount"] as? Int == 1)
        }
    }

    @Test("thumbnails are converted to sRGB by default; --keep-color-profile keeps the pixels and embeds the profile")
    func keepProfile() async throws {
        let root = try Self.makeRoot()
        let converted = try await ServerHarness.withServer(ServerHarness.configuration(root: root)) { _, client in
            try await client.execute(uri: "/v1/thumb?src=p3.jpg&w=128&format=png", method: .get).bytes
        }
        var configuration = ServerHarness.configuration(root: root)
        configuration.keepColorProfile = true
        let kept = try await ServerHarness.withServer(configuration) { _, client in
            try await client.execute(uri: "/v1/thumb?src=p3.jpg&w=128&format=png", method: .get).bytes
        }
        let decoder = ImageDecoder()
        #expect(try decoder.decode(Array(converted), options: DecodeOptions(colorSpace: .original)).colorProfile == nil)
        let keptImage = try decoder.decode(Array(kept), options: DecodeOptions(colorSpace: .original))
        #expect(keptImage.colorProfile?.summary.description?.contains("Display P3") == true)
        // Converting the kept file gives the default's pixels
        let keptConverted = try decoder.decode(Array(kept))
        let reference = try decoder.decode(Array(converted))
        #expect(
            keptConverted.bitmap.pixelsEqual(reference.bitmap) || Self.close(keptConverted.bitmap, reference.bitmap))
    }

    static func close(_ a: Bitmap, _ b: Bitmap) -> Bool {
        guard a.width == b.width, a.height == b.height else { return false }
        for y in 0..<a.height {
            let ra = a.row(y).assumingMemoryBound(to: UInt8.self)
            let rb = b.row(y).assumingMemoryBound(to: UInt8.self)
            for i in 0..<(a.width * 4) where abs(Int(ra[i]) - Int(rb[i])) > 2 { return false }
        }
        return true
    }
}
