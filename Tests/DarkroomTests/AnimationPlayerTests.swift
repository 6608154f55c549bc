import DarkroomCache
import DarkroomImage
import DarkroomSupport
import DarkroomTestSupport
import Foundation
import Testing

@testable import Darkroom

/// The animation player on a simulated clock: timing, the frame budget, falling behind, memory pressure, and
/// animated requests through the pipeline.
@Suite("Animation player", .timeLimit(.minutes(5)))
struct AnimationPlayerTests {
    static let tick = 1.0 / 60

    static func player(_ sample: String, size: Int = 64, budgetFrames: Int) throws -> AnimationPlayer {
        let animation = try EncodedAnimation(try SamplePhotos.bytes(sample))
        let options = DecodeOptions(size: .maxPixelSize(size))
        let frameBytes =
            try AnimatedImageDecoder(animation, options: options).outputWidth
            * AnimatedImageDecoder(animation, options: options).outputHeight * 4
        return try AnimationPlayer(animation, options: options, budgetBytes: budgetFrames * frameBytes)
    }

    /// Plays `seconds` at 60 Hz, waiting before each tick until decoding is idle (a player that keeps up);
    /// returns the frame index shown at each tick.
    static func playKeepingUp(_ player: AnimationPlayer, seconds: Double) async -> [Int?] {
        var shown: [Int?] = []
        player.prepare()
        for n in 0..<Int(seconds * 60) {
            _ = await eventually { !player.isDecoding }
            shown.append(player.frame(at: Double(n) * tick)?.index)
        }
        return shown
    }

    @Test("keeps time on a simulated clock and drops no frame when decoding keeps up")
    func keepsTime() async throws {
        // Given the 14-frame GIF (one 0 ms delay, played as 100 ms) and a buffer of 4 frames
        let player = try Self.player("animated/disposal-mixed-480x300.gif", budgetFrames: 4)
        let info = player.info
        // When two loops are played at 60 Hz
        let loop = Double(info.totalDisplayDuration) / 1000
        let shown = await Self.playKeepingUp(player, seconds: loop * 2)
        // Then every frame is shown in order, for its display duration (to the tick), and nothing is skipped or late
        var runs: [(index: Int, ticks: Int)] = []
        for index in shown {
            let index = try #require(index)
            if runs.last?.index == index { runs[runs.count - 1].ticks += 1 } else { runs.append((index, 1)) }
        }
        #expect(runs.map(\.index) == Array(0..<14) + Array(0..<14))
        for run in runs.dropLast() {
            let expected = Double(info.displayDuration(ofFrame: run.index)) * 60 / 1000
            #expect(abs(Double(run.ticks) - expected) <= 1, "frame \(run.index): \(run.ticks) ticks, \(expected)")
        }
        let statistics = player.statistics
        #expect(statistics.framesSkipped == 0 && statistics.lateLookups == 0)
        #expect(statistics.framesShown == 28)
        // And the buffer never held more than its budget
        #expect(statistics.peakBufferedBytes <= statistics.budgetBytes)
        #expect(statistics.peakBufferedBytes > 0)
    }

    @Test("a budget that holds every frame decodes each once, whatever the loops")
    func keepsAllFramesWhenTheyFit() async throws {
        let player = try Self.player("animated/disposal-mixed-480x300.gif", budgetFrames: 20)
        let loop = Double(player.info.totalDisplayDuration) / 1000
        _ = await Self.playKeepingUp(player, seconds: loop * 3)
        let statistics = player.statistics
        #expect(statistics.framesDecoded == 14)
        #expect(statistics.framesShown == 14 * 3 && statistics.framesSkipped == 0)
        #expect(statistics.bufferedBytes == 14 * 64 * 40 * 4)
    }

    @Test("a player that falls behind skips frames instead of stalling, and counts them")
    func fallsBehind() async throws {
        // Given the 300-frame GIF with a 3-frame buffer, started and ready
        let player = try Self.player("animated/cinemagraph-480x300-300f.gif", budgetFrames: 3)
        player.prepare()
        #expect(await eventually { !player.isDecoding })
        #expect(player.frame(at: 0)?.index == 0)
        // When the clock jumps 2 s (50 frames of 40 ms) ahead
        let late = player.frame(at: 2.0)
        // Then the lookup does not wait: it answers the frame on screen, and counts a late lookup
        #expect(late?.index == 0)
        #expect(player.statistics.lateLookups == 1)
        // And once decoding catches up, the frame due is shown and the frames in between were skipped, not resampled
        #expect(await eventually { !player.isDecoding })
        #expect(player.frame(at: 2.0)?.index == 50)
        let statistics = player.statistics
        #expect(statistics.framesSkipped == 49)
        #expect(statistics.framesDecoded < 10)
    }

