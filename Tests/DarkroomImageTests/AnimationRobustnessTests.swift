import DarkroomSupport
import DarkroomTestSupport
import Testing

@testable import DarkroomImage

/// Broken animations: every frame decoded, or a typed error — never a crash, a hang or a frame of the wrong size.
@Suite("Hostile and broken animations")
struct AnimationRobustnessTests {
    static let samples = [
        "animated/disposal-mixed-480x300.gif", "animated/blend-dispose-480x300-24f.png",
        "animated/pan-kite-640x400-48f-lossy-alpha.webp", "gif/slideshow-480x300-animated.gif",
        "webp/slideshow-480x300-animated.webp",
    ]

    /// Decodes every frame at 48 px; returns the frames decoded, or the error.
    static func outcome(_ bytes: [UInt8]) -> Result<Int, DarkroomImageError> {
        Result { () throws(DarkroomImageError) -> Int in
            let decoder = try AnimatedImageDecoder(bytes, options: DecodeOptions(size: .maxPixelSize(48)))
            var frames = 0
            while let frame = try decoder.nextFrame() {
                #expect(frame.bitmap.width == decoder.outputWidth && frame.bitmap.height == decoder.outputHeight)
                frames += 1
            }
            #expect(frames <= decoder.info.frameCount)
            return frames
        }
    }

    @Test("flipped bytes give frames or a typed error", arguments: samples)
    func flips(sample: String) throws {
        let bytes = try SamplePhotos.bytes(sample)
        var rng = SplitMix64(state: UInt64(bytes.count))
        for _ in 0..<40 {
            // Given 1–8 flipped bytes, half the time in the first 4 KiB where the containers' headers are
            let damaged = ByteFlips.headerBiased(bytes, headerBytes: 4096, using: &rng)
            // When every frame is decoded, then it ends with frames or an error that says what went wrong
            if case .failure(let error) = Self.outcome(damaged) { #expect(!error.message.isEmpty) }
        }
    }

    @Test("cuts at many offsets give the frames before the cut or a typed error", arguments: samples)
    func cuts(sample: String) throws {
        let bytes = try SamplePhotos.bytes(sample)
        for cut in (1...30).map({ bytes.count * $0 / 31 }) + [0, 5, 13, 40] {
            let outcome = Self.outcome(Array(bytes[..<cut]))
            if case .failure(let error) = outcome { #expect(!error.message.isEmpty) }
            if cut < 13 { #expect((try? outcome.get()) == nil, "\(sample) cut at \(cut) decoded") }
        }
    }

    @Test("hostile APNG frames leave the default image, as the specification asks")
    func hostileAPNG() throws {
        let pixel: [UInt8] = [255, 0, 0, 255]
        // A frame larger than the canvas, a zero-sized one, bad dispose and blend operations, after a red first
        // frame that is also the default image
        for frame in [
            AnimationFiles.APNGFrame(x: 0, y: 0, width: 3, height: 1, rgba: pixel + pixel + pixel),
            AnimationFiles.APNGFrame(x: 0, y: 0, width: 0, height: 0, rgba: []),
            AnimationFiles.APNGFrame(width: 1, height: 1, rgba: pixel, dispose: 7),
            AnimationFiles.APNGFrame(width: 1, height: 1, rgba: pixel, blend: 9),
        ] {
            let apng = AnimationFiles.apng(
                width: 2, height: 1, frames: [.init(width: 2, height: 1, rgba: pixel + pixel), frame])
            // When every frame is decoded, then the animation is its default image alone: one frame, no error
            #expect(
                (try? Self.outcome(apng).get()) == 1, "a hostile frame \(frame.width)×\(frame.height) was not refused")
            #expect(try ImageProber.probe(apng).frameCount == 1)
        }
    }
}
