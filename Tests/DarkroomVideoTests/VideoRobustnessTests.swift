import DarkroomImage
import DarkroomSupport
import DarkroomTestSupport
import Foundation
import Testing

@testable import DarkroomVideo

/// Damaged, truncated and hostile videos, and the limits: a typed error or the last good frame, never a crash or a
/// hang.
@Suite(.serialized) struct VideoRobustnessTests {
    static func sample(_ name: String) throws -> String { try VideoDecoderTests.sample(name) }

    /// Decodes `bytes` as the image decoder's seam does: a bitmap or a ``DarkroomImageError``, nothing else.
    static func decode(_ bytes: [UInt8], options: DecodeOptions = DecodeOptions(size: .maxPixelSize(128)))
        -> Result<Bitmap, DarkroomImageError>
    {
        bytes.withUnsafeBytes { raw in
            Result { () throws(DarkroomImageError) in
                try VideoDecoder.imageDecoder.decode(raw, options: options).bitmap
            }
        }
    }

    @Test(arguments: ["pan-h264.mp4", "pan-vp9.webm", "pan-mpeg4.avi", "pan-hevc10.mov"])
    func aCutFileGivesATypedErrorOrAFrame(_ name: String) throws {
        // Given a clip cut at several lengths
        let bytes = try FileBytes.read(Self.sample(name))
        for fraction in [0.001, 0.01, 0.1, 0.5, 0.9] {
            let cut = Array(bytes.prefix(max(16, Int(Double(bytes.count) * fraction))))
            // When it is decoded
            let result = Self.decode(cut)
            // Then it is a frame or a typed error with a message
            if case .failure(let error) = result {
                #expect(!error.message.isEmpty)
                #expect(error.code != .invalidArgument, "\(name) cut to \(fraction): \(error)")
            }
        }
    }

    @Test(arguments: ["pan-h264.mp4", "pan-vp9.webm", "pan-av1.mkv", "pan-mpeg4.avi"])
    func damagedBytesGiveATypedErrorOrAFrame(_ name: String) throws {
        // Given a clip with bytes flipped, in the header half the time
        let bytes = try FileBytes.read(Self.sample(name))
        var rng = SplitMix64(state: 37)
        for _ in 0..<12 {
            let damaged = ByteFlips.headerBiased(bytes, headerBytes: 4096, using: &rng)
            // When it is decoded, as a poster frame and at a time
            for time in [nil, 2.5] {
                var options = DecodeOptions(size: .maxPixelSize(96))
                options.geometry.time = time
                // Then it is a frame or a typed error (no crash, no hang)
                if case .success(let bitmap) = Self.decode(damaged, options: options) {
                    #expect(bitmap.width > 0 && bitmap.height > 0)
                }
            }
        }
    }

