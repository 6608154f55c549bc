import DarkroomImage
import DarkroomTestSupport
import DarkroomVideo
import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import Testing

@testable import DarkroomServer

/// Videos through the server: `/v1/thumb` gives the poster frame or the frame at `time=` (imgproxy's
/// `video_thumbnail_second`, thumbor-video-engine's `still()`), as the `ffmpeg` command decodes it, upright; `/v1/info`
/// gives the video's facts; a local video is read where it lies, never whole; bad times and damaged clips are 4xx.
@Suite("Videos through the server")
struct VideoEndpointTests {
    let root = ServerHarness.makeRoot()

    /// Copies the clip (2 s, 320 × 240, 30 fps), its turned twin and a clip cut in half into the root.
    func writeFiles() throws -> (clip: String, portrait: String) {
        let clip = try MotionPhotoSamples.path("clip.mp4")
        let portrait = try MotionPhotoSamples.path("portrait.mp4")
        let bytes = try FileBytes.read(clip)
        ServerHarness.write(root + "/clip.mp4", bytes)
        ServerHarness.write(root + "/portrait.mp4", try FileBytes.read(portrait))
        ServerHarness.write(root + "/cut.mp4", Array(bytes[..<(bytes.count / 2)]))
        return (clip, portrait)
    }

    static func bitmap(_ bytes: [UInt8]) throws -> Bitmap {
        var options = DecodeOptions()
        options.geometry.pixelFormat = .exactly(.bgra8Premultiplied)
        return try ImageDecoder().decode(bytes, options: options).bitmap
    }

    @Test("the poster frame and the frame at time=, in all three URL dialects, are the library's and ffmpeg's")
    func framesThroughEveryDialect() async throws {
        let (clip, portrait) = try writeFiles()
        // Given the server, a source limit under the clip's size (a local video is read where it lies, not whole)
        var configuration = ServerHarness.configuration(root: root)
        configuration.limits.maxSourceBytes = 16 << 10
        try #require(try FileBytes.read(clip).count > 16 << 10)
        let reference = try FFmpegReference.frame(clip, time: 1, width: 160, height: 120)
        var options = DecodeOptions(size: .maxPixelSize(160))
        options.geometry.pixelFormat = .exactly(.bgra8Premultiplied)
        let poster = try VideoDecoder().decode(fileAt: clip, options: options).bitmap
        try await ServerHarness.withServer(configuration) { _, client in
            // When the poster frame is asked for, Then it is the library's poster frame
            let first = try await client.execute(uri: "/v1/thumb?src=clip.mp4&w=160&format=png", method: .get)
            try #require(first.status == .ok, "\(first.status): \(String(decoding: first.bytes, as: UTF8.self))")
            #expect(first.probe?.width == 160 && first.probe?.height == 120)
            #expect(PixelCompare.psnr(try Self.bitmap(first.bytes), poster) >= 50)
            // When the frame at 1 s is asked for in each dialect
            var bodies: [[UInt8]] = []
            for uri in [
                "/v1/thumb?src=clip.mp4&w=160&format=png&time=1",
                "/imgproxy/insecure/rs:fit:160:160/vts:1/plain/clip.mp4@png",
                "/thumbor/unsafe/160x0/filters:still(00:00:01):format(png)/clip.mp4",
            ] {
                let response = try await client.execute(uri: uri, method: .get)
                try #require(response.status == .ok, "\(uri): \(response.status)")
                bodies.append(response.bytes)
            }
            // Then all three are the same image, ffmpeg's frame at 1 s
            #expect(bodies[1] == bodies[0] && bodies[2] == bodies[0])
            let psnr = PixelCompare.psnr(try Self.bitmap(bodies[0]), reference)
            #expect(psnr >= 35, "\(psnr) dB")
            // And a clip stored turned comes out upright
            let turned = try await client.execute(uri: "/v1/thumb?src=portrait.mp4&h=160&format=png", method: .get)
            #expect(turned.probe?.width == 120 && turned.probe?.height == 160)
            let upright = try FFmpegReference.frame(portrait, time: 1, width: 120, height: 160)
            let turnedAt1 = try await client.execute(
                uri: "/v1/thumb?src=portrait.mp4&h=160&format=png&time=1", method: .get)
            #expect(PixelCompare.psnr(try Self.bitmap(turnedAt1.bytes), upright) >= 35)
        }
    }

