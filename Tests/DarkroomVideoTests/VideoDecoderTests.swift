import DarkroomImage
import DarkroomSupport
import DarkroomTestSupport
import Foundation
import Testing

@testable import DarkroomVideo

/// Video frames at display size against FFmpeg's own tools: the probe against ffprobe, frames against the `ffmpeg`
/// command's decode of the same frame scaled with Lanczos, rotation and non-square pixels as ffmpeg shows them, the
/// poster frame past black, HLG against the still-image HDR path, and damaged files.
@Suite(.serialized) struct VideoDecoderTests {
    /// The clips (`scripts/make-video-samples.py`): a pan across a real photo in every container and codec.
    static let samples = PythonReference.folder(
        "video", madeBy: "scripts/make-video-samples.py",
        runs: [[SamplePhotos.path("jpeg/kite-2560x1600.jpg")]])

    static func sample(_ name: String) throws -> String { try samples.get() + "/" + name }

    static let clips = [
        "pan-h264.mp4", "pan-hevc10.mov", "pan-vp9.webm", "pan-vp8.webm", "pan-av1.mkv", "pan-mpeg4.avi",
        "pan-h263.3gp",
    ]

    /// BGRA options fitting `side`, at `time` (nil: the poster frame).
    static func options(_ side: Int, time: Double? = nil) -> DecodeOptions {
        var options = DecodeOptions(size: .maxPixelSize(side))
        options.geometry.pixelFormat = .exactly(.bgra8Premultiplied)
        options.geometry.time = time
        return options
    }

    /// ffprobe's reading of the first video stream: codec, size, pixel aspect, frame rate, rotation, duration.
    static func ffprobe(_ path: String) throws -> [String: Any] {
        let json = try ReferenceTool.run(
            "ffprobe",
            [
                "-v", "error", "-select_streams", "v:0", "-show_entries",
                "stream=codec_name,width,height,sample_aspect_ratio,avg_frame_rate:stream_side_data=rotation:format=duration",
                "-of", "json", path,
            ])
        let object = try #require(try JSONSerialization.jsonObject(with: json) as? [String: Any])
        let stream = try #require((object["streams"] as? [[String: Any]])?.first)
        var result = stream
        result["duration"] = Double((object["format"] as? [String: Any])?["duration"] as? String ?? "")
        let side = (stream["side_data_list"] as? [[String: Any]])?.first
        result["rotation"] = side?["rotation"] as? Int ?? 0
        return result
    }

    static func rate(_ fraction: String) -> Double {
        let parts = fraction.split(separator: "/").compactMap { Double($0) }
        return parts.count == 2 && parts[1] > 0 ? parts[0] / parts[1] : 0
    }

    // MARK: Probe

    @Test(arguments: clips + ["rotated-90.mp4", "rotated-270.mp4", "anamorphic.mp4"])
    func probeAgreesWithFFprobe(_ name: String) throws {
        // Given a clip and ffprobe's reading of it
        let path = try Self.sample(name)
        let reference = try Self.ffprobe(path)
        // When Darkroom probes it (the file, and the same bytes through the image decoder's seam)
        let probe = try VideoDecoder().probe(fileAt: path)
        let bytes = try FileBytes.read(path)
        let viaSeam = try bytes.withUnsafeBytes { try VideoDecoder().probe($0, limits: .default) }
        // Then the codec, coded size, pixel aspect, frame rate, rotation and duration are ffprobe's
        let video = try #require(probe.video)
        #expect(probe.format == .video)
        #expect(video.codec == reference["codec_name"] as? String)
        #expect(video.codedWidth == reference["width"] as? Int)
        #expect(video.codedHeight == reference["height"] as? Int)
        let sar = (reference["sample_aspect_ratio"] as? String ?? "1:1").split(separator: ":").compactMap { Int($0) }
        #expect(video.pixelAspect == (sar == [0, 1] ? [1, 1] : sar))
        #expect(abs((video.frameRate ?? 0) - Self.rate(reference["avg_frame_rate"] as? String ?? "")) < 0.01)
        #expect(abs((video.duration ?? 0) - (reference["duration"] as? Double ?? -1)) < 0.1)
        // ffprobe's rotation is the display matrix's counter-clockwise angle; Darkroom's the clockwise turn
        #expect(video.rotation == (360 - (reference["rotation"] as? Int ?? 0)) % 360)
        #expect(probe.width == video.codedWidth * video.pixelAspect[0] / video.pixelAspect[1])
        #expect(viaSeam == probe)
    }

