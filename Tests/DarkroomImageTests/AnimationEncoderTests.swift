import DarkroomTestSupport
import Foundation
import Testing

@testable import DarkroomImage

/// The animated encoders, read back by Pillow.
@Suite struct AnimationEncoderTests {
    @Test(arguments: [ImageFileFormat.webp, .gif])
    func aThumbnailedAnimationReadsBackInPillowWithItsTimingAndPixels(_ format: ImageFileFormat) throws {
        // Given the 14-frame GIF with every disposal, decoded at 128 px
        let bytes = try SamplePhotos.bytes("animated/disposal-mixed-480x300.gif")
        let decoder = try AnimatedImageDecoder(bytes, options: DecodeOptions(size: .maxPixelSize(128)))
        var originals: [AnimatedFrame] = []
        let encoder = try AnimatedImageEncoder(
            format: format, width: decoder.outputWidth, height: decoder.outputHeight, plays: decoder.info.plays,
            options: EncodeOptions(quality: 90))
        // When each frame is added as it is decoded
        while let frame = try decoder.nextFrame() {
            try encoder.add(frame.bitmap, duration: frame.duration)
            originals.append(frame)
        }
        let encoded = try encoder.finish()
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path + "/out." + format.fileExtension
        try Data(encoded).write(to: URL(fileURLWithPath: path))
        // Then Pillow reads the same frame count, durations and loop, and pixels close to what went in
        let pillow = try PillowFrames(path: path)
        #expect(pillow.width == 128 && pillow.height == 80)
        #expect(pillow.durations.count == originals.count)
        // WebP keeps milliseconds; GIF centiseconds (these durations are all multiples of 10)
        #expect(pillow.durations == originals.map(\.duration))
        #expect(pillow.loop == 0)
        var worst = Double.infinity
        for (frame, reference) in zip(originals, pillow.frames) {
            let ours = PillowFrames.premultiplied(try Self.rgba(frame.bitmap))
            worst = min(worst, PixelCompare.psnr(ours, PillowFrames.premultiplied(reference), bytesPerPixel: 4))
        }
        #expect(worst >= (format == .webp ? 30 : 28), "worst frame \(worst) dB")
        // And our own decoder reads it back the same way
        let again = try AnimatedImageDecoder(encoded)
        #expect(again.info.durations == pillow.durations && again.info.plays == 0)
    }

    @Test func playCountsSurviveTheFormatsLoopConventions() throws {
        // Two different frames (libwebp merges identical ones, and one frame is written as a still)
        let first = try TestBitmaps.seeded(width: 8, height: 8, seed: 1)
        let second = try TestBitmaps.seeded(width: 8, height: 8, seed: 2)
        for format in [ImageFileFormat.webp, .gif] {
            for plays in [0, 1, 3] {
                let encoder = try AnimatedImageEncoder(format: format, width: 8, height: 8, plays: plays)
                try encoder.add(first, duration: 50)
                try encoder.add(second, duration: 70)
                let info = try EncodedAnimation(try encoder.finish()).info
                #expect(info.plays == plays, "\(format) plays \(plays)")
                #expect(info.durations == [50, 70])
            }
        }
    }

    @Test func badFramesAreRefused() throws {
        let encoder = try AnimatedImageEncoder(format: .gif, width: 8, height: 8)
        #expect(throws: DarkroomImageError.self) { try encoder.finish() }
        #expect(throws: DarkroomImageError.self) {
            try encoder.add(try TestBitmaps.gradient(9, 8, alpha: false), duration: 10)
        }
        #expect(throws: DarkroomImageError.self) { _ = try AnimatedImageEncoder(format: .png, width: 8, height: 8) }
    }

    static func rgba(_ bitmap: Bitmap) throws -> [UInt8] {
        let converted = try bitmap.converted(to: .rgba8)
        return (0..<converted.height).flatMap { y in
            Array(UnsafeRawBufferPointer(start: converted.row(y), count: converted.width * 4))
        }
    }
}
