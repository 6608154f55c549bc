import DarkroomImage
import DarkroomSupport
import DarkroomTestSupport
import Foundation
import Testing

@testable import DarkroomTables

@Suite("Image table eviction and pinning")
struct EvictionTests {
    static let format = ImageTableFormat(name: "e", width: 32, height: 8, pixelFormat: .gray8, maximumCount: 3)

    @Test("full: the least recently used unpinned entry is replaced; pinned entries are skipped")
    func evictionOrderSkipsPinned() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let table = try ImageTable(path: dir.file("t.table"), format: Self.format)
        // Given A, B, C (LRU order A, B, C), A pinned by a live bitmap and B read again (order A, C, B)
        for (i, e) in ["A", "B", "C"].enumerated() { try table.setPattern(e, seed: UInt32(i), version: 1) }
        let pinnedA = try #require(try table.entry(for: "A"))
        let beforeA = TestImages.visibleBytes(pinnedA)
        _ = try table.entry(for: "B")
        #expect(table.entities == ["C", "A", "B"])
        // When D is added to the full table
        try table.setPattern("D", seed: 3, version: 1)
        // Then C (the oldest unpinned) is evicted, not A (older but pinned)
        #expect(Set(table.entities) == ["A", "B", "D"])
        #expect(try table.entry(for: "C") == nil)
        // When E is added, Then B goes next (A is still pinned)
        try table.setPattern("E", seed: 4, version: 1)
        #expect(Set(table.entities) == ["A", "D", "E"])
        // And the pinned bitmap's pixels never changed while its neighbours' slots were reused
        #expect(TestImages.visibleBytes(pinnedA) == beforeA)
        #expect(TestImages.isConsistent(pinnedA)?.seed == 0)
        #expect(table.statistics.evictions == 2 && table.count == 3)
        withExtendedLifetime(pinnedA) {}
    }

    @Test("a pinned entry is never reused (FastImageCache #29): hundreds of writes cannot change what a holder sees")
    func pinnedSlotIsNeverReused() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let table = try ImageTable(path: dir.file("t.table"), format: Self.format)
        try table.setPattern("held", seed: 77, version: 1)
        // Given a bitmap of "held" kept alive
        let held = try #require(try table.entry(for: "held"))
        let before = TestImages.visibleBytes(held)
        let slot = try #require(held.storage as? TableEntryStorage).slot
        // When 300 other entries churn through a 3-entry table, and "held" itself is rewritten twice
        for i in 0..<300 { try table.setPattern("other\(i)", seed: UInt32(i), version: 2) }
        try table.setPattern("held", seed: 77, version: 2)
        try table.setPattern("held", seed: 77, version: 3)
        // Then the held bitmap still shows version 1, byte for byte, from the same slot
        #expect(TestImages.visibleBytes(held) == before)
        #expect(TestImages.isConsistent(held)?.version == 1)
        // And a new read gets the newest version from another slot
        let fresh = try #require(try table.entry(for: "held"))
        #expect(TestImages.isConsistent(fresh)?.version == 3)
        #expect(try #require(fresh.storage as? TableEntryStorage).slot != slot)
        withExtendedLifetime(held) {}
    }

    @Test("the maximum holds except for pinned entries, and is restored when they are released")
    func maximumExceptPinned() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let table = try ImageTable(path: dir.file("t.table"), format: Self.format)
        // Given a full table whose every entry is pinned
        var pins: [Bitmap] = []
        for i in 0..<3 {
            try table.setPattern("p\(i)", seed: UInt32(i), version: 1)
            pins.append(try #require(try table.entry(for: "p\(i)")))
        }
        // When one more is written, Then nothing can be evicted: the count exceeds the maximum by one
        try table.setPattern("x", seed: 10, version: 1)
        #expect(table.count == 4 && table.statistics.pinnedCount == 3)
        // When another is written, Then it replaces x, the only unpinned entry (the count stays at max + 1)
        try table.setPattern("y", seed: 11, version: 1)
        #expect(table.count == 4 && table.entities == ["p0", "p1", "p2", "y"])
        for (i, b) in pins.enumerated() { #expect(TestImages.isConsistent(b)?.seed == UInt32(i)) }
        // When the pins are released, Then the least recently used unpinned entries go until the maximum holds
        pins.removeAll()
        #expect(table.count == 3 && table.statistics.pinnedCount == 0)
        #expect(table.entities == ["p1", "p2", "y"])
        #expect(table.statistics.slots == 4, "one slot beyond the maximum was needed while everything was pinned")
    }

    @Test("remove and replace: holders keep the old pixels; the slot is freed once they let go")
    func removeAndReplace() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let table = try ImageTable(path: dir.file("t.table"), format: Self.format)
        try table.setPattern("r", seed: 5, version: 1)
        var held: Bitmap? = try table.entry(for: "r")
        #expect(try table.remove(entity: "r"))
        #expect(try table.entry(for: "r") == nil && table.count == 0)
        #expect(TestImages.isConsistent(held!)?.seed == 5)
        #expect(try !table.remove(entity: "r"))
        // The retired slot is not free while held; it becomes free (cleared) afterwards and is reused first
        let slot = try #require(held!.storage as? TableEntryStorage).slot
        #expect(table.core.state.withLock { $0.slots[slot].state } == .retired)
        held = nil
        #expect(table.core.state.withLock { $0.slots[slot].state } == .free)
        try table.setPattern("s", seed: 6, version: 1)
        #expect(try #require(try table.entry(for: "s")?.storage as? TableEntryStorage).slot == slot)
    }

    @Test("a failed draw leaves the previous entry and frees its slot")
    func failedDraw() throws {
        struct Boom: Error {}
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let table = try ImageTable(path: dir.file("t.table"), format: Self.format)
        try table.setPattern("k", seed: 1, version: 1)
        #expect(throws: ImageTableError.self) { try table.set(entity: "k", source: "v2") { _ in throw Boom() } }
        do {
            try table.set(entity: "k", source: "v2") { _ in throw Boom() }
        } catch {
            #expect(error.code == .drawFailed && error.underlying is Boom)
        }
        // A bitmap larger than the format is refused
        #expect(throws: ImageTableError.self) {
            try table.set(entity: "k", source: "big") { _ in try Bitmap(width: 33, height: 8, format: .gray8) }
        }
        #expect(table.sourceID(for: "k") == "v1")
        #expect(TestImages.isConsistent(try #require(try table.entry(for: "k")))?.version == 1)
        #expect(table.core.state.withLock { s in s.slots.filter { $0.state != .free && $0.state != .live }.count } == 0)
    }

    @Test("LRU bookkeeping: order, touch and eviction in the state alone")
    func stateBookkeeping() throws {
        var s = TableState(slotCount: 0, maximumCount: 2, entriesPerChunk: 4, maximumMappedChunks: 1, nextGeneration: 1)
        func write(_ e: String) throws {
            let w = try s.beginWrite(e)
            s.finishClearing(w.effects.clear)
            _ = s.commitWrite(slot: w.slot, entity: e, source: "", width: 1, height: 1, isOpaque: true, saveInterval: 0)
            _ = s.unpin(slot: w.slot, chunk: nil)
        }
        try write("a")
        try write("b")
        #expect(s.lruOrder().map(\.entity) == ["a", "b"])
        _ = s.pin("a")  // touch a
        #expect(s.lruOrder().map(\.entity) == ["b", "a"])
        try write("c")  // evicts b (a is pinned and newer anyway)
        #expect(s.lruOrder().map(\.entity) == ["a", "c"])
        #expect(s.slots.count == 2, "the evicted slot was reused, the file did not grow")
        #expect(s.counters.evictions == 1 && s.counters.hits == 1)
    }

    @Test("sequential first hand-outs read the next chunk's worth ahead; a jump does not")
    func sequentialReadAhead() {
        var s = TableState(
            slotCount: 16, maximumCount: 16, entriesPerChunk: 4, maximumMappedChunks: 4, nextGeneration: 1)
        for i in 0..<16 {
            s.adopt(
                slot: i,
                EntryTrailer(
                    generation: UInt64(i + 1), width: 1, height: 1, isOpaque: true, pixelChecksum: 0,
                    entity: "e\(i)", source: ""))
        }
        s.rebuildFreeList()
        #expect(s.pin("e0")?.readAhead == nil)
        #expect(s.pin("e1")?.readAhead == 2..<6)
        #expect(s.pin("e2")?.readAhead == 6..<7, "only what was not asked for yet")
        #expect(s.pin("e9")?.readAhead == nil, "a jump is not a scroll")
        #expect(s.pin("e10")?.readAhead == 11..<15)
        #expect(s.pin("e15")?.readAhead == nil)
    }
}
