import DarkroomImage
import DarkroomSupport
import DarkroomTestSupport
import DarkroomVideo
import Foundation
import Testing

@testable import DarkroomWorkers

/// A video's motion, a Motion Photo's clip and a Live Photo's video made in a decode worker, which reads the file by
/// ranges through the descriptor it was handed (and reads a still's clip's header there first): the frames this
/// process makes, pixel for pixel, with their timing; what has no motion is refused here before any worker is asked,
/// and a worker that makes no motion refuses with a typed error.
@Suite(.serialized) struct IsolatedMotionTests {
    @Test(arguments: [("clip.mp4", 0), ("google.jpg", 1), ("live/IMG_0001.HEIC", 1)])
    func motionFromAWorkerIsTheLibrarys(_ name: String, headerReads: Int) throws {
        // Given a video, a Motion Photo whose clip lies inside the still and a Live Photo (a still and the video
        // beside it), and a decoder isolated by one worker
        let path = try MotionPhotoSamples.path(name)
        let pool = try DecodeWorkerPoolTests.pool(workers: 1)
        let isolated = ImageDecoder(isolation: pool)
        let options = DecodeOptions(size: .maxPixelSize(96))
        let preview = MotionPreview(seconds: 1, framesPerSecond: 8)
        // When the preview's frames are made in the worker and here
        let local = try VideoAnimation(motionOfFileAt: path, options: options, preview: preview)
        var expected: [AnimatedFrame] = []
        while let frame = try local.nextFrame() { expected.append(frame) }
        let frames = try VideoAnimation.motion(ofFileAt: path, options: options, preview: preview, decoder: isolated)
        // Then the timing and size are the library's, and every frame is the same, pixel for pixel
        #expect(frames.info == local.info && frames.frameCount == expected.count && expected.count == 8)
        #expect(frames.outputWidth == local.outputWidth && frames.outputHeight == local.outputHeight)
        try IsolatedAnimationTests.expectFrames(of: frames, equal: expected, name)
        // And rewound, its first frame again is the library's
        try frames.rewind()
        let again = try #require(try frames.nextFrame())
        #expect(again.index == 0 && PixelCompare.psnr(again.bitmap, expected[0].bitmap) == .infinity)
        // And the worker is not held between frames, and the animation is let go when the frames go
        #expect(pool.statistics.decodesRunning == 0)
        _ = consume frames
        let statistics = pool.statistics
        #expect(statistics.workersStarted == 1 && statistics.decodesRunning == 0 && statistics.crashes == 0)
        #expect(pool.state.withLock { $0.animations.isEmpty && $0.closing.count == 1 })
        // And a still's clip had its header read there too: the worker answered the header's read, the open, 8
        // frames and the end, the rewind and a frame (the close goes with its next request)
        #expect(statistics.decodes == headerReads + 12, "\(statistics)")
    }

    @Test func aStillWithoutMotionIsRefusedHereAndAWorkerWithoutVideosRefusesTyped() throws {
        // Given a still with no clip and no Live Photo video beside it, and a video
        let still = SamplePhotos.path("jpeg/kite-2560x1600.jpg")
        let video = try MotionPhotoSamples.path("clip.mp4")
        let pool = try DecodeWorkerPoolTests.pool(workers: 1)
        // When the still's motion is asked of an isolated decoder
        let none = #expect(throws: DarkroomImageError.self) {
            try VideoAnimation.motion(ofFileAt: still, decoder: ImageDecoder(isolation: pool))
        }
        // Then it is refused as having no motion, and no worker was asked
        #expect(none?.code == .unsupportedFeature, "\(String(describing: none))")
        #expect(pool.statistics.workersStarted == 0)
        // And a worker built without the video decoder refuses a clip with a typed error, and stays
        let plain = DecodeWorkerPool(
            configuration: .init(executable: try SamplePhotos.builtExecutable("darkroom-test-worker"), workers: 1))
        let refused = #expect(throws: DarkroomImageError.self) {
            try VideoAnimation.motion(ofFileAt: video, decoder: ImageDecoder(isolation: plain))
        }
        #expect(refused?.code == .unsupportedFormat, "\(String(describing: refused))")
        #expect(plain.statistics.crashes == 0 && plain.statistics.workersRunning == 1)
    }
}
