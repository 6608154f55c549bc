import DarkroomImage
import DarkroomTestSupport
import Foundation
import Testing

@testable import DarkroomTables

@Suite("Image table persistence and reconciliation")
struct PersistenceTests {
    static let format = ImageTableFormat(
        name: "p", width: 40, height: 20, pixelFormat: .bgra8Premultiplied, maximumCount: 4)

    @Test("a clean reopen keeps entries, source ids and LRU order (the next eviction follows it)")
    func reopenKeepsLRUOrder() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        do {
            let table = try ImageTable(path: dir.file("t.table"), format: Self.format)
            for (i, e) in ["a", "b", "c", "d"].enumerated() { try table.setPattern(e, seed: UInt32(i), version: 1) }
            _ = try table.entry(for: "a")  // order b, c, d, a
            try table.close()
            #expect(throws: ImageTableError.self) { try table.entry(for: "a") }
        }
        let table = try ImageTable(path: dir.file("t.table"), format: Self.format)
        #expect(table.entities == ["b", "c", "d", "a"])
        #expect(table.sourceID(for: "c") == "v1")
        try table.setPattern("e", seed: 9, version: 1)
        #expect(table.entities == ["c", "d", "a", "e"], "b was the least recently used before the reopen")
    }

    @Test("changing size or pixel format rebuilds; changing the maximum keeps entries and trims")
    func formatChanges() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let path = dir.file("t.table")
        do {
            let table = try ImageTable(path: path, format: Self.format)
            #expect(table.statistics.rebuildReason == "new table")
            for i in 0..<4 { try table.setPattern("e\(i)", seed: UInt32(i), version: 1) }
            try table.close()  // releases the writer lock now, whatever else still references the object
        }
        // A lower maximum: the least recently used go, no rebuild
        var smaller = Self.format
        smaller.maximumCount = 2
        do {
            let table = try ImageTable(path: path, format: smaller)
            #expect(table.statistics.rebuildReason == nil)
            #expect(table.entities == ["e2", "e3"])
            try table.close()
        }
        // Read-only with a mismatching expectation is refused, not rebuilt
        var gray = Self.format
        gray.pixelFormat = .gray8
        #expect { try ImageTable(readingExisting: path, expecting: gray) } throws: {
            ($0 as? ImageTableError)?.code == .formatMismatch
        }
        for changed in [gray, ImageTableFormat(name: "p", width: 41, height: 20, maximumCount: 4)] {
            // When the pixel format or size changes, Then the table is rebuilt empty in the new layout
            let table = try ImageTable(path: path, format: changed)
            #expect(table.count == 0)
            #expect(table.statistics.rebuildReason?.hasPrefix("format changed") == true)
            try table.setPattern("n", seed: 1, version: 1)
            let b = try #require(try table.entry(for: "n"))
            #expect(b.format == changed.pixelFormat && b.width == changed.width)
        }
    }

    @Test("a damaged header (or a foreign file) is rebuilt by a writable open and refused by a read-only one")
    func damagedHeader() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let path = dir.file("t.table")
        try Data(repeating: 0x5A, count: 10_000).write(to: URL(fileURLWithPath: path))
        #expect { try ImageTable(readingExisting: path) } throws: { ($0 as? ImageTableError)?.code == .corrupt }
        #expect { try ImageTable(readingExisting: dir.file("absent")) } throws: {
            ($0 as? ImageTableError)?.code == .notFound
        }
        let table = try ImageTable(path: path, format: Self.format)
        #expect(table.statistics.rebuildReason?.contains("no valid table header") == true)
        try table.setPattern("ok", seed: 1, version: 1)
        #expect(try table.entry(for: "ok") != nil)
    }

    @Test("one writer at a time: a second open is refused while the first (or a bitmap of it) is alive")
    func exclusiveWriter() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let path = dir.file("t.table")
        var table: ImageTable? = try ImageTable(path: path, format: Self.format)
        try table!.setPattern("a", seed: 1, version: 1)
        #expect { try ImageTable(path: path, format: Self.format) } throws: { ($0 as? ImageTableError)?.code == .busy }
        #expect { try ImageTable(readingExisting: path) } throws: { ($0 as? ImageTableError)?.code == .busy }
        var held = try table!.entry(for: "a")
        try table!.close()
        table = nil
        // The bitmap outlives its table, still readable and still holding the file
        #expect(TestImages.isConsistent(held!)?.seed == 1)
        #expect { try ImageTable(path: path, format: Self.format) } throws: { ($0 as? ImageTableError)?.code == .busy }
        held = nil
        let readers = [try ImageTable(readingExisting: path), try ImageTable(readingExisting: path)]
        #expect(readers.allSatisfy { $0.count == 1 })
        #expect {
            try readers[0].set(entity: "x", source: "") { _ in throw ImageTableError(.io, "unreachable") }
        } throws: { ($0 as? ImageTableError)?.code == .readOnly }
    }

    @Test(
        "reconcile on open: an uncommitted trailer is torn, bad pixels fail their checksum, a stale index is corrected")
    func reconcileDamage() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let path = dir.file("t.table")
        var slots: [String: Int] = [:]
        do {
            let table = try ImageTable(path: path, format: Self.format, options: .init(indexSaveInterval: 0))
            for (i, e) in ["keep", "uncommitted", "other"].enumerated() {
                try table.setPattern(e, seed: UInt32(i), version: 1)
                slots[e] = try #require(try table.entry(for: e)?.storage as? TableEntryStorage).slot
            }
            try table.flush()  // the index vouches for these three
            try FileManager.default.copyItem(atPath: IndexFile.path(forTable: path), toPath: dir.file("saved.index"))
            try table.setPattern("late", seed: 7, version: 1)  // committed after that index save
            slots["late"] = try #require(try table.entry(for: "late")?.storage as? TableEntryStorage).slot
            try table.close()
        }
        // (as if the process had died before its final index save)
        unlink(IndexFile.path(forTable: path))
        try FileManager.default.moveItem(atPath: dir.file("saved.index"), toPath: IndexFile.path(forTable: path))
        // Given damage a crash could leave: one commit word zeroed (a rewrite that began; the index still lists
        // that entry), and changed pixels in an entry the index does not vouch for (power loss)
        let layout = TableLayout(Self.format, pageSize: TableFile.pageSize)
        let fd = open(path, O_RDWR)
        try #require(fd >= 0)
        try TableFile.write(
            fd, [UInt8](repeating: 0, count: 8),
            at: layout.trailerOffset(ofSlot: slots["uncommitted"]!) + EntryTrailer.commitOffset)
        try TableFile.write(fd, [0xEE], at: layout.fileOffset(ofSlot: slots["late"]!) + 5)
        close(fd)
        // When the table is opened read-only, Then neither damaged entry is served and verify agrees
        do {
            let table = try ImageTable(readingExisting: path)
            #expect(Set(table.entities) == ["keep", "other"])
            let s = table.statistics
            #expect(s.tornAtOpen == 2 && s.checksummedAtOpen == 1 && s.missingAtOpen == 1)
            let v = try table.verify()
            #expect(v.tornServed == 0 && v.valid == 2 && v.torn == 2 && v.missing == 1)
        }
        // And a writable open clears the torn slots, so they are empty (and reusable) afterwards
        do {
            let table = try ImageTable(path: path, format: Self.format)
            #expect(table.statistics.tornAtOpen == 2)
            try table.close()
        }
        let table = try ImageTable(readingExisting: path)
        let v = try table.verify()
        #expect(v.torn == 0 && v.valid == 2 && v.tornServed == 0 && v.empty == v.slots - 2)
        #expect(table.statistics.indexFound && table.statistics.checksummedAtOpen == 0)
    }

    @Test("without an index every committed entry is checksummed and served; the newest generation wins")
    func noIndex() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let path = dir.file("t.table")
        let before = dir.file("before.table")
        let layout = TableLayout(Self.format, pageSize: TableFile.pageSize)
        var oldSlot = 0
        do {
            let table = try ImageTable(path: path, format: Self.format)
            try table.setPattern("a", seed: 1, version: 1)
            oldSlot = try #require(try table.entry(for: "a")?.storage as? TableEntryStorage).slot
            try table.setPattern("b", seed: 2, version: 1)
            try table.flush()
            try FileManager.default.copyItem(atPath: path, toPath: before)
            try table.setPattern("a", seed: 1, version: 2)  // another slot; the old one's trailer is cleared
        }
        // Given the file as a crash between the new commit and the old copy's clear would leave it: the old
        // committed copy of "a" put back, and no index
        let old = try #require(FileHandle(forReadingAtPath: before))
        try old.seek(toOffset: UInt64(layout.fileOffset(ofSlot: oldSlot)))
        let entry = try #require(try old.read(upToCount: layout.entryBytes))
        let fd = open(path, O_RDWR)
        try #require(fd >= 0)
        try TableFile.write(fd, Array(entry), at: layout.fileOffset(ofSlot: oldSlot))
        close(fd)
        unlink(IndexFile.path(forTable: path))
        // When it is opened, Then both entities are served, checksummed, and "a" is the newer copy
        let table = try ImageTable(readingExisting: path)
        #expect(Set(table.entities) == ["a", "b"])
        let s = table.statistics
        #expect(!s.indexFound && s.checksummedAtOpen == 2 && s.supersededAtOpen == 1)
        #expect(TestImages.isConsistent(try #require(try table.entry(for: "a")))?.version == 2)
    }

    @Test("a retired copy's trailer is cleared at once, so even a crash while it is pinned cannot bring it back")
    func retiredTrailerCleared() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let path = dir.file("t.table")
        let crashed = dir.file("crashed.table")
        let table = try ImageTable(path: path, format: Self.format)
        try table.setPattern("gone", seed: 1, version: 1)
        try table.setPattern("kept", seed: 2, version: 1)
        let held = try #require(try table.entry(for: "gone"))
        try table.remove(entity: "gone")
        // While a bitmap still pins the removed entry, the file (as a crash now would leave it, with no index)...
        try FileManager.default.copyItem(atPath: path, toPath: crashed)
        #expect(TestImages.isConsistent(held)?.seed == 1, "the holder still reads its pixels")
        // ...does not serve it: only "kept" comes back
        let reopened = try ImageTable(readingExisting: crashed)
        #expect(reopened.entities == ["kept"])
        withExtendedLifetime(held) {}
    }

    @Test("a clean close leaves an exact index that the next open trusts; the first change marks it dirty first")
    func cleanIndex() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let path = dir.file("t.table")
        let crashed = dir.file("crashed.table")
        do {
            let table = try ImageTable(path: path, format: Self.format)
            for i in 0..<3 { try table.setPattern("e\(i)", seed: UInt32(i), version: 1) }
        }
        // Given a cleanly closed table, When it is opened and only read, Then no trailer is read and the index stays clean
        do {
            let table = try ImageTable(path: path, format: Self.format)
            #expect(!table.statistics.reconciled && table.count == 3)
            _ = try table.entry(for: "e0")
        }
        #expect(
            IndexFile.load(
                forTable: path, fingerprint: TableLayout(Self.format, pageSize: TableFile.pageSize).fingerprint)?.clean
                == true)
        // When a session changes something and dies before closing (the files copied right after the change)
        do {
            let table = try ImageTable(path: path, format: Self.format)
            #expect(!table.statistics.reconciled)
            try table.setPattern("new", seed: 9, version: 1)
            try FileManager.default.copyItem(atPath: path, toPath: crashed)
            try FileManager.default.copyItem(
                atPath: IndexFile.path(forTable: path), toPath: IndexFile.path(forTable: crashed))
        }
        // Then the index it left is not clean, so the next open reconciles and finds the new entry by its trailer
        let table = try ImageTable(readingExisting: crashed)
        let s = table.statistics
        #expect(s.reconciled && s.indexFound && s.checksummedAtOpen == 1 && s.tornAtOpen == 0)
        #expect(Set(table.entities) == ["e0", "e1", "e2", "new"])
        #expect(table.entities.first == "e1", "LRU order of the confirmed entries comes from the index")
    }

    @Test(
        "alwaysReconcile catches damage made behind the table's back after a clean close; verify reports it either way")
    func alwaysReconcile() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let path = dir.file("t.table")
        var slot = 0
        do {
            let table = try ImageTable(path: path, format: Self.format)
            try table.setPattern("a", seed: 1, version: 1)
            try table.setPattern("b", seed: 2, version: 1)
            slot = try #require(try table.entry(for: "b")?.storage as? TableEntryStorage).slot
        }
        let layout = TableLayout(Self.format, pageSize: TableFile.pageSize)
        let fd = open(path, O_RDWR)
        try #require(fd >= 0)
        try TableFile.write(
            fd, [UInt8](repeating: 0, count: 8), at: layout.trailerOffset(ofSlot: slot) + EntryTrailer.commitOffset)
        close(fd)
        // A trusting open serves "b", but verify flags it; a reconciling open does not serve it at all
        let trusting = try ImageTable(readingExisting: path)
        #expect(trusting.count == 2)
        #expect(try trusting.verify().tornServed == 1)
        try trusting.close()
        let careful = try ImageTable(readingExisting: path, options: .init(alwaysReconcile: true))
        #expect(careful.entities == ["a"] && careful.statistics.reconciled)
        #expect(try careful.verify().tornServed == 0)
    }
}

extension PersistenceTests {
    @Test("close releases the writer lock at once when no bitmap is out, and keeps it while one is")
    func closeReleasesTheLock() throws {
        // Given a writable table with one entry, still referenced after close (as a test framework or a cache might)
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let path = dir.file("t.table")
        let table = try ImageTable(path: path, format: Self.format)
        try table.setPattern("a", seed: 1, version: 1)
        var held: Bitmap? = try table.entry(for: "a")
        // When it is closed while a bitmap is out, Then the lock stays (a writer could change the bitmap's rows)
        try table.close()
        #expect { try ImageTable(readingExisting: path) } throws: { ($0 as? ImageTableError)?.code == .busy }
        // When the bitmap goes and a second table is closed with nothing out, Then reads open at once
        held = nil
        _ = held
        let other = try ImageTable(path: dir.file("u.table"), format: Self.format)
        try other.setPattern("b", seed: 2, version: 1)
        try other.close()
        #expect(try ImageTable(readingExisting: dir.file("u.table")).count == 1)
        withExtendedLifetime(table) {}
        withExtendedLifetime(other) {}
    }
}
