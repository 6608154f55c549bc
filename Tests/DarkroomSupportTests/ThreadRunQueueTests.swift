import Foundation
import Testing

@testable import DarkroomSupport

@Suite struct ThreadRunQueueTests {
    @Test func aThreadCompetingForTheCoresWaitsForThemAndTheReadingSaysSo() throws {
        // Given the calling thread's run-queue clock, and twice as many busy threads as cores beside it
        let runQueue = ThreadRunQueue()
        let start = MonotonicClock.seconds()
        let before = try #require(runQueue.waitedSeconds())
        let stop = Locked(false)
        let busy = 2 * ProcessStats.activeCores
        let threads = (0..<busy).map { _ in
            Thread {
                var x = 0
                while !stop.withLock({ $0 }) { for i in 0..<10_000 { x &+= i } }
                _ = x
            }
        }
        for thread in threads { thread.start() }
        defer { stop.withLock { $0 = true } }
        // When it spins too for 300 ms of wall time
        let end = MonotonicClock.seconds() + 0.3
        var x = 0
        while MonotonicClock.seconds() < end { for i in 0..<1_000 { x &+= i } }
        let after = try #require(runQueue.waitedSeconds())
        let wall = MonotonicClock.seconds() - start
        // Then its reading grew by part of that time (it shared the cores; it was never blocked)
        let waited = after - before
        #expect(
            waited > 0.01 && waited < wall,
            "waited \(waited) of \(wall) s for a core beside \(busy) busy threads (\(x))")
    }
}
