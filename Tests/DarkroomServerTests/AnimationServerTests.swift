import DarkroomImage
import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import Testing

@testable import DarkroomServer

/// Animated sources through the server: animated thumbnails by `Accept`, `still=1`, the frame cap and `/v1/info`.
@Suite("Animations through the server")
struct AnimationServerTests {
    /// A root holding the 48-frame GIF and the APNG, copied from the shared samples.
    static func makeRoot() throws -> String {
        let root = ServerHarness.makeRoot()
        for (sample, name) in [
            ("animated/pan-kite-640x400-48f.gif", "kite.gif"), ("animated/blend-dispose-480x300-24f.png", "blend.png"),
        ] {
            let path = ServerHarness.photos + "/" + sample
            let bytes = try #require(
                FileManager.default.contents(atPath: path), "missing sample \(path); set DARKROOM_PHOTOS")
            ServerHarness.write(root + "/" + name, Array(bytes))
        }
        return root
    }

    static func animation(_ bytes: [UInt8]) throws -> (AnimationInfo, AnimatedImageDecoder) {
        let decoder = try AnimatedImageDecoder(bytes)
        return (decoder.info, decoder)
    }

    @Test("an animated source answers animated WebP to WebP clients, GIF to others, the first frame with still=1")
    func animatedAnswers() async throws {
        let root = try Self.makeRoot()
        var configuration = ServerHarness.configuration(root: root)
        configuration.limits.maxAnimationFrames = 30
        try await ServerHarness.withServer(configuration) { _, client in
            // Given the 48-frame GIF and a frame cap of 30
            // When it is asked for by a WebP client, a client without WebP, with still=1, and as JPEG
            let webp = try await client.execute(
                uri: "/v1/thumb?src=kite.gif&w=160", method: .get, headers: [.accept: "image/webp,*/*"])
            let gif = try await client.execute(uri: "/v1/thumb?src=kite.gif&w=160", method: .get)
            let still = try await client.execute(
                uri: "/v1/thumb?src=kite.gif&w=160&still=1", method: .get, headers: [.accept: "image/webp"])
            let jpeg = try await client.execute(uri: "/v1/thumb?src=kite.gif&w=160&format=jpeg", method: .get)
            // Then the WebP client gets 30 frames of animated WebP at 160×100 with the source's timing
            #expect(webp.status == .ok && webp.headers[.contentType] == "image/webp")
            let (webpInfo, webpFrames) = try Self.animation(webp.bytes)
            #expect(webpInfo.frameCount == 30 && webpInfo.durations == [Int](repeating: 40, count: 30))
            #expect(webpInfo.plays == 0 && webpFrames.outputWidth == 160 && webpFrames.outputHeight == 100)
            // And the other client a 30-frame GIF
            #expect(gif.headers[.contentType] == "image/gif" && gif.headers[.vary] == "Accept")
            #expect(try Self.animation(gif.bytes).0.frameCount == 30)
            // And still=1 and format=jpeg a single frame
            #expect(still.headers[.contentType] == "image/webp" && still.probe?.frameCount == 1)
            #expect(jpeg.headers[.contentType] == "image/jpeg" && jpeg.probe?.frameCount == 1)
            // And every variant has its own ETag
            let tags = Set([webp, gif, still, jpeg].compactMap { $0.headers[.eTag] })
            #expect(tags.count == 4)
        }
    }

    @Test("an animated thumbnail's frames match the decoder's own frames at that size")
    func animatedFramesAreTheSourceFrames() async throws {
        let root = try Self.makeRoot()
        try await ServerHarness.withServer(ServerHarness.configuration(root: root)) { _, client in
            let response = try await client.execute(
                uri: "/v1/thumb?src=blend.png&w=120&format=webp&q=95", method: .get)
            #expect(response.status == .ok)
            let (info, served) = try Self.animation(response.bytes)
            #expect(info.frameCount == 24)
            let bytes = try #require(FileManager.default.contents(atPath: root + "/blend.png"))
            let reference = try AnimatedImageDecoder(Array(bytes), options: DecodeOptions(size: .maxPixelSize(120)))
            while let expected = try reference.nextFrame() {
                let frame = try #require(try served.nextFrame())
                #expect(PixelCompare.psnr(frame.bitmap, expected.bitmap) >= 30, "frame \(frame.index)")
            }
        }
    }

    @Test("the gallery's thumbnail of an animation is animated")
    func gallery() async throws {
        let root = try Self.makeRoot()
        try await ServerHarness.withServer(ServerHarness.configuration(root: root)) { _, client in
            // Given the gallery page listing the GIF
            let html = String(buffer: try await client.execute(uri: "/", method: .get).body)
            let start = try #require(html.range(of: "src=\"/v1/thumb?src=kite.gif"))
            let url = html[html.index(start.lowerBound, offsetBy: 5)...].prefix { $0 != "\"" }
                .replacingOccurrences(of: "&amp;", with: "&")
            // When a browser loads its thumbnail
            let thumb = try await client.execute(
                uri: url, method: .get, headers: [.accept: "image/avif,image/webp,*/*"])
            // Then it is an animated WebP with every frame
            #expect(
                thumb.headers[.contentType] == "image/webp",
                "\(url): \(thumb.status) \(String(decoding: thumb.bytes, as: UTF8.self).prefix(300))")
            #expect(try Self.animation(thumb.bytes).0.frameCount == 48)
        }
    }

    @Test("info lists an animation's frame count, durations and loop count")
    func info() async throws {
        let root = try Self.makeRoot()
        try await ServerHarness.withServer(ServerHarness.configuration(root: root)) { _, client in
            let r = try await client.execute(uri: "/v1/info?src=kite.gif", method: .get)
            let j = try JSONSerialization.jsonObject(with: Data(r.bytes)) as! [String: Any]
            let animation = try #require(j["animation"] as? [String: Any])
            #expect(j["frameCount"] as? Int == 48)
            #expect(animation["durations"] as? [Int] == [Int](repeating: 40, count: 48))
            #expect(animation["loopCount"] as? Int == 0 && animation["plays"] as? Int == 0)
            #expect(animation["totalDisplayDuration"] as? Int == 1920)
        }
    }

    @Test("an animation over the frames × area budget is refused with 413 before decoding")
    func animationBudget() async throws {
        let root = try Self.makeRoot()
        var configuration = ServerHarness.configuration(root: root)
        configuration.limits.decode.maxAnimationPixels = 640 * 400 * 47
        try await ServerHarness.withServer(configuration) { _, client in
            let r = try await client.execute(uri: "/v1/thumb?src=kite.gif&w=100", method: .get)
            #expect(r.status == .contentTooLarge)
        }
    }
}
