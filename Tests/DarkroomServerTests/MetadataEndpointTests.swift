import Darkroom
import DarkroomImage
import DarkroomTestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

@testable import DarkroomServer

/// `strip=0` and `keep_copyright=1`: the source's EXIF in the thumbnail, read back by Pillow.
@Suite("Thumbnail metadata")
struct MetadataEndpointTests {
    /// Writes `photo.jpg` with EXIF (camera, artist, copyright, orientation 6, a GPS IFD) made by Pillow.
    static func makeRoot() throws -> String {
        let root = ServerHarness.temporaryDirectory("exif")
        _ = try PythonReference.run(
            """
            import sys
            from PIL import Image
            image = Image.new("RGB", (320, 200), (200, 120, 40))
            exif = Image.Exif()
            exif[0x010F] = "Darkroom Camera Co"; exif[0x0110] = "Model 7"
            exif[0x013B] = "Ada Photographer"; exif[0x8298] = "(c) 2026 Ada"
            exif[0x0112] = 6
            exif.get_ifd(0x8825)[2] = (52.0, 31.0, 12.0)
            image.save(sys.argv[1], exif=exif.tobytes(), quality=90)
            """, [root + "/photo.jpg"])
        return root
    }

    /// The EXIF tags of `bytes` as Pillow reads them: `{tag: value}` as strings, and whether GPS is present.
    static func tags(_ bytes: [UInt8]) throws -> [String: String] {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let file = directory.file("out")
        try Data(bytes).write(to: URL(fileURLWithPath: file))
        let json = try PythonReference.run(
            """
            import json, sys
            from PIL import Image
            exif = Image.open(sys.argv[1]).getexif()
            tags = {str(k): str(v) for k, v in exif.items()}
            if exif.get_ifd(0x8825): tags["gps"] = "yes"
            print(json.dumps(tags))
            """, [file])
        return try JSONDecoder().decode([String: String].self, from: json)
    }

    @Test("strip=0 reads its source as often as a plain render: once for the header, once whole")
    func strip0ReadsTheSourceOnce() async throws {
        let root = try Self.makeRoot()
        try FileManager.default.copyItem(atPath: root + "/photo.jpg", toPath: root + "/copy.jpg")
        try await ServerHarness.withServer(ServerHarness.configuration(root: root)) { server, client in
            // Given two copies of one JPEG, neither rendered yet
            func reads(_ uri: String) async throws -> Int {
                let before = server.service.pipeline.statistics.fileReads
                #expect(try await client.execute(uri: uri, method: .get).status == .ok)
                return server.service.pipeline.statistics.fileReads - before
            }
            // When one is rendered plainly and the other with its metadata kept
            let plain = try await reads("/v1/thumb?src=photo.jpg&w=64")
            let kept = try await reads("/v1/thumb?src=copy.jpg&w=64&strip=0")
            // Then both read their file the same number of times
            #expect(plain >= 1 && kept == plain, "plain \(plain), strip=0 \(kept)")
        }
    }

    @Test func strip0KeepsTheExifUprightAndKeepCopyrightOnlyTheCredits() async throws {
        let root = try Self.makeRoot()
        try await ServerHarness.withServer(ServerHarness.configuration(root: root)) { _, client in
            // Given a JPEG with camera, credits, GPS and orientation 6
            func get(_ query: String, accept: String = "image/webp,*/*") async throws -> TestResponse {
                try await client.execute(
                    uri: "/v1/thumb?src=photo.jpg&w=64&" + query, method: .get, headers: [.accept: accept])
            }
            // When thumbnails are asked for by default, with strip=0, with keep_copyright=1, and as PNG with strip=0
            let plain = try await get("q=80")
            let all = try await get("strip=0")
            let credits = try await get("keep_copyright=1")
            let png = try await get("strip=0&format=png")
            // Then by default there is none (and auto answers WebP to this browser)
            #expect(plain.probe?.format == .webp)
            let none = try Self.tags(plain.bytes)
            #expect(none.isEmpty)
            // And strip=0 answers a JPEG (auto leaves WebP out) with every tag, GPS included, Orientation now 1
            #expect(all.probe?.format == .jpeg && all.probe?.orientation == .up)
            let kept = try Self.tags(all.bytes)
            #expect(kept["271"] == "Darkroom Camera Co" && kept["272"] == "Model 7" && kept["gps"] == "yes")
            #expect(kept["274"] == "1" && kept["33432"] == "(c) 2026 Ada")
            // And the thumbnail is upright: the 320×200 source turned by orientation 6 is portrait
            #expect(all.probe.map { $0.width < $0.height } == true)
            // And keep_copyright=1 keeps Artist and Copyright only
            let creditTags = try Self.tags(credits.bytes)
            #expect(creditTags == ["315": "Ada Photographer", "33432": "(c) 2026 Ada"])
            // And PNG carries it in eXIf
            let pngTags = try Self.tags(png.bytes)
            #expect(png.probe?.format == .png && pngTags["271"] == "Darkroom Camera Co")
        }
    }
}
