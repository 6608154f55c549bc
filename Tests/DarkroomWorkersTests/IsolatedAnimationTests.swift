import DarkroomImage
import DarkroomSupport
import DarkroomTestSupport
import Foundation
import Testing

@testable import DarkroomWorkers

/// An animation's frames made in a decode worker are the library's frames, in order, with their timing; skipping,
/// rewinding and frame limits behave as in this process, and the worker goes back to the pool when the frames do.
/// Serialized, and at most 12 frames of each sample: every frame is composited at source size in a worker and here,
/// and the suites beside it include timing tests on two cores.
@Suite(.serialized) struct IsolatedAnimationTests {
    static let samples = [
        "animated/disposal-mixed-480x300.gif", "animated/blend-dispose-480x300-24f.png",
        "animated/pan-kite-640x400-48f-lossy-alpha.webp",
    ]

    @Test(arguments: samples)
    func framesFromAWorkerAreTheLibrarys(_ name: String) throws {
        // Given an animation, a decoder isolated by a pool of one worker, and the library's decoder here
        let path = SamplePhotos.path(name)
        let bytes = try SamplePhotos.bytes(path)
        let pool = try DecodeWorkerPoolTests.pool(workers: 1)
        let isolated = ImageDecoder(isolation: pool)
        let options = DecodeOptions(size: .maxPixelSize(160))
        // When its first 12 frames are made in the worker, from the bytes and from the open file, and here
        let local = try AnimatedImageDecoder(bytes, options: options, frameLimit: 12)
        var expected: [AnimatedFrame] = []
        while let frame = try local.nextFrame() { expected.append(frame) }
        // (one source at a time: each holds the pool's one worker until it is released)
        let opens: [() throws -> any AnimationFrameSource] = [
            { try isolated.animation(bytes, options: options, frameLimit: 12) },
            { try isolated.animation(fileAt: path, options: options, frameLimit: 12) },
        ]
        for open in opens {
            let frames = try open()
            // Then the timing, size and count are the library's, and every frame is the same, pixel for pixel
            #expect(frames.info == local.info && frames.frameCount == local.frameCount)
            #expect(frames.outputWidth == local.outputWidth && frames.outputHeight == local.outputHeight)
            try Self.expectFrames(of: frames, equal: expected, name)
            #expect(frames.nextIndex == expected.count)
        }
        // And the worker was given back after each (one worker started, idle again)
        let statistics = pool.statistics
        #expect(statistics.workersStarted == 1 && statistics.workersRunning == 1 && statistics.decodesRunning == 0)
    }

    /// Checks that the rest of `frames` are `expected`, in order, with their durations, pixel for pixel.
    static func expectFrames(of frames: any AnimationFrameSource, equal expected: [AnimatedFrame], _ name: String)
        throws
    {
        var index = 0
        while let frame = try frames.nextFrame() {
            try #require(index < expected.count, "more frames than the library's")
            #expect(frame.index == index && frame.duration == expected[index].duration)
            #expect(PixelCompare.psnr(frame.bitmap, expected[index].bitmap) == .infinity, "\(name) frame \(index)")
            index += 1
        }
        #expect(index == expected.count, "\(name): \(index) of \(expected.count) frames")
    }

