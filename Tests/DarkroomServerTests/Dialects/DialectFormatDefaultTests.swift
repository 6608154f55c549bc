import DarkroomImage
import DarkroomTestSupport
import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import Testing

@testable import DarkroomServer

/// What format a thumbor or imgproxy URL that names none answers in: as those servers ship (thumbor's
/// `AUTO_WEBP = False`, imgproxy's `IMGPROXY_AUTO_WEBP`/`AUTO_AVIF` off), the source's own format, the same bytes
/// for every client and no `Vary: Accept`; negotiated only when the server is told to.
@Suite("thumbor and imgproxy keep the source's format by default")
struct DialectFormatDefaultTests {
    let root = ServerHarness.makeRoot()
    let accept = "image/avif,image/webp,image/apng,*/*;q=0.8"

    func writeFiles() throws {
        ServerHarness.write(
            root + "/photo.webp", try ImageEncoder.encode(ServerHarness.gradient(200, 150, alpha: false), as: .webp))
        let palette: [(UInt8, UInt8, UInt8)] = [(200, 20, 20), (20, 200, 20)]
        let frames = (0..<2).map {
            AnimationFiles.GIFFrame(width: 40, height: 30, indices: [UInt8](repeating: UInt8($0), count: 1200))
        }
        ServerHarness.write(
            root + "/anim.gif", AnimationFiles.gif(width: 40, height: 30, palette: palette, frames: frames))
    }

    @Test("by default each source keeps its format, whatever the client accepts")
    func sourceFormatByDefault() async throws {
        try writeFiles()
        try await ServerHarness.withServer(ServerHarness.configuration(root: root)) { _, client in
            for (file, type, format) in [
                ("photo.jpg", "image/jpeg", ImageFileFormat.jpeg), ("alpha.png", "image/png", .png),
                ("photo.webp", "image/webp", .webp), ("anim.gif", "image/gif", .gif),
            ] {
                // Given a browser's Accept (WebP and AVIF), When thumbor and imgproxy URLs name no format
                let thumbor = try await client.execute(
                    uri: "/thumbor/unsafe/32x0/\(file)", method: .get, headers: [.accept: accept])
                let imgproxy = try await client.execute(
                    uri: "/imgproxy/insecure/rs:fit:32:32/plain/\(file)", method: .get, headers: [.accept: accept])
                // Then both answer in the source's format, not varying by Accept
                for response in [thumbor, imgproxy] {
                    #expect(response.status == .ok, "\(file)")
                    #expect(response.headers[.contentType] == type, "\(file)")
                    #expect(response.probe?.format == format, "\(file)")
                    #expect(response.headers[.vary] == nil, "\(file)")
                }
            }
            // And the animated GIF stays animated
            let gif = try await client.execute(uri: "/thumbor/unsafe/32x0/anim.gif", method: .get)
            #expect(gif.probe?.frameCount == 2)
            // And an explicit format still wins; /v1/thumb still negotiates
            let explicit = try await client.execute(
                uri: "/thumbor/unsafe/32x0/filters:format(png)/photo.jpg", method: .get, headers: [.accept: accept])
            #expect(explicit.headers[.contentType] == "image/png")
            let v1 = try await client.execute(
                uri: "/v1/thumb?src=photo.jpg&w=32", method: .get, headers: [.accept: accept])
            #expect(v1.headers[.contentType] == "image/webp" && v1.headers[.vary] == "Accept")
            let source = try await client.execute(uri: "/v1/thumb?src=alpha.png&w=32&format=source", method: .get)
            #expect(source.headers[.contentType] == "image/png")
        }
    }

    @Test("--thumbor-auto-webp and --imgproxy-auto-webp/avif negotiate, varying by Accept")
    func negotiatedWhenEnabled() async throws {
        var configuration = ServerHarness.configuration(root: root)
        configuration.thumbor.autoWebP = true
        configuration.imgproxy.autoWebP = true
        try await ServerHarness.withServer(configuration) { _, client in
            let thumbor = try await client.execute(
                uri: "/thumbor/unsafe/32x0/photo.jpg", method: .get, headers: [.accept: accept])
            let imgproxy = try await client.execute(
                uri: "/imgproxy/insecure/rs:fit:32:32/plain/photo.jpg", method: .get, headers: [.accept: accept])
            let old = try await client.execute(
                uri: "/thumbor/unsafe/32x0/photo.jpg", method: .get, headers: [.accept: "image/jpeg,*/*"])
            for response in [thumbor, imgproxy] {
                #expect(response.headers[.contentType] == "image/webp")
                #expect(response.headers[.vary] == "Accept")
            }
            #expect(old.headers[.contentType] == "image/jpeg" && old.headers[.vary] == "Accept")
        }
        var avif = ServerHarness.configuration(root: root)
        avif.imgproxy.autoAVIF = true
        avif.autoAVIF = true  // as `--imgproxy-auto-avif` sets it
        try await ServerHarness.withServer(avif) { _, client in
            let imgproxy = try await client.execute(
                uri: "/imgproxy/insecure/rs:fit:32:32/plain/photo.jpg", method: .get, headers: [.accept: accept])
            #expect(imgproxy.headers[.contentType] == "image/avif" && imgproxy.headers[.vary] == "Accept")
            // thumbor's URLs keep the source's format: its own switch is off
            let thumbor = try await client.execute(
                uri: "/thumbor/unsafe/32x0/photo.jpg", method: .get, headers: [.accept: accept])
            #expect(thumbor.headers[.contentType] == "image/jpeg" && thumbor.headers[.vary] == nil)
        }
    }
}
