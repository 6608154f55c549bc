import Crypto
import DarkroomTestSupport
import Foundation
import Testing

@testable import DarkroomImage

/// The animated decoder against Pillow (GIF, WebP) and the samples' recorded hashes (browser conventions for the
/// GIF, the APNG specification's arithmetic for the APNG).
@Suite struct AnimationDecoderTests {
    /// Every frame of `path` at full size as straight RGBA, by our decoder.
    static func frames(_ bytes: [UInt8], limit: Int? = nil) throws -> (AnimatedImageDecoder, [AnimatedFrame]) {
        let decoder = try AnimatedImageDecoder(
            bytes, options: DecodeOptions(pixelFormat: .exactly(.rgba8)), frameLimit: limit)
        var frames: [AnimatedFrame] = []
        while let frame = try decoder.nextFrame() { frames.append(frame) }
        return (decoder, frames)
    }

    static func rgba(_ bitmap: Bitmap) -> [UInt8] {
        (0..<bitmap.height).flatMap { y in
            Array(UnsafeRawBufferPointer(start: bitmap.row(y), count: bitmap.width * 4))
        }
    }

    /// RGBA with fully transparent pixels zeroed, hashed: the samples' `expected_rgba_sha256`.
    static func hash(_ rgba: [UInt8]) -> String {
        var pixels = rgba
        for i in stride(from: 0, to: pixels.count, by: 4) where pixels[i + 3] == 0 {
            pixels[i] = 0
            pixels[i + 1] = 0
            pixels[i + 2] = 0
        }
        return SHA256.hash(data: pixels).map { String(format: "%02x", $0) }.joined()
    }

    static func sidecar(_ name: String) throws -> [String: Any] {
        let data = try Data(contentsOf: URL(fileURLWithPath: SamplePhotos.path("animated/\(name).json")))
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    @Test(arguments: [
        "animated/pan-kite-640x400-48f.gif", "animated/disposal-mixed-480x300.gif",
        "animated/pan-kite-640x400-48f-lossy.webp", "animated/pan-kite-640x400-48f-lossy-alpha.webp",
        "gif/slideshow-480x300-animated.gif", "webp/slideshow-480x300-animated.webp",
    ])
    func framesTimingAndLoopMatchPillow(_ sample: String) throws {
        // Given a sample and Pillow's reading of it
        let bytes = try SamplePhotos.bytes(sample)
        let pillow = try PillowFrames(path: SamplePhotos.path(sample))
        // When every frame is decoded at full size
        let (decoder, frames) = try Self.frames(bytes)
        // Then count, durations, loop count and every composited frame agree
        #expect(decoder.info.frameCount == pillow.durations.count)
        #expect(decoder.info.durations == pillow.durations)
        #expect(decoder.info.loopCount == pillow.loop)
        #expect(frames.count == pillow.frames.count)
        for (frame, reference) in zip(frames, pillow.frames) {
            let psnr = PixelCompare.psnr(
                PillowFrames.premultiplied(Self.rgba(frame.bitmap)), PillowFrames.premultiplied(reference),
                bytesPerPixel: 4)
            #expect(psnr >= 35, "frame \(frame.index) of \(sample): \(psnr) dB")
        }
    }

    @Test func cinemagraphMatchesItsRecordedTimingAndPillowOnTheFirstFrames() throws {
        // Given the 300-frame GIF
        let name = "cinemagraph-480x300-300f.gif"
        let pillowReads = try #require(try Self.sidecar(name)["pillow_reads"] as? [String: Any])
        let pillow = try PillowFrames(path: SamplePhotos.path("animated/" + name), maxFrames: 24)
        // When it is decoded
        let (decoder, frames) = try Self.frames(try SamplePhotos.bytes("animated/" + name))
        // Then the timing is Pillow's, all 300 frames come out, and the first 24 agree with Pillow's pixels
        #expect(decoder.info.durations == pillowReads["durations_ms"] as? [Int])
        #expect(decoder.info.loopCount == pillowReads["loop"] as? Int)
        #expect(frames.count == 300)
        for (frame, reference) in zip(frames, pillow.frames) {
            #expect(PixelCompare.psnr(Self.rgba(frame.bitmap), reference, bytesPerPixel: 4) >= 35)
        }
    }

    @Test(arguments: ["disposal-mixed-480x300.gif", "blend-dispose-480x300-24f.png"])
    func compositedFramesEqualTheRecordedHashes(_ name: String) throws {
        // Given a sample with one recorded hash per composited frame
        let sidecar = try Self.sidecar(name)
        let expected = try #require(sidecar["expected_rgba_sha256"] as? [String])
        let reads = try #require(sidecar["pillow_reads"] as? [String: Any])
        // When every frame is decoded at full size
        let (decoder, frames) = try Self.frames(try SamplePhotos.bytes("animated/" + name))
        // Then each frame has exactly the recorded bytes, and the timing is what the container says
        #expect(frames.map { Self.hash(Self.rgba($0.bitmap)) } == expected)
        #expect(
            decoder.info.durations == (reads["durations_ms"] as? [Double])?.map { Int($0) } ?? reads["durations_ms"]
                as? [Int])
        #expect(decoder.info.loopCount == reads["loop"] as? Int)
    }

