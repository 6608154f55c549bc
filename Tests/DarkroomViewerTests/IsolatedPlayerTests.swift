import Darkroom
import DarkroomImage
import DarkroomTestSupport
import DarkroomVideo
import DarkroomWorkers
import Foundation
import Testing

@testable import DarkroomViewer

/// The viewer's players make their frames in decode workers when its decodes are isolated (the default): a grid
/// cell's animation (the pipeline's `AnimatedImage`) and the large view's motion, frame for frame what the viewer
/// makes itself, from a pool of one worker that none of them holds between frames.
@Suite(.serialized) struct IsolatedPlayerTests {
    static func pool() throws -> DecodeWorkerPool {
        DecodeWorkerPool(
            configuration: .init(executable: try SamplePhotos.builtExecutable("darkroom-worker"), workers: 1))
    }

    /// Every frame `player` has buffered once it stops decoding, in order.
    static func frames(of player: AnimationPlayer, count: Int) async -> [AnimatedFrame] {
        player.prepare()
        _ = await eventually { !player.isDecoding }
        var frames: [AnimatedFrame] = []
        var time = 0.0
        for _ in 0..<count {
            guard let frame = player.frame(at: time + 0.0005) else { break }
            frames.append(frame)
            time += Double(frame.duration) / 1000
        }
        return frames
    }

    @Test func aGridCellsAnimationPlaysFromAWorker() async throws {
        // Given an animated GIF loaded as an animation by a pipeline that decodes in one worker, and by one that
        // decodes here
        let pool = try Self.pool()
        var isolated = ImagePipeline.Configuration()
        isolated.decoder.isolation = pool
        let request = ImageRequest(
            source: .file(SamplePhotos.path("animated/pan-kite-640x400-48f.gif")), size: .maxPixelSize(96),
            options: .animated)
        let there = try #require(try await ImagePipeline(configuration: isolated).image(for: request).container)
        let here = try #require(try await ImagePipeline(configuration: .init()).image(for: request).container)
        // When each one's player decodes every frame into a buffer that keeps them all
        let budget = 48 * 96 * 60 * 4
        let theirs = await Self.frames(of: try #require(there.animation).makePlayer(budgetBytes: budget), count: 48)
        let ours = await Self.frames(of: try #require(here.animation).makePlayer(budgetBytes: budget), count: 48)
        // Then the worker's frames are the viewer's, pixel for pixel, and the worker made them and is not held
        #expect(theirs.count == 48 && ours.count == 48)
        for (a, b) in zip(theirs, ours) {
            #expect(a.index == b.index && PixelCompare.psnr(a.bitmap, b.bitmap) == .infinity, "frame \(a.index)")
        }
        let statistics = pool.statistics
        #expect(statistics.decodes > 48 && statistics.decodesRunning == 0 && statistics.crashes == 0, "\(statistics)")
    }

    @Test func theLargeViewsMotionPlaysFromAWorker() async throws {
        // Given a Motion Photo, and the large view's player of its motion made with one worker and without
        let path = try MotionPhotoSamples.path("google.jpg")
        let pool = try Self.pool()
        let budget = 64 << 20
        let there = try #require(
            try LargeView.motionPlayer(for: path, width: 160, height: 120, budgetBytes: budget, isolation: pool))
        let here = try #require(try LargeView.motionPlayer(for: path, width: 160, height: 120, budgetBytes: budget))
        // When each decodes its frames
        let theirs = await Self.frames(of: there, count: 60)
        let ours = await Self.frames(of: here, count: 60)
        // Then they are the same frames (the clip's 2 s at 30 fps), and the worker read the clip and made them
        #expect(theirs.count == 60 && ours.count == 60)
        for (a, b) in zip(theirs, ours) {
            #expect(a.index == b.index && PixelCompare.psnr(a.bitmap, b.bitmap) == .infinity, "frame \(a.index)")
        }
        #expect(pool.statistics.decodes > 60 && pool.statistics.crashes == 0, "\(pool.statistics)")
    }
}