    @Test func probeNamesContainerAudioAndDepth() throws {
        // Given an MP4 with audio, an iPhone-style 10-bit HEVC MOV and a WebM
        let h264 = try VideoDecoder().probe(fileAt: Self.sample("pan-h264.mp4"))
        let hevc = try VideoDecoder().probe(fileAt: Self.sample("pan-hevc10.mov"))
        let webm = try VideoDecoder().probe(fileAt: Self.sample("pan-vp9.webm"))
        // Then each names its container, MIME type, audio and bit depth
        #expect(h264.video?.fileExtension == "mp4" && h264.video?.hasAudio == true && h264.bitDepth == 8)
        #expect(hevc.video?.fileExtension == "mov" && hevc.video?.mimeType == "video/quicktime")
        #expect(hevc.bitDepth == 10 && hevc.video?.hasAudio == false && hevc.hdr == nil)
        #expect(webm.video?.fileExtension == "webm" && webm.video?.mimeType == "video/webm")
    }

    // MARK: Frames against ffmpeg

    @Test(arguments: clips)
    func frameAtATimeMatchesFFmpeg(_ name: String) throws {
        // Given a clip and a time between keyframes (the decode runs from the keyframe before it)
        let path = try Self.sample(name)
        for time in [1.5, 2.2] {
            // When Darkroom decodes the frame at that time to 320 px
            let image = try VideoDecoder().decode(fileAt: path, options: Self.options(320, time: time))
            // Then it is ffmpeg's decode of the same frame scaled with Lanczos, within 35 dB
            let reference = try FFmpegReference.frame(
                path, time: time, width: image.bitmap.width, height: image.bitmap.height)
            let psnr = PixelCompare.psnr(image.bitmap, reference)
            print("\(name) at \(time) s: \(image.bitmap.width)×\(image.bitmap.height), \(psnr) dB against ffmpeg")
            #expect(psnr >= 35, "\(name) at \(time) s: \(psnr) dB")
        }
    }

    @Test(arguments: ["rotated-90.mp4", "rotated-270.mp4", "anamorphic.mp4"])
    func rotationAndPixelAspectAreFFmpegs(_ name: String) throws {
        // Given a clip turned by its display matrix, or one with 4:3 pixels
        let path = try Self.sample(name)
        // When Darkroom decodes a frame to 320 px
        let image = try VideoDecoder().decode(fileAt: path, options: Self.options(320, time: 1.5))
        // Then it is upright and as wide as ffmpeg shows it: 180×320 turned, 320×180 with square pixels
        let expected = name.hasPrefix("rotated") ? (180, 320) : (320, 180)
        #expect(image.bitmap.width == expected.0 && image.bitmap.height == expected.1)
        let reference = try FFmpegReference.frame(path, time: 1.5, width: expected.0, height: expected.1)
        let psnr = PixelCompare.psnr(image.bitmap, reference)
        print("\(name): \(psnr) dB against ffmpeg")
        #expect(psnr >= 35, "\(name): \(psnr) dB")
    }

    @Test func aCropFillsFromTheFramesMiddle() throws {
        // Given the 1080p clip
        let path = try Self.sample("pan-h264.mp4")
        // When Darkroom fills a 200×200 square from the frame at 1.5 s
        var options = Self.options(200, time: 1.5)
        options.geometry.size = .fill(width: 200, height: 200)
        let image = try VideoDecoder().decode(fileAt: path, options: options)
        // Then it is ffmpeg's frame cropped to its middle 1080×1080 and scaled
        let out = try TemporaryDirectory.make("video-crop") + "/frame.png"
        _ = try ReferenceTool.run(
            "ffmpeg",
            [
                "-v", "error", "-nostdin", "-y", "-ss", "1.5", "-i", path, "-frames:v", "1", "-vf",
                "crop=1080:1080,scale=200:200:flags=lanczos+accurate_rnd+full_chroma_int", "-pix_fmt", "rgb24", out,
            ])
        var bgra = DecodeOptions()
        bgra.geometry.pixelFormat = .exactly(.bgra8Premultiplied)
        let reference = try ImageDecoder().decode(FileBytes.read(out), options: bgra).bitmap
        #expect(image.bitmap.width == 200 && image.bitmap.height == 200)
        let psnr = PixelCompare.psnr(image.bitmap, reference)
        #expect(psnr >= 35, "\(psnr) dB")
    }

    // MARK: The poster frame