    @Test func skippingRewindingAndAFrameLimitAreTheLibrarys() throws {
        // Given an animation of 24 frames, in a worker and here, limited to 10 frames
        let bytes = try SamplePhotos.bytes(SamplePhotos.path("animated/blend-dispose-480x300-24f.png"))
        let pool = try DecodeWorkerPoolTests.pool(workers: 1)
        let options = DecodeOptions(size: .maxPixelSize(120))
        let frames = try ImageDecoder(isolation: pool).animation(bytes, options: options, frameLimit: 10)
        let local = try AnimatedImageDecoder(bytes, options: options, frameLimit: 10)
        #expect(frames.frameCount == 10)
        // When 3 frames are skipped, one made, then all rewound and one made again
        for _ in 0..<3 { #expect(try frames.skipFrame() && local.skipFrame()) }
        let fourth = try #require(try frames.nextFrame())
        let localFourth = try #require(try local.nextFrame())
        try frames.rewind()
        try local.rewind()
        let first = try #require(try frames.nextFrame())
        let localFirst = try #require(try local.nextFrame())
        // Then each is the library's frame, and the limit ends the frames
        #expect(fourth.index == 3 && PixelCompare.psnr(fourth.bitmap, localFourth.bitmap) == .infinity)
        #expect(first.index == 0 && PixelCompare.psnr(first.bitmap, localFirst.bitmap) == .infinity)
        for _ in 1..<10 { #expect(try frames.skipFrame()) }
        #expect(try frames.skipFrame() == false && frames.nextFrame() == nil)
    }

    @Test func aBadAnimationIsATypedErrorAndTheWorkerCarriesOn() throws {
        // Given a pool of one worker, and bytes that are a JPEG (no animation format) and a cut GIF
        let pool = try DecodeWorkerPoolTests.pool(workers: 1)
        let decoder = ImageDecoder(isolation: pool)
        let jpeg = try SamplePhotos.bytes(SamplePhotos.path("jpeg/kite-2560x1600.jpg"))
        // When their frames are asked for, Then the library's typed errors come back
        let notAnimation = #expect(throws: DarkroomImageError.self) {
            try decoder.animation(jpeg, options: DecodeOptions(size: .maxPixelSize(64)))
        }
        #expect(notAnimation?.code == .unsupportedFormat, "\(String(describing: notAnimation))")
        let gif = try SamplePhotos.bytes(SamplePhotos.path("animated/disposal-mixed-480x300.gif"))
        #expect(throws: DarkroomImageError.self) {
            try decoder.animation(Array(gif.prefix(20)), options: DecodeOptions(size: .maxPixelSize(64)))
        }
        // And the one worker makes the next animation's frames, and is the only one started
        let frames = try decoder.animation(gif, options: DecodeOptions(size: .maxPixelSize(64)))
        #expect(try frames.nextFrame() != nil)
        #expect(pool.statistics.workersStarted == 1 && pool.statistics.crashes == 0)
    }

    @Test func manyAnimationsPlayFromOneWorkerBetweenOtherDecodes() throws {
        // Given a pool of one worker and three animations, each opened twice (six sources at once)
        let pool = try DecodeWorkerPoolTests.pool(workers: 1)
        let isolated = ImageDecoder(isolation: pool)
        let options = DecodeOptions(size: .maxPixelSize(96))
        let samples = try Self.samples.map { try SamplePhotos.bytes(SamplePhotos.path($0)) }
        let expected = try samples.map { bytes in
            let local = try AnimatedImageDecoder(bytes, options: options, frameLimit: 6)
            var frames: [AnimatedFrame] = []
            while let frame = try local.nextFrame() { frames.append(frame) }
            return frames
        }
        let sources = try (samples + samples).map { try isolated.animation($0, options: options, frameLimit: 6) }
        // When their frames are asked for in turn, a still decoded in the same worker between rounds
        let still = try SamplePhotos.bytes(SamplePhotos.path("jpeg/kite-2560x1600.jpg"))
        for round in 0..<6 {
            for (i, source) in sources.enumerated() {
                // Then each frame is the library's, whatever the worker made in between
                let frame = try #require(try source.nextFrame(), "source \(i) round \(round)")
                let reference = expected[i % samples.count][round]
                #expect(frame.index == round && PixelCompare.psnr(frame.bitmap, reference.bitmap) == .infinity)
            }
            #expect(try isolated.decode(still, options: DecodeOptions(size: .maxPixelSize(64))).bitmap.width == 64)
        }
        // And one worker did it all, holding no slot between frames
        let statistics = pool.statistics
        #expect(statistics.workersStarted == 1 && statistics.decodesRunning == 0 && statistics.crashes == 0)
        // And once the sources go, releasing them waited for nothing, and the worker's next request closes them there
        _ = consume sources
        #expect(pool.state.withLock { $0.animations.isEmpty && $0.closing.values.joined().count == 6 })
        _ = try isolated.decode(still, options: DecodeOptions(size: .maxPixelSize(32)))
        #expect(pool.state.withLock { $0.closing.isEmpty })
    }

