import DarkroomCache
import DarkroomImage
import DarkroomTestSupport
import Foundation
import Testing

@testable import Darkroom

/// Players hammered from several threads at once (run under ThreadSanitizer by `make tsan`): render-loop lookups,
/// memory-pressure callbacks and stops racing the decode jobs.
@Suite("Animation player thread safety", .timeLimit(.minutes(5)))
struct AnimationPlayerThreadSafetyTests {
    @Test("lookups, memory pressure and stop from many threads while frames decode")
    func concurrentUse() async throws {
        // Given four players on two samples with small buffers
        let animations = try [
            EncodedAnimation(try SamplePhotos.bytes("animated/disposal-mixed-480x300.gif")),
            EncodedAnimation(try SamplePhotos.bytes("animated/blend-dispose-480x300-24f.png")),
        ]
        let players = try (0..<4).map { i in
            try AnimationPlayer(
                animations[i % 2], options: DecodeOptions(size: .maxPixelSize(48)), budgetBytes: 48 * 30 * 4 * 3)
        }
        // When each is looked up by two render loops while a third thread signals memory pressure
        await withTaskGroup(of: Void.self) { group in
            for player in players {
                for loop in 0..<2 {
                    group.addTask {
                        for n in 0..<400 { _ = player.frame(at: Double(n + loop) * 0.01) }
                    }
                }
                group.addTask {
                    for n in 0..<50 { player.respond(to: n % 7 == 6 ? .critical : .warning) }
                }
            }
        }
        // Then every player stayed inside its budget and answered frames of its size
        for player in players {
            #expect(await eventually { !player.isDecoding })
            let statistics = player.statistics
            #expect(statistics.bufferedBytes <= 48 * 30 * 4 * 3)
            #expect(statistics.framesDecoded > 0 && statistics.error == nil)
            player.stop()
            #expect(player.statistics.bufferedBytes == 0)
        }
    }
}