    @Test func aContainerHeaderWithNothingBehindItIsAnError() throws {
        // Given an MP4 `ftyp` box, a Matroska EBML magic and an AVI RIFF header, each followed by garbage
        var rng = SplitMix64(state: 5)
        let garbage = (0..<4000).map { _ in UInt8.random(in: 0...255, using: &rng) }
        let heads: [[UInt8]] = [
            [0, 0, 0, 20] + Array("ftypisom".utf8) + [0, 0, 2, 0] + Array("isom".utf8),
            [0x1A, 0x45, 0xDF, 0xA3, 0x80],
            Array("RIFF".utf8) + [0, 16, 0, 0] + Array("AVI LIST".utf8),
        ]
        for head in heads {
            // When each is decoded
            let result = Self.decode(head + garbage)
            // Then the decode fails with a typed error naming the problem
            guard case .failure(let error) = result else {
                Issue.record("garbage after \(head.prefix(8)) decoded")
                continue
            }
            #expect(
                [DarkroomImageError.Code.corrupt, .unsupportedFeature, .truncated, .unsupportedFormat].contains(
                    error.code), "\(error)")
        }
    }

    @Test func otherStreamingFormatsAreNotOpened() throws {
        // Given an HLS playlist naming a local file, and an MPEG transport stream (formats FFmpeg reads that
        // Darkroom does not let it)
        let directory = try TemporaryDirectory.make("video-hostile")
        defer { TemporaryDirectory.remove(directory) }
        let playlist = Array("#EXTM3U\n#EXT-X-TARGETDURATION:1\n#EXTINF:1,\nfile:///etc/passwd\n".utf8)
        let ts = directory + "/clip.ts"
        _ = try ReferenceTool.run(
            "ffmpeg", ["-v", "error", "-nostdin", "-y", "-i", Self.sample("pan-mpeg4.avi"), "-c", "copy", ts])
        // When each is decoded
        for bytes in [playlist, try FileBytes.read(ts)] {
            // Then neither is recognized as a video
            guard case .failure(let error) = Self.decode(bytes) else {
                Issue.record("decoded a format outside the list")
                continue
            }
            #expect(error.code == .unsupportedFormat, "\(error)")
        }
    }

    @Test func aCodecOffTheListOrNoVideoAtAllSaysSo() throws {
        // Given a Matroska file of Theora video, an AVI of FFV1 and a Matroska file with audio only
        let directory = try TemporaryDirectory.make("video-codecs")
        defer { TemporaryDirectory.remove(directory) }
        let make: [(String, [String])] = [
            ("theora.mkv", ["-f", "lavfi", "-i", "testsrc2=size=160x120:duration=1", "-c:v", "libtheora"]),
            ("ffv1.avi", ["-f", "lavfi", "-i", "testsrc2=size=160x120:duration=1", "-c:v", "ffv1"]),
            ("audio.mkv", ["-f", "lavfi", "-i", "sine=duration=1", "-c:a", "libvorbis"]),
        ]
        for (name, arguments) in make {
            _ = try ReferenceTool.run(
                "ffmpeg", ["-v", "error", "-nostdin", "-y"] + arguments + [directory + "/" + name])
            // When each is decoded
            let error = #expect(throws: DarkroomImageError.self) {
                try VideoDecoder().decode(fileAt: directory + "/" + name)
            }
            // Then the error is typed and names the codec, or the missing video
            #expect(error?.code == .unsupportedFeature, "\(name): \(String(describing: error))")
            let why = name == "audio.mkv" ? "no video stream" : String(name.prefix { $0 != "." })
            #expect(error?.message.contains(why) == true, "\(name): \(String(describing: error))")
        }
    }

    @Test func everyLimitIsAConfigurationValue() throws {
        let path = try Self.sample("pan-h264.mp4")
        // Given limits below what the 1080p clip needs
        var pixels = DecodeOptions(size: .maxPixelSize(128))
        pixels.limits.maxSourcePixels = 1920 * 1080 - 1
        var time = DecodeOptions(size: .maxPixelSize(128))
        time.limits.maxVideoDecodeSeconds = 0
        var dimension = DecodeOptions(size: .maxPixelSize(128))
        dimension.limits.maxDimension = 1000
        var packets = DecodeOptions(size: .maxPixelSize(128))
        packets.limits.maxVideoPacketsPerFrame = 1
        packets.geometry.time = 3.9
        for options in [pixels, time, dimension] {
            // When it is decoded
            // Then the decode stops with `.limitExceeded`
            let error = #expect(throws: DarkroomImageError.self) {
                try VideoDecoder().decode(fileAt: path, options: options)
            }
            #expect(error?.code == .limitExceeded, "\(String(describing: error))")
        }
        // And one packet a frame is too few to reach any frame
        let error = #expect(throws: DarkroomImageError.self) {
            try VideoDecoder().decode(fileAt: path, options: packets)
        }
        #expect(error?.code == .limitExceeded)
    }

    @Test func aFrameBudgetShowsTheLastGoodFrame() throws {
        // Given the clip (a keyframe a second) and a budget of 5 frames to reach 3.9 s from the keyframe at 3 s
        let path = try Self.sample("pan-h264.mp4")
        var options = DecodeOptions(size: .maxPixelSize(256))
        options.geometry.pixelFormat = .exactly(.bgra8Premultiplied)
        options.geometry.time = 3.9
        options.limits.maxVideoFramesDecoded = 5
        // When the frame at 3.9 s is asked for
        let image = try VideoDecoder().decode(fileAt: path, options: options)
        // Then a frame short of 3.9 s is shown, as ffmpeg decodes it: the last the budget reached, the fifth decoded
        // from the keyframe (3 s + 4/30 s) or later, since frames nothing refers to and nothing shows are skipped
        // undecoded and not counted
        let references = try FFmpegReference.frames(
            path, from: 3 + 4.0 / 30, count: 23, width: image.bitmap.width, height: image.bitmap.height)
        var best = (frame: 0, psnr: 0.0)
        for (index, reference) in references.enumerated() {
            let psnr = PixelCompare.psnr(image.bitmap, reference)
            if psnr > best.psnr { best = (4 + index, psnr) }
        }
        #expect(best.psnr >= 35, "frame \(best.frame): \(best.psnr) dB")
        print("frame budget of 5 reached frame \(best.frame) after the keyframe (\(best.psnr) dB)")
    }

    @Test func aMissingOrEmptyFileIsATypedError() throws {
        let directory = try TemporaryDirectory.make("video-missing")
        defer { TemporaryDirectory.remove(directory) }
        _ = FileManager.default.createFile(atPath: directory + "/empty.mp4", contents: Data())
        // Given no file, and an empty one
        // When each is decoded
        let missing = #expect(throws: DarkroomImageError.self) {
            try VideoDecoder().decode(fileAt: directory + "/none.mp4")
        }
        let empty = #expect(throws: DarkroomImageError.self) {
            try VideoDecoder().decode(fileAt: directory + "/empty.mp4")
        }
        // Then the errors say so
        #expect(missing?.code == .notFound)
        #expect(empty?.code == .unsupportedFormat)
    }
}
