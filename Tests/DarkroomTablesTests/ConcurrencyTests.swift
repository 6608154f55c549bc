import DarkroomImage
import DarkroomSupport
import DarkroomTestSupport
import Foundation
import Synchronization
import Testing

@testable import DarkroomTables

/// Runs `body(i)` for `i` in `0..<count`, each on its own thread, and waits for all.
func onThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
    let group = DispatchGroup()
    for i in 0..<count {
        group.enter()
        let thread = Thread {
            body(i)
            group.leave()
        }
        thread.start()
    }
    group.wait()
}

@Suite("Image table concurrency")
struct ConcurrencyTests {
    @Test("readers and writers on many threads: every hit is one whole entry, held bitmaps never change")
    func readersAndWriters() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let format = ImageTableFormat(
            name: "c", width: 48, height: 24, pixelFormat: .bgra8Premultiplied, maximumCount: 8)
        let table = try ImageTable(
            path: dir.file("t.table"), format: format,
            options: .init(maximumMappedChunks: 2, indexSaveInterval: 16))
        let entities = 24
        let writes = 400
        let reads = 3000
        let problems = Locked<[String]>([])
        let hits = Atomic<Int>(0)
        let committed = Atomic<Int>(0)
        let writersDone = Atomic<Int>(0)
        for e in 0..<format.maximumCount { try table.setPattern("e\(e)", seed: UInt32(e), version: 0) }
        // Given a full table, 2 writers cycling 24 entities through an 8-entry table (constant eviction, chunk remapping),
        // 3 readers that hold up to 6 bitmaps each for a while, and one thread saving the index and listing
        onThreads(6) { role in
            var rng = SystemRandomNumberGenerator()
            func fail(_ s: String) { problems.withLock { if $0.count < 20 { $0.append(s) } } }
            switch role {
            case 0, 1:
                for n in 0..<writes {
                    let e = Int.random(in: 0..<entities, using: &rng)
                    do {
                        try table.setPattern("e\(e)", seed: UInt32(e), version: UInt32(role * writes + n))
                        committed.add(1, ordering: .relaxed)
                    } catch { fail("write e\(e): \(error)") }
                }
                writersDone.add(1, ordering: .relaxed)
            case 2, 3, 4:
                var held: [(Bitmap, [UInt8])] = []
                var round = 0
                // Readers keep going until the writers are done, however the threads are scheduled, so reads and
                // writes overlap even when one side is starved for a while
                while round < reads || writersDone.load(ordering: .relaxed) < 2 {
                    round += 1
                    let e = Int.random(in: 0..<entities, using: &rng)
                    do {
                        guard let b = try table.entry(for: "e\(e)") else { continue }
                        hits.add(1, ordering: .relaxed)
                        // Then every hit is exactly one pattern, of the entity asked for
                        guard let found = TestImages.isConsistent(b), found.seed == UInt32(e) else {
                            fail("e\(e): torn or foreign pixels")
                            continue
                        }
                        held.append((b, TestImages.visibleBytes(b)))
                        if held.count > 6 {
                            // And a bitmap held while writers churned still shows exactly what it showed
                            let (old, bytes) = held.removeFirst()
                            if TestImages.visibleBytes(old) != bytes { fail("a held bitmap changed") }
                        }
                    } catch { fail("read e\(e): \(error)") }
                }
            default:
                for _ in 0..<40 {
                    do { try table.flush() } catch { fail("flush: \(error)") }
                    _ = table.entities
                    _ = table.statistics
                    _ = table.sourceID(for: "e1")
                }
            }
        }
        #expect(problems.withLock { $0 } == [])
        #expect(committed.load(ordering: .relaxed) == 2 * writes)
        #expect(hits.load(ordering: .relaxed) > 0)
        // And afterwards the bookkeeping is tidy: no slot left writing, retired or clearing; the maximum holds
        let stats = table.statistics
        #expect(stats.count <= format.maximumCount && stats.pinnedCount == 0)
        #expect(table.core.state.withLock { s in s.slots.allSatisfy { $0.state == .free || $0.state == .live } })
        #expect(stats.mappedChunks <= 2)
        let v = try table.verify()
        #expect(v.tornServed == 0 && v.valid == stats.count)
    }

    @Test("reading one entry never waits for a write to another (a draw that blocks holds no lock)")
    func readsDoNotWaitForWrites() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let format = ImageTableFormat(name: "w", width: 16, height: 16, pixelFormat: .gray8, maximumCount: 8)
        let table = try ImageTable(path: dir.file("t.table"), format: format)
        try table.setPattern("ready", seed: 1, version: 1)
        let inDraw = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let slowDone = Atomic<Bool>(false)
        let group = DispatchGroup()
        group.enter()
        Thread {
            // Given a writer stuck inside its draw closure
            try? table.set(entity: "slow", source: "") { writer in
                inDraw.signal()
                release.wait()
                return try writer.canvas(isOpaque: true)
            }
            slowDone.store(true, ordering: .sequentiallyConsistent)
            group.leave()
        }.start()
        inDraw.wait()
        // When other threads read and write meanwhile, Then they all complete while it is still stuck
        var reads = 0
        for _ in 0..<1000 where try table.entry(for: "ready") != nil { reads += 1 }
        try table.setPattern("other", seed: 2, version: 1)
        #expect(try table.entry(for: "slow") == nil, "an entry being written is not readable")
        #expect(reads == 1000 && !slowDone.load(ordering: .sequentiallyConsistent))
        release.signal()
        group.wait()
        #expect(try table.entry(for: "slow") != nil)
    }

    @Test("concurrent writes of one entity: one whole version wins, no slot leaks")
    func sameEntityWriters() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let format = ImageTableFormat(name: "s", width: 32, height: 32, pixelFormat: .gray8, maximumCount: 4)
        let table = try ImageTable(path: dir.file("t.table"), format: format)
        onThreads(4) { t in
            for n in 0..<200 { try? table.setPattern("same", seed: 3, version: UInt32(t * 1000 + n)) }
        }
        let b = try #require(try table.entry(for: "same"))
        #expect(TestImages.isConsistent(b)?.seed == 3)
        #expect(table.count == 1)
        #expect(table.core.state.withLock { s in s.slots.filter { $0.state != .free }.count } == 1)
    }
}