    @Test("info gives a video's facts; bad times and a damaged clip are refused with their reason")
    func infoAndRefusals() async throws {
        _ = try writeFiles()
        try await ServerHarness.withServer(ServerHarness.configuration(root: root)) { _, client in
            // When info is asked for, Then it names the video, its codec, length and frame rate
            let info = try await client.execute(uri: "/v1/info?src=clip.mp4", method: .get)
            let json = try #require(try JSONSerialization.jsonObject(with: Data(info.bytes)) as? [String: Any])
            let video = try #require(json["video"] as? [String: Any], "\(json)")
            #expect(json["format"] as? String == "video" && json["width"] as? Int == 320)
            #expect(video["codec"] as? String == "h264" && video["frameRate"] as? Double == 30)
            #expect(abs((video["duration"] as? Double ?? 0) - 2) < 0.05)
            // When a time is negative or not a number, or thumbor's still() is not a time, Then 400
            for uri in [
                "/v1/thumb?src=clip.mp4&w=64&time=-1", "/v1/thumb?src=clip.mp4&w=64&time=soon",
                "/thumbor/unsafe/64x0/filters:still(1:75)/clip.mp4",
            ] {
                let response = try await client.execute(uri: uri, method: .get)
                #expect(response.status == .badRequest && response.errorCode == "bad_request", "\(uri)")
            }
            // When the clip is damaged (its header, at the end of the file, cut off), Then a typed error, not a crash
            let cut = try await client.execute(uri: "/v1/thumb?src=cut.mp4&w=64", method: .get)
            #expect(cut.status.code >= 400 && cut.status.code < 500 && cut.errorCode != nil, "\(cut.status)")
            // And the server is still there
            let again = try await client.execute(uri: "/v1/thumb?src=clip.mp4&w=64", method: .get)
            #expect(again.status == .ok)
        }
    }

    @Test("motion=1 answers a video's, a Motion Photo's and a Live Photo's motion as an animated WebP")
    func motion() async throws {
        let (clip, _) = try writeFiles()
        // Given a Motion Photo and a Live Photo (the still and its .MOV) beside the clip
        ServerHarness.write(root + "/google.jpg", try FileBytes.read(MotionPhotoSamples.path("google.jpg")))
        ServerHarness.write(root + "/IMG_0001.HEIC", try FileBytes.read(MotionPhotoSamples.path("live/IMG_0001.HEIC")))
        ServerHarness.write(root + "/IMG_0001.MOV", try FileBytes.read(MotionPhotoSamples.path("live/IMG_0001.MOV")))
        let reference = try FFmpegReference.frame(clip, time: 1, width: 160, height: 120)
        try await ServerHarness.withServer(ServerHarness.configuration(root: root)) { _, client in
            for src in ["clip.mp4", "google.jpg", "IMG_0001.HEIC"] {
                // When its motion is asked for by a client that takes WebP
                let response = try await client.execute(
                    uri: "/v1/thumb?src=\(src)&w=160&motion=1", method: .get, headers: [.accept: "image/webp"])
                try #require(response.status == .ok, "\(src): \(response.status)")
                // Then it is an animated WebP of the 2 s clip at 10 fps, 160 × 120, its frame at 1 s ffmpeg's
                #expect(response.headers[.contentType] == "image/webp")
                let animation = try AnimatedImageDecoder(response.bytes)
                #expect(animation.frameCount == 20 && animation.outputWidth == 160 && animation.outputHeight == 120)
                var frame: AnimatedFrame?
                for _ in 0...10 { frame = try animation.nextFrame() }
                let psnr = PixelCompare.psnr(try #require(frame).bitmap, reference)
                #expect(psnr >= 30, "\(src): \(psnr) dB")  // lossy WebP at quality 80 on top of the frame
                // And the still thumbnail of the photos stays the still
                if src != "clip.mp4" {
                    let still = try await client.execute(uri: "/v1/thumb?src=\(src)&w=160&format=png", method: .get)
                    #expect(still.probe?.format == .png && still.probe?.frameCount == 1, "\(src)")
                }
            }
            // When a photo without motion, or a still format, or motion with still=1 is asked for, Then a 4xx
            let plain = try await client.execute(uri: "/v1/thumb?src=photo.jpg&w=64&motion=1", method: .get)
            #expect(plain.status.code >= 400 && plain.status.code < 500 && plain.errorCode != nil)
            for uri in [
                "/v1/thumb?src=clip.mp4&w=64&motion=1&format=jpeg", "/v1/thumb?src=clip.mp4&w=64&motion=1&still=1",
            ] {
                let response = try await client.execute(uri: uri, method: .get)
                #expect(response.status == .badRequest, "\(uri)")
            }
        }
    }

    @Test("a Live Photo's video must be a regular file beside it: a link named like it is not followed")
    func livePhotoLinksAreNotFollowed() throws {
        // Given a still whose .MOV is a symbolic link to a video elsewhere
        let clip = try MotionPhotoSamples.path("clip.mp4")
        ServerHarness.write(root + "/IMG_0009.HEIC", try FileBytes.read(MotionPhotoSamples.path("live/IMG_0001.HEIC")))
        try FileManager.default.createSymbolicLink(atPath: root + "/IMG_0009.MOV", withDestinationPath: clip)
        // Then it has no motion, and no video is paired with it
        #expect(PhotoMotion.livePhotoVideo(forPhotoAt: root + "/IMG_0009.HEIC") == nil)
        #expect(try VideoDecoder().motion(ofPhotoAt: root + "/IMG_0009.HEIC") == nil)
    }
}