    @Test func theStillDecodeOfAnAnimationIsItsFirstFrame() throws {
        for sample in [
            "animated/blend-dispose-480x300-24f.png", "animated/disposal-mixed-480x300.gif",
            "animated/pan-kite-640x400-48f-lossy-alpha.webp",
        ] {
            // Given an animation
            let bytes = try SamplePhotos.bytes(sample)
            // When it is decoded as a still and as an animation
            let still = try ImageDecoder().decode(
                bytes, options: DecodeOptions(pixelFormat: .exactly(.bgra8Premultiplied)))
            let decoder = try AnimatedImageDecoder(bytes)
            let first = try #require(try decoder.nextFrame())
            // Then the still is the first frame
            #expect(PixelCompare.psnr(still.bitmap, first.bitmap) >= 50, "\(sample)")
        }
    }

    @Test func framesAreScaledAsTheyAreDecodedInOneCanvasOfMemory() throws {
        // Given the 640×400 GIF and WebP
        for sample in [
            "animated/pan-kite-640x400-48f.gif", "animated/pan-kite-640x400-48f-lossy.webp",
            "animated/blend-dispose-480x300-24f.png",
        ] {
            let bytes = try SamplePhotos.bytes(sample)
            let source = try EncodedAnimation(bytes)
            let canvas = source.info.canvasWidth * source.info.canvasHeight * 4
            // When every frame is decoded at 128 px, one at a time
            let (count, meter) = try PixelMemory.measure { () throws(DarkroomImageError) -> Int in
                let decoder = try AnimatedImageDecoder(source, options: DecodeOptions(size: .maxPixelSize(128)))
                var count = 0
                while let frame = try decoder.nextFrame() {
                    #expect(max(frame.bitmap.width, frame.bitmap.height) == 128)
                    count += 1
                }
                return count
            }
            // Then all frames came out, and the decode never held more than two canvases, the output frame and
            // the resampler's rows
            #expect(count == source.info.frameCount)
            let output = 128 * 80 * 4
            #expect(meter.peakBytes <= 2 * canvas + output + 200_000, "\(sample): peak \(meter.peakBytes)")
            #expect(meter.currentBytes == 0)
        }
    }

    @Test func frameLimitsRefuseBeforeAnyPixelMemory() throws {
        let bytes = try SamplePhotos.bytes("animated/cinemagraph-480x300-300f.gif")
        for limits in [DecodeLimits(maxFrames: 299), DecodeLimits(maxAnimationPixels: 480 * 300 * 299)] {
            // Given limits one frame short of the file
            // When the animation is opened
            let (result, meter) = PixelMemory.measure {
                Result { () throws(DarkroomImageError) in
                    try AnimatedImageDecoder(bytes, options: DecodeOptions(limits: limits))
                }
            }
            // Then it is refused as over the limit, having allocated no pixel memory
            #expect(throws: DarkroomImageError.self) { try result.get() }
            if case .failure(let error) = result { #expect(error.code == .limitExceeded) }
            #expect(meter.peakBytes == 0)
        }
        // And one frame more is accepted
        _ = try AnimatedImageDecoder(
            bytes, options: DecodeOptions(limits: DecodeLimits(maxAnimationPixels: 480 * 300 * 300)))
    }

    @Test func aFrameLimitTakesTheFirstFrames() throws {
        let (decoder, frames) = try Self.frames(try SamplePhotos.bytes("animated/disposal-mixed-480x300.gif"), limit: 3)
        #expect(decoder.frameCount == 3)
        #expect(frames.map(\.index) == [0, 1, 2])
    }

    @Test(arguments: ["animated/disposal-mixed-480x300.gif", "animated/blend-dispose-480x300-24f.png"])
    func aTruncatedAnimationYieldsItsCompleteFramesOnly(_ sample: String) throws {
        // Given an animation cut in the middle
        let bytes = try SamplePhotos.bytes(sample)
        let (_, whole) = try Self.frames(bytes)
        let cut = Array(bytes[0..<(bytes.count * 6 / 10)])
        // When it is decoded
        let (decoder, frames) = try Self.frames(cut)
        // Then some frames come out, fewer than all, each equal to the whole file's
        #expect(frames.count > 0 && frames.count < whole.count)
        #expect(decoder.info.frameCount == frames.count)
        for (a, b) in zip(frames, whole) { #expect(Self.rgba(a.bitmap) == Self.rgba(b.bitmap)) }
    }
}
