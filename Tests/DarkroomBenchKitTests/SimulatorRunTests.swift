import DarkroomBenchKit
import DarkroomImage
import DarkroomSupport
import Foundation
import Synchronization
import Testing

/// Even indices come back at bind; odd ones are posted to the inbox with a wrong generation (a stale result).
final class FakeStrategy: ScrollStrategy {
    let name = "fake"
    let delay: Double
    let bitmap: Bitmap
    private(set) var binds: [Int] = []
    private(set) var unbinds: [Int] = []
    private(set) var finished = false

    init(delay: Double = 0) throws {
        self.delay = delay
        self.bitmap = try Bitmap(width: 8, height: 8, format: .bgra8Premultiplied)
    }

    func bind(index: Int, slot: Int, generation: UInt64, inbox: DeliveryInbox) -> Bitmap? {
        binds.append(index)
        if delay > 0 { usleep(UInt32(delay * 1e6)) }
        if index % 2 == 0 { return bitmap }
        inbox.post(Delivery(slot: slot, generation: generation &+ 1, bitmap: bitmap))
        return nil
    }

    func unbind(index: Int) { unbinds.append(index) }
    func finish() { finished = true }
}

@Suite("Simulator runs")
struct SimulatorRunTests {
    @Test(
        "Given 12 cells scrolled top to bottom, when half the images are stale, then every cell is bound once and stale ones never show"
    )
    func fullScroll() throws {
        // Given: 6 rows of 2, 2 visible, 40 rows/s at 60 fps → about 0.1 s
        let geometry = ScrollGeometry(count: 12, columns: 2, visibleRows: 2, cellPixels: 8)
        let strategy = try FakeStrategy()
        // When
        let result = ScrollSimulator(
            geometry: geometry, fps: 60, speed: 40, clock: { ProcessInfo.processInfo.systemUptime }
        )
        .run(strategy)
        // Then
        #expect(strategy.binds.sorted() == Array(0..<12))
        #expect(result.stats.cellsBound == 12)
        #expect(result.stats.latencies.count == 6)
        #expect(result.staleDeliveries == 6)
        #expect(result.stats.cellsNeverShown == 6)
        #expect(result.stats.cellsShownBlank == 6)
        #expect(result.rowsScrolled == geometry.maxOffset)
        #expect(result.cellsMade <= 6)
        #expect(result.reuses == 12 - result.cellsMade)
        #expect(strategy.unbinds.sorted() == Array(0..<8))
        #expect(strategy.finished)
        #expect(result.stats.frames >= 3)
    }

    @Test(
        "Given a bind that takes 30 ms at 60 fps, when scrolling, then frames go over budget, drop vsyncs and rows are skipped"
    )
    func slowBinds() throws {
        // Given: 100 rows of 1, 1 visible, 50 rows/s → 2 s of scroll if every frame were on time
        let geometry = ScrollGeometry(count: 40, columns: 1, visibleRows: 1, cellPixels: 8)
        let strategy = try FakeStrategy(delay: 0.030)
        // When
        let result = ScrollSimulator(
            geometry: geometry, fps: 60, speed: 50, clock: { ProcessInfo.processInfo.systemUptime }
        )
        .run(strategy)
        // Then: each bind overruns the 16.7 ms budget, so the scroll jumps rows and binds fewer than 40 cells
        #expect(result.stats.overBudget >= 1)
        #expect(result.stats.droppedVsyncs >= result.stats.overBudget)
        #expect(percentile(result.stats.frameTimes, 99) > 1.0 / 60)
        #expect(result.stats.cellsBound < 40)
        #expect(result.stats.cellsBound == strategy.binds.count)
    }
}

@Suite("Background queue and chart")
struct QueueAndChartTests {
    @Test("Given 20 jobs on 2 workers, when they finish, then all ran on at most 2 threads")
    func queueRunsJobs() throws {
        let queue = BackgroundQueue(workers: 2)
        let done = Locked(0)
        for _ in 0..<20 { queue.async { done.withLock { $0 += 1 } } }
        let deadline = Date().addingTimeInterval(5)
        while done.withLock({ $0 }) < 20, Date() < deadline { usleep(1_000) }
        #expect(done.withLock { $0 } == 20)
        #expect((1...2).contains(queue.threadsUsed))
        queue.stop()
        queue.async { done.withLock { $0 += 1 } }
        usleep(20_000)
        #expect(done.withLock { $0 } == 20)
    }

    @Test("Given two strategies, when charted, then the SVG names both, escapes text and draws the budget line")
    func chart() {
        let svg = ScrollChart.svg(
            title: "a < b", panels: ["frame p99 (ms)", "RSS"],
            rows: [.init(name: "naive", values: [500, 2000]), .init(name: "table", values: [1, 40])],
            budgetMs: 8.33)
        #expect(svg.hasPrefix("<svg"))
        #expect(svg.hasSuffix("</svg>\n"))
        #expect(svg.contains(">naive<"))
        #expect(svg.contains(">table<"))
        #expect(svg.contains("a &lt; b"))
        #expect(svg.contains("budget 8.33 ms"))
        #expect(svg.components(separatedBy: "<rect").count - 1 == 1 + 4)
    }
}
