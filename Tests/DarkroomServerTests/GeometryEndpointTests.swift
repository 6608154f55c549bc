import Darkroom
import DarkroomImage
import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

@testable import DarkroomServer

/// `/v1/thumb` crop before resize, enlarge, the auto and outside fits, and the output options (per-format quality,
/// progressive JPEG, expiry).
@Suite("Thumbnail geometry and output options")
struct GeometryEndpointTests {
    let root = ServerHarness.makeRoot()

    func get(_ client: some TestClientProtocol, _ query: String) async throws -> TestResponse {
        try await client.execute(uri: "/v1/thumb?src=photo.jpg&" + query, method: .get, headers: [.accept: "*/*"])
    }

    @Test func cropBeforeResizeIsTheLibrarysCropRegion() async throws {
        try await ServerHarness.withServer(ServerHarness.configuration(root: root)) { _, client in
            // Given the 640×480 photo; When the 320×240 region at (100, 50) is asked for at 160 px, as PNG
            let served = try await get(client, "crop=100,50,420,290&w=160&format=png")
            // Then it is the library's decode of that region at that size, pixel for pixel
            #expect(served.status == .ok)
            let bytes = try #require(FileManager.default.contents(atPath: root + "/photo.jpg"))
            var options = DecodeOptions(size: .fit(width: 160, height: ThumbnailParameters.unbounded))
            options.geometry.crop = .corners(left: 100, top: 50, right: 420, bottom: 290)
            let expected = try ImageDecoder().decode(Array(bytes), options: options).bitmap
            let got = try ImageDecoder().decode(served.bytes).bitmap
            #expect(got.width == 160 && got.height == 120)
            #expect(PixelCompare.psnr(got, expected) > 50)
            // And an imgproxy-style crop (size and gravity) is the south-east corner
            let corner = try await get(client, "crop=200:100:soea&format=png")
            #expect(corner.probe.map { [$0.width, $0.height] } == [200, 100])
        }
    }

    @Test func enlargeAutoAndOutsideShapeTheOutput() async throws {
        try await ServerHarness.withServer(ServerHarness.configuration(root: root)) { _, client in
            // Given the 640×480 (landscape) photo
            func size(_ query: String) async throws -> [Int]? {
                try await get(client, query).probe.map { [$0.width, $0.height] }
            }
            // Then a larger box does not enlarge it unless asked
            let s1 = try await size("w=1280")
            #expect(s1 == [640, 480])
            let s2 = try await size("w=1280&enlarge=1")
            #expect(s2 == [1280, 960])
            // And without w or h it keeps its size
            let s3 = try await size("format=png")
            #expect(s3 == [640, 480])
            // And auto fills a landscape box and fits into a portrait one
            let s4 = try await size("w=200&h=100&fit=auto")
            #expect(s4 == [200, 100])
            let s5 = try await size("w=100&h=200&fit=auto")
            #expect(s5 == [100, 75])
            // And min-h scales a contain result up to it and crops what then overflows the box, centred
            let minimum = try await size("w=100&h=100&min-h=100")
            #expect(minimum == [100, 100])
            let openSide = try await size("w=200&min-h=300")
            #expect(openSide == [200, 300])
            let bad = try await get(client, "w=100&h=100&fit=cover&min-w=50")
            #expect(bad.status == .badRequest)
            // And outside covers the box without cropping
            let s6 = try await size("w=100&h=100&fit=outside")
            #expect(s6 == [133, 100])
        }
    }

    @Test func qualityProgressiveMetadataAndExpiry() async throws {
        var configuration = ServerHarness.configuration(root: root)
        configuration.limits.formatQuality = [.jpeg: 40]
        try await ServerHarness.withServer(configuration) { _, client in
            // Given a server whose JPEG default is quality 40
            let byDefault = try await get(client, "w=320")
            let asked = try await get(client, "w=320&fq=jpeg:90:webp:50")
            let explicit = try await get(client, "w=320&q=90&fq=jpeg:20")
            // Then the format's default applies, fq overrides it and q overrides both
            #expect(byDefault.bytes.count < asked.bytes.count)
            #expect(asked.bytes == explicit.bytes)
            // And progressive=1 writes a progressive JPEG
            let progressive = try await get(client, "w=320&q=90&progressive=1")
            #expect(progressive.probe?.isProgressive == true && asked.probe?.isProgressive == false)
            // And metadata can be kept in JPEG and PNG only: asking for it in WebP is refused, not ignored
            let keep = try await get(client, "w=320&strip=0&format=webp")
            #expect(keep.status == .badRequest && keep.errorCode == "bad_request")
            // And an expired link is not found, a live one works
            let now = Int(Date().timeIntervalSince1970)
            let r7 = try await get(client, "w=320&expires=\(now - 10)")
            #expect(r7.status == .notFound)
            let r8 = try await get(client, "w=320&expires=\(now + 3600)")
            #expect(r8.status == .ok)
        }
    }
}