    @Test func thePosterFrameIsAKeyframeNearATenth() throws {
        // Given a 4-second clip with a keyframe every second
        let path = try Self.sample("pan-h264.mp4")
        // When Darkroom picks the poster frame
        let image = try VideoDecoder().decode(fileAt: path, options: Self.options(256))
        // Then it is the keyframe at or before 0.4 s: the first frame, as ffmpeg decodes it
        let reference = try FFmpegReference.frame(path, time: 0, width: image.bitmap.width, height: image.bitmap.height)
        #expect(PixelCompare.psnr(image.bitmap, reference) >= 35)
    }

    @Test func thePosterFrameIsNeverBlackWhenTheClipShowsSomething() throws {
        // Given a clip whose first two seconds are black (the tenth and the quarter fall in them)
        let path = try Self.sample("black-start.mp4")
        // When Darkroom picks the poster frame
        let image = try VideoDecoder().decode(fileAt: path, options: Self.options(256))
        // Then it is not blank, and it is the first keyframe of the pan (2 s), as ffmpeg decodes it
        let look = FrameLook(image.bitmap)
        #expect(!look.isBlank && look.detail > 20 && look.mean > 30, "mean \(look.mean), detail \(look.detail)")
        let reference = try FFmpegReference.frame(path, time: 2, width: image.bitmap.width, height: image.bitmap.height)
        #expect(PixelCompare.psnr(image.bitmap, reference) >= 35)
        // And the frame at 1 s is black, so the skip is what found it
        let black = try VideoDecoder().decode(fileAt: path, options: Self.options(256, time: 1))
        #expect(FrameLook(black.bitmap).isBlank)
    }

    // MARK: HDR

    @Test func anHLGClipIsToneMappedAsAnHLGPhotoIs() throws {
        // Given a 10-bit HEVC clip tagged BT.2020 HLG, and its frame at 1 s decoded by ffmpeg as a 16-bit HLG PNG
        let clip = try Self.sample("hlg.mov")
        let still = try Self.sample("hlg-frame-1.png")
        // When Darkroom decodes the frame from the clip, and the PNG as a still HDR image
        let image = try VideoDecoder().decode(fileAt: clip, options: Self.options(320, time: 1))
        let photo = try ImageDecoder().decode(FileBytes.read(still), options: Self.options(320))
        // Then the probe says HLG, both are tone-mapped to SDR, and they agree
        #expect(image.probe.hdr?.transfer == "hlg" && image.probe.hdr?.primaries == 9)
        #expect(image.convertedToSRGB && photo.convertedToSRGB)
        let psnr = PixelCompare.psnr(image.bitmap, photo.bitmap)
        print("HLG clip against the HLG still: \(psnr) dB")
        #expect(psnr >= 35, "\(psnr) dB")
    }

    // MARK: The seam

    @Test func theImageDecoderReadsVideosThroughItsCustomDecoders() throws {
        // Given a clip's bytes
        let bytes = try FileBytes.read(Self.sample("pan-vp9.webm"))
        // When the plain image decoder and one with the video decoder read them
        let plain = #expect(throws: DarkroomImageError.self) { try ImageDecoder().decode(bytes) }
        let image = try VideoDecoder.imageDecoder.decode(bytes, options: Self.options(200, time: 1.5))
        // Then the plain one names the video and the module that reads it; the other decodes the frame
        #expect(plain?.code == .unsupportedFormat && plain?.message.contains("VideoDecoder") == true)
        #expect(image.probe.format == .video && image.bitmap.width == 200 && image.bitmap.height == 113)
        let direct = try VideoDecoder().decode(
            fileAt: Self.sample("pan-vp9.webm"), options: Self.options(200, time: 1.5))
        #expect(PixelCompare.psnr(image.bitmap, direct.bitmap) == .infinity)
    }

    @Test func grayOutputIsTheFramesLuma() throws {
        // Given the VP9 clip
        let path = try Self.sample("pan-vp9.webm")
        // When Darkroom decodes a frame as gray and as BGRA
        var gray = Self.options(200, time: 1.5)
        gray.geometry.pixelFormat = .exactly(.gray8)
        let luma = try VideoDecoder().decode(fileAt: path, options: gray).bitmap
        let color = try VideoDecoder().decode(fileAt: path, options: Self.options(200, time: 1.5)).bitmap
        // Then the gray one is one byte a pixel and close to the colour one's gray
        #expect(luma.format == .gray8)
        #expect(PixelCompare.psnr(luma, try color.converted(to: .gray8)) >= 35)
    }
}
