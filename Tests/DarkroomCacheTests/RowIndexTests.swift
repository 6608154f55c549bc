import DarkroomSupport
import DarkroomTestSupport
import Foundation
import Testing

@testable import DarkroomCache

/// An exclusive cache reads inline rows it knows through its row index (rowid in memory, key checked in the row);
/// these check the index is used, never serves another key's value or a stale one, and stays within its limit.
@Suite("DiskCache row index")
struct RowIndexTests {
    static func withCache(
        _ name: String, limit: Int = 50_000, sharing: DiskCacheConfiguration.ProcessSharing = .exclusive,
        _ body: (DiskCache) throws -> Void
    ) throws {
        let dir = try TemporaryDirectory.make(name)
        defer { TemporaryDirectory.remove(dir) }
        var config = DiskCacheTests.config()
        config.rowIndexLimit = limit
        config.processSharing = sharing
        try body(try DiskCache(directory: dir, configuration: config))
    }

    /// Runs `body` on the cache's manifest, inside its lock.
    static func manifest<R: Sendable>(_ cache: DiskCache, _ body: @Sendable (Manifest) -> R) -> R {
        cache.state.withLock { s in body(s.manifest!) }
    }

    @Test("a value written or read once is read again through the index, with its extended data and times")
    func readsGoThroughTheIndex() throws {
        try Self.withCache("rowindex-used") { cache in
            // Given two inline values, one with extended data, written by this cache
            let a = SplitMix64.bytes(20 * 1024, seed: 1)
            let b = SplitMix64.bytes(3_000, seed: 2)
            try cache.set(a, forKey: "a", extendedData: [1, 2, 3])
            try cache.set(b, forKey: "b")
            #expect(Self.manifest(cache) { $0.rowIndex.count } == 2)
            // When the index's record of "a" is marked (a modified time no row holds)
            Self.manifest(cache) { m in
                var row = m.rowIndex.row(forKey: "a")!
                row.modified = 12_345
                m.rowIndex.remember(row, forKey: "a")
            }
            // Then a read returns the mark (so it came through the index) with the right bytes and extended data
            let entry = try #require(cache.entry(forKey: "a"))
            #expect(entry.modified == 12_345 && entry.data == a && entry.extendedData == [1, 2, 3])
            #expect(cache.entry(forKey: "b")?.data == b && cache.entry(forKey: "b")?.extendedData == nil)
        }
    }

    @Test("a hint naming another key's row is caught by the key check: the right value, and the hint is corrected")
    func staleHintFallsBack() throws {
        try Self.withCache("rowindex-stale") { cache in
            // Given two inline values
            let a = SplitMix64.bytes(9_000, seed: 3)
            let b = SplitMix64.bytes(9_000, seed: 4)
            try cache.set(a, forKey: "a")
            try cache.set(b, forKey: "b")
            // When the index points "a" at "b"'s row (what a hash collision or a stale rowid would look like)
            let rowB = try #require(Self.manifest(cache) { $0.rowIndex.row(forKey: "b") })
            let rowA = try #require(Self.manifest(cache) { $0.rowIndex.row(forKey: "a") })
            Self.manifest(cache) { $0.rowIndex.remember(rowB, forKey: "a") }
            // Then "a" still reads as its own value, and the index points at its own row again
            #expect(cache.data(forKey: "a") == a)
            #expect(Self.manifest(cache) { $0.rowIndex.row(forKey: "a")?.rowid } == rowA.rowid)
            #expect(cache.data(forKey: "b") == b)
        }
    }