    @Test("memory pressure shrinks the buffer: warning halves it, critical keeps one frame")
    func memoryPressure() async throws {
        let player = try Self.player("animated/pan-kite-640x400-48f.gif", budgetFrames: 8)
        player.prepare()
        #expect(await eventually { !player.isDecoding })
        let full = player.statistics
        #expect(full.bufferedBytes == full.budgetBytes)
        player.respond(to: .warning)
        #expect(player.statistics.budgetBytes == full.budgetBytes / 2)
        #expect(player.statistics.bufferedBytes <= full.budgetBytes / 2)
        player.respond(to: .critical)
        #expect(player.statistics.bufferedBytes <= full.budgetBytes / 8)
        // And it still plays, one frame ahead at most: the next frame is decoded once the playhead leaves this one
        #expect(player.frame(at: 0)?.index == 0)
        _ = player.frame(at: 0.05)
        #expect(await eventually { !player.isDecoding })
        #expect(player.frame(at: 0.05)?.index == 1)
    }

    @Test("the default budget follows YYImage's rule")
    func defaultBudget() {
        let gib = 1 << 30
        #expect(AnimationPlayer.defaultBudget(for: nil) == 10 << 20)
        #expect(
            AnimationPlayer.defaultBudget(for: MemoryStatus(totalBytes: 8 * gib, memAvailableBytes: 4 * gib))
                == 8 * gib / 5)
        #expect(
            AnimationPlayer.defaultBudget(for: MemoryStatus(totalBytes: 8 * gib, memAvailableBytes: gib)) == gib * 3 / 5
        )
        #expect(
            AnimationPlayer.defaultBudget(for: MemoryStatus(totalBytes: 8 * gib, memAvailableBytes: 1 << 20)) == 10
                << 20)
        #expect(AnimationPlayer.clampedBudget(1 << 40, 1000) == 512_000)
        #expect(AnimationPlayer.clampedBudget(1, 1000) == 1000)
    }

    @Test("the pipeline loads an animated request once for concurrent callers, caches it, and its player plays")
    func pipelineAnimatedRequests() async throws {
        // Given a pipeline and the 48-frame GIF on disk
        let pipeline = makePipeline()
        let path = SamplePhotos.path("animated/pan-kite-640x400-48f.gif")
        let request = ImageRequest(source: .file(path), size: .maxPixelSize(96), options: .animated)
        // When three callers ask for it as an animation at once, and one as a still
        let responses = try await withThrowingTaskGroup(of: ImageResponse.self) { group in
            for _ in 0..<3 { group.addTask { try await pipeline.image(for: request) } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        let still = try await pipeline.image(for: ImageRequest(source: .file(path), size: .maxPixelSize(96)))
        // Then one decode served the three, each carrying the animation and its first frame
        #expect(pipeline.statistics.decodes == 2)
        for response in responses {
            let animation = try #require(response.container?.animation)
            #expect(animation.info.frameCount == 48 && response.bitmap?.width == 96)
        }
        #expect(still.container?.animation == nil)
        // And a second request is a memory hit charged for the bytes and the buffer
        let hit = try await pipeline.image(for: request)
        #expect(hit.origin == .memory)
        let container = try #require(hit.container)
        let animation = try #require(container.animation)
        #expect(container.cost == container.bitmap.cost + animation.encoded.bytes.count + animation.bufferBudget)
        // And its player shows the frames at 96 px
        let player = try animation.makePlayer(budgetBytes: 96 * 60 * 4 * 4)
        player.prepare()
        #expect(await eventually { !player.isDecoding })
        let frame = try #require(player.frame(at: 0))
        #expect(frame.bitmap.width == 96 && frame.bitmap.height == 60 && frame.index == 0)
        #expect(player.statistics.peakBufferedBytes <= 96 * 60 * 4 * 4)
    }
}
