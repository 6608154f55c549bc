import DarkroomImage
import DarkroomSupport
import DarkroomTestSupport
import Foundation
import Testing

@testable import DarkroomVideo

/// The `darkroom` tool on videos, as a person runs it: `probe`, `thumb` (the poster frame and `--time`),
/// `thumbnail-cache fill` with every entry checked by GLib, and the desktop's `thumbnailer` entry point.
@Suite(.serialized) struct VideoCommandTests {
    static func json(_ output: Data) throws -> [[String: Any]] {
        try String(decoding: output, as: UTF8.self).split(separator: "\n").map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
    }

    @Test func probeAndThumbReadVideos() throws {
        let binary = try SamplePhotos.darkroomBinary()
        let clip = try VideoDecoderTests.sample("rotated-90.mp4")
        let out = try TemporaryDirectory("video-cli")
        defer { out.remove() }
        // When a clip is probed and thumbnailed, as the poster frame and at 1.5 s
        let probe = try #require(try Self.json(ReferenceTool.run(binary, ["probe", "--json", clip])).first)
        _ = try ReferenceTool.run(binary, ["thumb", clip, "--max-pixel-size", "160", "--out", out.file("poster")])
        _ = try ReferenceTool.run(
            binary, ["thumb", clip, "--max-pixel-size", "160", "--time", "1.5", "--format", "png", "--out", out.path])
        // Then the probe names the video and its turn, and both thumbnails are upright 90×160
        let video = try #require(probe["video"] as? [String: Any])
        #expect(probe["format"] as? String == "video" && video["codec"] as? String == "h264")
        #expect(video["rotation"] as? Int == 90 && probe["orientation"] as? Int == 6)
        let poster = try ImageProber.probe(fileAt: out.file("poster/rotated-90.jpg"))
        #expect(poster.width == 90 && poster.height == 160)
        // And `darkroom fetch` (the pipeline with the video decoder) gives the same upright poster frame
        _ = try ReferenceTool.run(binary, ["fetch", clip, "--max-pixel-size", "160", "--out", out.file("fetched")])
        let fetched = try FileManager.default.contentsOfDirectory(atPath: out.file("fetched"))
        #expect(fetched.count == 1)
        let fetchedProbe = try ImageProber.probe(fileAt: out.file("fetched/" + (fetched.first ?? "none")))
        #expect(fetchedProbe.width == 90 && fetchedProbe.height == 160)
        // And the frame at 1.5 s is ffmpeg's
        var bgra = DecodeOptions()
        bgra.geometry.pixelFormat = .exactly(.bgra8Premultiplied)
        let frame = try ImageDecoder().decode(FileBytes.read(out.file("rotated-90.png")), options: bgra).bitmap
        let reference = try FFmpegReference.frame(clip, time: 1.5, width: 90, height: 160)
        #expect(PixelCompare.psnr(frame, reference) >= 35)
    }

    @Test func theDesktopCacheFillsVideosValidToGLib() throws {
        let binary = try SamplePhotos.darkroomBinary()
        let samples = try VideoDecoderTests.samples.get()
        let directory = try TemporaryDirectory("video-desktop")
        defer { directory.remove() }
        let root = directory.file("thumbnails")
        // When the folder of clips (and the one PNG beside them) is filled into the desktop's cache
        let output = try ReferenceTool.run(
            binary, ["thumbnail-cache", "fill", samples, "--cache-dir", root, "--json"])
        let summary = try #require(try Self.json(output).first)
        // Then every file is rendered, and GLib finds every video's entry valid, with the container's MIME type
        let files = try FileManager.default.contentsOfDirectory(atPath: samples).sorted()
        #expect(summary["rendered"] as? Int == files.count && summary["failed"] as? Int == 0, "\(summary)")
        for name in files where !name.hasSuffix(".png") {
            let path = samples + "/" + name
            let glib = try GIOInfo.attributes(path, cacheHome: directory.path)
            #expect(glib["thumbnail::is-valid"] == "TRUE", "\(name): \(glib)")
            let thumbnail = try #require(glib["thumbnail::path"])
            let text = String(decoding: try FileBytes.read(thumbnail), as: UTF8.self)
            let mime = try VideoDecoder().probe(fileAt: path).video?.mimeType ?? ""
            #expect(text.contains("Thumb::Mimetype\0" + mime), "\(name): \(mime)")
        }
        // And the thumbnailer entry point writes a PNG of a clip from its URI
        let png = directory.file("one.png")
        _ = try ReferenceTool.run(
            binary, ["thumbnailer", "-s", "128", "file://" + samples + "/pan-vp9.webm", png])
        let written = try ImageProber.probe(fileAt: png)
        #expect(written.format == .png && written.width == 128 && written.height == 72)
    }
}
