import DarkroomBenchKit
import DarkroomImage
import DarkroomSupport
import Foundation
import Synchronization
import Testing

@Suite("Scroll geometry and percentiles")
struct ScrollGeometryTests {
    @Test(
        "Given 10 cells in 3 columns and a 2-row viewport, when scrolled, then the visible cells are whole rows, clamped at the end"
    )
    func visibleRanges() {
        // Given
        let g = ScrollGeometry(count: 10, columns: 3, visibleRows: 2, cellPixels: 100)
        // When / Then
        #expect(g.rows == 4)
        #expect(g.maxOffset == 2)
        #expect(g.visibleCells(atOffset: 0) == 0..<6)
        #expect(g.visibleCells(atOffset: 0.5) == 0..<9)
        #expect(g.visibleCells(atOffset: 1) == 3..<9)
        #expect(g.visibleCells(atOffset: 2) == 6..<10)
        #expect(g.visibleCells(atOffset: 99) == 6..<10)
        #expect(g.visibleCells(atOffset: -5) == 0..<6)
    }

    @Test(
        "Given a visible range, when asking for one screen ahead, then the next rows' cells come back, clamped to the grid"
    )
    func cellsAhead() {
        let g = ScrollGeometry(count: 10, columns: 3, visibleRows: 2, cellPixels: 100)
        #expect(g.cellsAhead(of: 0..<6, screens: 1) == 6..<10)
        #expect(g.cellsAhead(of: 0..<3, screens: 0.5) == 3..<6)
    }

    @Test("Given a phone viewport, when split into 4 columns, then cells are 270 px and 1920/270 rows show")
    func phone() {
        let g = ScrollGeometry.phone(count: 1000, columns: 4)
        #expect(g.cellPixels == 270)
        #expect(abs(g.visibleRows - 1920.0 / 270) < 1e-9)
        #expect(g.rows == 250)
    }

    @Test("Given 1…100, when taking percentiles by nearest rank, then p50 is 50, p99 is 99 and none is 0")
    func percentiles() {
        let values = (1...100).map(Double.init).shuffled()
        #expect(percentile(values, 50) == 50)
        #expect(percentile(values, 99) == 99)
        #expect(percentile(values, 100) == 100)
        #expect(percentile([], 50) == 0)
        #expect(percentile([7], 99) == 7)
    }
}

@Suite("Cell reuse and tag checks")
struct CellPoolTests {
    func bitmap() throws -> Bitmap { try Bitmap(width: 4, height: 4, format: .bgra8Premultiplied) }

    @Test(
        "Given 4 bound cells, when the view moves by 2, then 2 leave, the 2 new indices reuse their cells and none are made"
    )
    func reuse() {
        // Given
        var pool = CellPool()
        let first = pool.update(visible: 0..<4, now: 0)
        #expect(first.bound.count == 4)
        #expect(first.unbound.isEmpty)
        // When
        let second = pool.update(visible: 2..<6, now: 1)
        // Then
        #expect(second.unbound.map(\.index) == [0, 1])
        #expect(Set(second.bound) == Set(first.unbound.map(\.slot) + [first.bound[0], first.bound[1]]))
        #expect(pool.cells.count == 4)
        #expect(pool.reuses == 2)
        #expect(pool.slot(for: 0) == nil)
        #expect(pool.cells[pool.slot(for: 5)!].index == 5)
        #expect(pool.cells[pool.slot(for: 5)!].visibleSince == 1)
    }

    @Test(
        "Given a cell reused for another index, when the old index's image arrives, then it is refused; the new one is shown"
    )
    func staleDeliveryRefused() throws {
        // Given: slot s shows index 0 (generation g0), then is reused for index 1 (generation g1)
        var pool = CellPool()
        let s = pool.update(visible: 0..<1, now: 0).bound[0]
        let g0 = pool.cells[s].generation
        _ = pool.update(visible: 1..<2, now: 2)
        #expect(pool.slot(for: 1) == s)
        let g1 = pool.cells[s].generation
        #expect(g1 != g0)
        // When
        let stale = pool.show(try bitmap(), slot: s, generation: g0, now: 3)
        let fresh = pool.show(try bitmap(), slot: s, generation: g1, now: 3.5)
        // Then
        #expect(stale == nil)
        #expect(pool.staleDeliveries == 1)
        #expect(fresh == 1.5)
        #expect(pool.cells[s].shownAt == 3.5)
        // A second image for the same bind is refused too (already shown).
        #expect(pool.show(try bitmap(), slot: s, generation: g1, now: 4) == nil)
        #expect(pool.staleDeliveries == 2)
    }

    @Test("Given a cell blank for a frame, when it leaves without an image, then it counts as blank and never shown")
    func blankAccounting() throws {
        var pool = CellPool()
        let slots = pool.update(visible: 0..<2, now: 0).bound
        _ = pool.show(try bitmap(), slot: slots[0], generation: pool.cells[slots[0]].generation, now: 0)
        #expect(pool.markBlank() == 1)
        let left = pool.update(visible: 5..<6, now: 1).unbound
        var stats = FrameStats(budget: 0.01)
        for cell in left { stats.recordLeft(cell) }
        #expect(left.map(\.wasShown) == [true, false])
        #expect(stats.cellsShownBlank == 1)
        #expect(stats.cellsNeverShown == 1)
    }

    @Test("Given posts from two threads, when the inbox is drained, then every delivery comes out once")
    func inbox() async throws {
        let inbox = DeliveryInbox()
        let b = try bitmap()
        await withTaskGroup(of: Void.self) { group in
            for t in 0..<2 {
                group.addTask { for i in 0..<100 { inbox.post(Delivery(slot: t, generation: UInt64(i), bitmap: b)) } }
            }
        }
        #expect(inbox.drain().count == 200)
        #expect(inbox.drain().isEmpty)
    }
}

@Suite("Frame accounting")
struct FrameStatsTests {
    @Test("Given a 10 ms budget, when frames take 5, 11 and 25 ms, then 2 are over budget and 3 vsyncs are dropped")
    func overBudget() {
        var stats = FrameStats(budget: 0.010)
        stats.recordFrame(0.005)
        stats.recordFrame(0.011)
        stats.recordFrame(0.025)
        #expect(stats.frames == 3)
        #expect(stats.overBudget == 2)
        #expect(stats.droppedVsyncs == 3)
        #expect(abs(stats.overBudgetPercent - 200.0 / 3) < 1e-9)
    }

    @Test(
        "Given a result, when turned into JSON, then name, frames_over_budget and the millisecond percentiles are there"
    )
    func dictionary() {
        var stats = FrameStats(budget: 0.010)
        stats.recordFrame(0.002)
        stats.recordFrame(0.020)
        stats.recordShown(latency: 0.1)
        let r = ScrollResult(
            name: "x", stats: stats, seconds: 1, rowsScrolled: 3, reuses: 0, staleDeliveries: 0, cellsMade: 2)
        let d = r.dictionary()
        #expect(d["name"] as? String == "x")
        #expect(d["frames_over_budget"] as? Int == 1)
        #expect(d["frame_ms_max"] as? Double == 20)
        #expect(d["visible_to_shown_ms_p50"] as? Double == 100)
        #expect(JSONSerialization.isValidJSONObject(d))
    }
}