    @Test("replaced, removed, trimmed and cleared keys never read back through an old hint")
    func writesKeepTheIndexInStep() throws {
        try Self.withCache("rowindex-writes") { cache in
            // Given keys written and read
            for i in 0..<20 { try cache.set(SplitMix64.bytes(5_000, seed: UInt64(i)), forKey: "k\(i)") }
            for i in 0..<20 { #expect(cache.data(forKey: "k\(i)") == SplitMix64.bytes(5_000, seed: UInt64(i))) }
            // When one is replaced by a larger inline value, one by a file value, one removed
            let inline = SplitMix64.bytes(15_000, seed: 100)
            let file = SplitMix64.bytes(40_000, seed: 101)
            try cache.set(inline, forKey: "k0")
            try cache.set(file, forKey: "k1")
            try cache.removeValue(forKey: "k2")
            // Then each reads its latest state, and the file value is not in the index
            #expect(cache.data(forKey: "k0") == inline)
            #expect(cache.data(forKey: "k1") == file)
            #expect(cache.data(forKey: "k2") == nil)
            #expect(Self.manifest(cache) { $0.rowIndex.row(forKey: "k1") } == nil)
            // When a new key takes the removed key's place at the end of the table, and everything is then cleared
            try cache.set(SplitMix64.bytes(5_000, seed: 200), forKey: "new")
            #expect(cache.data(forKey: "new") == SplitMix64.bytes(5_000, seed: 200))
            try cache.removeAll()
            // Then nothing reads back, and the index is empty
            #expect((0..<20).allSatisfy { cache.data(forKey: "k\($0)") == nil } && cache.data(forKey: "new") == nil)
            #expect(Self.manifest(cache) { $0.rowIndex.count } == 0)
        }
    }

    @Test("the index holds at most its limit; with processSharing .shared it holds nothing")
    func limitAndSharing() throws {
        try Self.withCache("rowindex-limit", limit: 10) { cache in
            // Given a limit of 10, When 25 keys are written and read
            for i in 0..<25 { try cache.set(SplitMix64.bytes(2_000, seed: UInt64(i)), forKey: "k\(i)") }
            for i in 0..<25 { #expect(cache.data(forKey: "k\(i)") == SplitMix64.bytes(2_000, seed: UInt64(i))) }
            // Then it never holds more than 10
            #expect(Self.manifest(cache) { $0.rowIndex.count } <= 10)
        }
        try Self.withCache("rowindex-shared", sharing: .shared) { cache in
            // Given a cache shared with other processes, When keys are written and read
            for i in 0..<5 { try cache.set(SplitMix64.bytes(2_000, seed: UInt64(i)), forKey: "k\(i)") }
            for i in 0..<5 { #expect(cache.data(forKey: "k\(i)") == SplitMix64.bytes(2_000, seed: UInt64(i))) }
            // Then nothing is remembered (another process's writes would make hints stale)
            #expect(Self.manifest(cache) { $0.rowIndex.count } == 0)
        }
    }

    @Test("a reopened cache knows its newest inline rows from the first read, up to the limit; files are not loaded")
    func filledAtOpen() throws {
        let dir = try TemporaryDirectory.make("rowindex-open")
        defer { TemporaryDirectory.remove(dir) }
        var config = DiskCacheTests.config()
        // Given a closed cache holding 30 inline values (one with extended data) and 2 file values
        do {
            let cache = try DiskCache(directory: dir, configuration: config)
            for i in 0..<30 { try cache.set(SplitMix64.bytes(3_000, seed: UInt64(i)), forKey: "k\(i)") }
            try cache.set(SplitMix64.bytes(9_000, seed: 99), forKey: "k7", extendedData: [7])
            for i in 0..<2 { try cache.set(SplitMix64.bytes(40_000, seed: UInt64(50 + i)), forKey: "f\(i)") }
        }
        // When it is reopened, Then before any read the index holds the 30 inline rows and neither file
        do {
            let cache = try DiskCache(directory: dir, configuration: config)
            #expect(Self.manifest(cache) { $0.rowIndex.count } == 30)
            #expect(Self.manifest(cache) { $0.rowIndex.row(forKey: "f0") } == nil)
            // and the first read of a value comes through it (a marked modified time comes back), extended data too
            Self.manifest(cache) { m in
                var row = m.rowIndex.row(forKey: "k7")!
                row.modified = 12_345
                m.rowIndex.remember(row, forKey: "k7")
            }
            let entry = try #require(cache.entry(forKey: "k7"))
            #expect(entry.modified == 12_345 && entry.data == SplitMix64.bytes(9_000, seed: 99))
            #expect(entry.extendedData == [7])
            for i in 0..<30 where i != 7 {
                #expect(cache.data(forKey: "k\(i)") == SplitMix64.bytes(3_000, seed: UInt64(i)))
            }
            #expect(cache.data(forKey: "f1") == SplitMix64.bytes(40_000, seed: 51))
        }
        // When it is reopened with a limit of 10, Then the index holds the 10 newest rows
        config.rowIndexLimit = 10
        let cache = try DiskCache(directory: dir, configuration: config)
        #expect(Self.manifest(cache) { $0.rowIndex.count } == 10)
        #expect(Self.manifest(cache) { m in (21..<30).allSatisfy { m.rowIndex.row(forKey: "k\($0)") != nil } })
        #expect(Self.manifest(cache) { $0.rowIndex.row(forKey: "k7") } != nil)  // rewritten last
        #expect(Self.manifest(cache) { $0.rowIndex.row(forKey: "k0") } == nil)
    }

    @Test("at the limit, rows read in the last generation stay and rows not read go")
    func rowsInUseSurvive() throws {
        try Self.withCache("rowindex-generations", limit: 10) { cache in
            // Given a limit of 10 (generations of 5) and five keys written, then a sixth
            func put(_ i: Int) throws { try cache.set(SplitMix64.bytes(2_000, seed: UInt64(i)), forKey: "k\(i)") }
            for i in 0..<6 { try put(i) }
            // When k0 is read and four more keys are written (a second rotation)
            #expect(cache.data(forKey: "k0") == SplitMix64.bytes(2_000, seed: 0))
            for i in 6..<10 { try put(i) }
            // Then k0 is still known, k1 (not read) is not, and the index holds at most 10
            #expect(Self.manifest(cache) { $0.rowIndex.row(forKey: "k0") } != nil)
            #expect(Self.manifest(cache) { $0.rowIndex.row(forKey: "k1") } == nil)
            #expect(Self.manifest(cache) { $0.rowIndex.count } <= 10)
            #expect((0..<10).allSatisfy { cache.data(forKey: "k\($0)") == SplitMix64.bytes(2_000, seed: UInt64($0)) })
        }
    }

    @Test("an entry past maxAge reads as absent through the index too")
    func maxAgeApplies() throws {
        let dir = try TemporaryDirectory.make("rowindex-age")
        defer { TemporaryDirectory.remove(dir) }
        // Given a cache with a 60 s age limit and a clock the test moves
        let now = Locked(1_000_000.0)
        var config = DiskCacheTests.config()
        config.maxAge = .seconds(60)
        let cache = try DiskCache(directory: dir, configuration: config, clock: { now.withLock { $0 } })
        try cache.set([1, 2, 3], forKey: "a")
        #expect(cache.data(forKey: "a") == [1, 2, 3] && Self.manifest(cache) { $0.rowIndex.count } == 1)
        // When 61 s pass, Then it reads as absent
        now.withLock { $0 += 61 }
        #expect(cache.data(forKey: "a") == nil)
    }
}