    @Test func animationsPlayedFromSeveralThreadsShareTwoWorkersWithStills() throws {
        // Given a pool of two workers, four threads each playing an animation (opened twice over) and one thread
        // decoding stills
        let pool = try DecodeWorkerPoolTests.pool(workers: 2)
        let isolated = ImageDecoder(isolation: pool)
        let options = DecodeOptions(size: .maxPixelSize(64))
        let bytes = try SamplePhotos.bytes(SamplePhotos.path("animated/pan-kite-640x400-48f-lossy-alpha.webp"))
        let still = try SamplePhotos.bytes(SamplePhotos.path("jpeg/kite-2560x1600.jpg"))
        let expected = try AnimatedImageDecoder(bytes, options: options, frameLimit: 8)
        var frames: [AnimatedFrame] = []
        while let frame = try expected.nextFrame() { frames.append(frame) }
        let reference = frames
        let mismatches = Locked(0)
        let failures = Locked<[String]>([])
        // When they all run at once
        DispatchQueue.concurrentPerform(iterations: 5) { thread in
            do {
                if thread == 4 {
                    for _ in 0..<6 { _ = try isolated.decode(still, options: DecodeOptions(size: .maxPixelSize(48))) }
                    return
                }
                for _ in 0..<2 {
                    let frames = try isolated.animation(bytes, options: options, frameLimit: 8)
                    var index = 0
                    while let frame = try frames.nextFrame() {
                        if PixelCompare.psnr(frame.bitmap, reference[index].bitmap) != .infinity {
                            mismatches.withLock { $0 += 1 }
                        }
                        index += 1
                    }
                    if index != reference.count { mismatches.withLock { $0 += 1 } }
                }
            } catch {
                failures.withLock { $0.append("\(thread): \(error)") }
            }
        }
        // Then every frame is the library's, nothing failed, and the two workers are idle again holding nothing
        #expect(failures.withLock { $0 }.isEmpty, "\(failures.withLock { $0 })")
        #expect(mismatches.withLock { $0 } == 0)
        let statistics = pool.statistics
        #expect(statistics.workersStarted <= 2 && statistics.decodesRunning == 0 && statistics.crashes == 0)
        #expect(pool.state.withLock { $0.animations.isEmpty && $0.ended.isEmpty })
    }

    @Test func aWorkerKilledBetweenFramesCostsItsAnimations() throws {
        // Given an animation whose frames are being made in a worker
        let pool = try DecodeWorkerPoolTests.pool(workers: 1)
        pool.prestart()
        let pid = try #require(pool.idlePIDs.first)
        let bytes = try SamplePhotos.bytes(SamplePhotos.path("animated/pan-kite-640x400-48f-lossy-alpha.webp"))
        let options = DecodeOptions(size: .maxPixelSize(64))
        var frames: (any AnimationFrameSource)? = try ImageDecoder(isolation: pool).animation(bytes, options: options)
        #expect(try frames?.nextFrame() != nil)
        // When its worker, idle between frames, is killed (as a decoder's crash ends it)
        #expect(pool.idlePIDs == [pid])
        kill(pid, SIGKILL)
        // Then the next frame is decoder_crashed, and once the frames are released the crash is counted and a new
        // worker makes the next animation
        let error = #expect(throws: DarkroomImageError.self) { try frames?.nextFrame() }
        #expect(error?.code == .decoderCrashed, "\(String(describing: error))")
        frames = nil
        #expect(pool.statistics.crashes == 1 && pool.statistics.workersRunning == 0)
        let again = try ImageDecoder(isolation: pool).animation(bytes, options: options)
        #expect(try again.nextFrame() != nil && pool.statistics.workersStarted == 2)
    }
}
