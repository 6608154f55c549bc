import DarkroomSupport
import DarkroomTestSupport
import Foundation
import Testing

@testable import DarkroomCache

@Suite("DiskCache")
struct DiskCacheTests {
    /// A configuration whose orphan reaping is immediate (tests control timing themselves).
    static func config(
        sizeLimit: Int = 1 << 30, countLimit: Int = .max, maxAge: Duration? = nil,
        sharing: DiskCacheConfiguration.ProcessSharing = .exclusive
    ) -> DiskCacheConfiguration {
        DiskCacheConfiguration(
            sizeLimit: sizeLimit, countLimit: countLimit, maxAge: maxAge, processSharing: sharing,
            accessTimeResolution: .zero, trimInterval: .seconds(3600), orphanGracePeriod: .zero)
    }

    @Test("XXH64 matches the reference vectors")
    func xxhash() {
        #expect(XXHash64.hash([]) == 0xEF46_DB37_51D8_E999)
        #expect(XXHash64.hash(Array("a".utf8)) == 0xD24E_C4F1_A98C_6E5B)
        #expect(XXHash64.hash(Array("abc".utf8)) == 0x44BC_2CF5_AD77_0999)
        #expect(XXHash64.hash(Array("abc".utf8), seed: 42) == 0x13C1_D910_7027_70E6)
        let long = Array((0..<3).flatMap { _ in (0..<256).map { UInt8($0) } }) + Array("xyz".utf8)
        #expect(XXHash64.hash(long) == 0xE921_A1B4_5BD7_79F8)
        #expect(XXHash64.hash(long, seed: 42) == 0x7649_E45D_58C1_A228)
        #expect(XXHash64.hash(Array("0123456789abcdef0123456789abcdef0123".utf8)) == 0xC425_5BA3_D1AF_5461)
    }

    @Test(
        "values of every size round-trip, inline up to the threshold and as files above it",
        arguments: [0, 1, 2048, 20 * 1024, 20 * 1024 + 1, 100 * 1024, 1 << 20])
    func roundTrip(size: Int) throws {
        // Given a cache and a value
        let dir = try TemporaryDirectory.make()
        defer { TemporaryDirectory.remove(dir) }
        let cache = try DiskCache(directory: dir, configuration: Self.config())
        let value = SplitMix64.bytes(size, seed: UInt64(size))
        // When it is stored with extended data
        try cache.set(value, forKey: "k", extendedData: [1, 2, 3])
        // Then it reads back whole, with its extended data, inline or as a file
        let entry = try #require(cache.entry(forKey: "k"))
        #expect(entry.data == value)
        #expect(entry.extendedData == [1, 2, 3])
        #expect(cache.statistics.inlineCount == (size <= 20 * 1024 ? 1 : 0))
        #expect(POSIX.list(dir + "/data").count == (size <= 20 * 1024 ? 0 : 1))
        #expect(cache.statistics.totalSize == size && cache.statistics.count == 1)
    }

    @Test("replace and remove leave no file behind; values persist across reopen")
    func replaceRemovePersist() throws {
        let dir = try TemporaryDirectory.make()
        defer { TemporaryDirectory.remove(dir) }
        do {
            let cache = try DiskCache(directory: dir, configuration: Self.config())
            try cache.set(SplitMix64.bytes(50_000, seed: 1), forKey: "a")
            try cache.set(SplitMix64.bytes(60_000, seed: 2), forKey: "a")  // file replaces file
            #expect(POSIX.list(dir + "/data").count == 1)
            try cache.set([9], forKey: "a")  // inline replaces file
            #expect(POSIX.list(dir + "/data").isEmpty)
            try cache.set(SplitMix64.bytes(70_000, seed: 3), forKey: "b")
            try cache.set(Array("small".utf8), forKey: "c")
            try cache.removeValue(forKey: "c")
            #expect(cache.data(forKey: "c") == nil)
            #expect(cache.statistics.count == 2 && cache.statistics.totalSize == 70_001)
        }
        // When the cache is reopened
        let reopened = try DiskCache(directory: dir, configuration: Self.config())
        #expect(reopened.data(forKey: "a") == [9])
        #expect(reopened.data(forKey: "b") == SplitMix64.bytes(70_000, seed: 3))
        #expect(reopened.statistics.count == 2 && reopened.statistics.totalSize == 70_001)
        try reopened.removeAll()
        #expect(reopened.statistics.count == 0 && POSIX.list(dir + "/data").isEmpty)
        #expect(throws: DarkroomCacheError.self) { try reopened.set([1], forKey: "") }
    }

    @Test("size and count limits trim least recently used first, in the background after writes")
    func limits() async throws {
        let dir = try TemporaryDirectory.make()
        defer { TemporaryDirectory.remove(dir) }
        // Given a 100 KB limit and ten 30 KB file values
        let cache = try DiskCache(directory: dir, configuration: Self.config(sizeLimit: 100_000))
        for i in 0..<3 { try await cache.set(SplitMix64.bytes(30_000, seed: UInt64(i)), forKey: "k\(i)") }
        // When k0 is read (so k1 is least recently used) and a fourth pushes past the limit
        try await Task.sleep(for: .milliseconds(20))
        #expect(await cache.data(forKey: "k0") != nil)
        try await cache.set(SplitMix64.bytes(30_000, seed: 3), forKey: "k3")
        for _ in 0..<200 where cache.statistics.totalSize > 100_000 { try await Task.sleep(for: .milliseconds(10)) }
        // Then k1 was trimmed in the background and its file deleted
        #expect(cache.statistics.totalSize == 90_000)
        #expect(await cache.data(forKey: "k1") == nil)
        #expect(await cache.data(forKey: "k0") != nil)
        #expect(await cache.data(forKey: "k3") != nil)
        #expect(POSIX.list(dir + "/data").count == 3)
        // And explicit trims by count and size work
        try cache.trim(toCount: 2)
        #expect(cache.statistics.count == 2)
        try cache.trim(toSize: 0)
        #expect(cache.statistics.count == 0 && POSIX.list(dir + "/data").isEmpty)
    }

    @Test("values older than maxAge read as absent and are removed")
    func age() throws {
        let dir = try TemporaryDirectory.make()
        defer { TemporaryDirectory.remove(dir) }
        // Given a 10 s age limit and a clock the test moves
        let time = Locked<Double>(1_000_000)
        let cache = try DiskCache(
            directory: dir, configuration: Self.config(maxAge: .seconds(10)),
            clock: { time.withLock { $0 } })
        try cache.set([1, 2, 3], forKey: "old")
        #expect(cache.contains("old"))
        // When 6 s pass, another is written, and 5 more pass
        time.withLock { $0 += 6 }
        try cache.set([4], forKey: "new")
        time.withLock { $0 += 5 }
        // Then the first is stale, the second fresh
        #expect(cache.data(forKey: "old") == nil)
        #expect(!cache.contains("old"))
        #expect(cache.data(forKey: "new") == [4])
        // And removeExpired deletes the stale row
        try cache.removeExpired()
        #expect(cache.statistics.count == 1)
        #expect(cache.data(forKey: "new") == [4])
    }

    @Test(
        "with checksum verification, a damaged, truncated or foreign value file reads as absent, never as wrong bytes")
    func tamperedFiles() throws {
        let dir = try TemporaryDirectory.make()
        defer { TemporaryDirectory.remove(dir) }
        var config = Self.config()
        config.fileVerification = .checksum
        let cache = try DiskCache(directory: dir, configuration: config)
        let value = SplitMix64.bytes(100_000, seed: 7)
        for key in ["flipped", "truncated", "foreign"] { try cache.set(value, forKey: key) }
        let rows = try cache.state.withLock { s in
            try s.withManifest(cache) { m throws(SQLiteError) in try m.fileRows() }
        }
        let path = { (key: String) in dir + "/data/" + rows.first { $0.key == key }!.filename }
        // Given one file with a flipped byte, one truncated, one replaced by another value of the same size
        var flipped = value
        flipped[5000] ^= 1
        try TemporaryDirectory.write(flipped, to: path("flipped"))
        try TemporaryDirectory.write(Array(value.prefix(99_000)), to: path("truncated"))
        try TemporaryDirectory.write(SplitMix64.bytes(100_000, seed: 8), to: path("foreign"))
        // Then each reads as absent and its row is gone
        for key in ["flipped", "truncated", "foreign"] { #expect(cache.data(forKey: key) == nil) }
        #expect(cache.statistics.count == 0)
        #expect(POSIX.list(dir + "/data").isEmpty)
    }

    @Test("size-only verification still refuses a file of the wrong size")
    func sizeOnlyVerification() throws {
        let dir = try TemporaryDirectory.make()
        defer { TemporaryDirectory.remove(dir) }
        let config = Self.config()
        #expect(config.fileVerification == .size, "size-only is the default")
        let cache = try DiskCache(directory: dir, configuration: config)
        let value = SplitMix64.bytes(50_000, seed: 3)
        try cache.set(value, forKey: "v")
        try cache.set([1, 2, 3], forKey: "inline")
        #expect(cache.data(forKey: "v") == value)
        let name = try cache.state.withLock { s in
            try s.withManifest(cache) { m throws(SQLiteError) in try m.fileRows() }
        }[0].filename
        try TemporaryDirectory.write(Array(value.prefix(40_000)), to: dir + "/data/" + name)
        #expect(cache.data(forKey: "v") == nil)
        #expect(cache.data(forKey: "inline") == [1, 2, 3])
    }

    @Test(
        "a corrupt manifest is moved aside and the cache starts empty",
        arguments: ["garbage", "damaged pages"])
    func corruptDatabase(kind: String) throws {
        let dir = try TemporaryDirectory.make()
        defer { TemporaryDirectory.remove(dir) }
        do {
            let cache = try DiskCache(directory: dir, configuration: Self.config())
            for i in 0..<300 { try cache.set(SplitMix64.bytes(3000, seed: UInt64(i)), forKey: "k\(i)") }
            try cache.set(SplitMix64.bytes(30_000, seed: 1), forKey: "file")
        }
        // Given the manifest overwritten (checkpointed on close, so the main file holds everything)
        let db = dir + "/manifest.sqlite"
        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: db)))
        if kind == "garbage" {
            bytes = SplitMix64.bytes(bytes.count, seed: 99)
        } else {
            for i in stride(from: 8192, to: bytes.count, by: 4096) {
                bytes.replaceSubrange(i..<i + 64, with: SplitMix64.bytes(64, seed: UInt64(i)))
            }
        }
        try TemporaryDirectory.write(bytes, to: db)
        // When it is opened
        let cache = try DiskCache(directory: dir, configuration: Self.config())
        // Then it is empty, works, and the old file sits aside
        for i in 0..<300 { #expect(cache.data(forKey: "k\(i)") == nil) }
        try cache.set([1, 2], forKey: "x")
        #expect(cache.data(forKey: "x") == [1, 2])
        #expect(FileManager.default.fileExists(atPath: db + ".corrupt"))
        // And the orphaned value file is reaped
        cache.reapOrphans()
        #expect(POSIX.list(dir + "/data").isEmpty)
    }

    @Test("a cache directory deleted under a running cache is recreated on the next write")
    func deletedDirectory() throws {
        let dir = try TemporaryDirectory.make()
        defer { TemporaryDirectory.remove(dir) }
        let cache = try DiskCache(directory: dir + "/cache", configuration: Self.config(sharing: .shared))
        try cache.set([1], forKey: "small")
        try cache.set(SplitMix64.bytes(50_000, seed: 1), forKey: "large")
        // When the whole directory is deleted
        TemporaryDirectory.remove(dir + "/cache")
        // Then the file-backed value reads as absent, and writes of both kinds recreate everything
        #expect(cache.data(forKey: "large") == nil)
        try cache.set(SplitMix64.bytes(50_000, seed: 2), forKey: "large2")
        try cache.set([2], forKey: "small2")
        #expect(FileManager.default.fileExists(atPath: dir + "/cache/manifest.sqlite"))
        #expect(cache.data(forKey: "large2") == SplitMix64.bytes(50_000, seed: 2))
        #expect(cache.data(forKey: "small2") == [2])
        #expect(cache.data(forKey: "small") == nil)
        // And a second process (here: a second shared instance) sees the recreated cache
        let other = try DiskCache(directory: dir + "/cache", configuration: Self.config(sharing: .shared))
        #expect(other.data(forKey: "small2") == [2])
        // Deleted again, with only an inline write following
        TemporaryDirectory.remove(dir + "/cache")
        try cache.set([3], forKey: "small3")
        #expect(
            try DiskCache(directory: dir + "/cache", configuration: Self.config(sharing: .shared)).data(
                forKey: "small3") == [3])
    }

    @Test("exclusive: a second opener is refused with .busy until the first is released; shared: both see each other")
    func processSharing() throws {
        let dir = try TemporaryDirectory.make()
        defer { TemporaryDirectory.remove(dir) }
        do {
            let owner = try DiskCache(directory: dir, configuration: Self.config())
            try owner.set([1], forKey: "a")
            #expect { try DiskCache(directory: dir, configuration: Self.config()) } throws: { error in
                (error as? DarkroomCacheError)?.code == .busy
            }
            #expect { try DiskCache(directory: dir, configuration: Self.config(sharing: .shared)) } throws: { error in
                (error as? DarkroomCacheError)?.code == .busy
            }
        }
        // Once released, shared instances coexist and see each other's writes (with the default grace period,
        // so one never reaps the other's file between its write and its commit)
        var shared = Self.config(sharing: .shared)
        shared.orphanGracePeriod = .seconds(60)
        let a = try DiskCache(directory: dir, configuration: shared)
        let b = try DiskCache(directory: dir, configuration: shared)
        #expect(b.data(forKey: "a") == [1])
        try a.set(SplitMix64.bytes(30_000, seed: 5), forKey: "big")
        try b.set([2], forKey: "small")
        #expect(b.data(forKey: "big") == SplitMix64.bytes(30_000, seed: 5))
        #expect(a.data(forKey: "small") == [2])
        try b.removeValue(forKey: "big")
        #expect(a.data(forKey: "big") == nil)
    }

    @Test("orphan files and rows left by a crash are reconciled")
    func orphans() throws {
        let dir = try TemporaryDirectory.make()
        defer { TemporaryDirectory.remove(dir) }
        do {
            let cache = try DiskCache(directory: dir, configuration: Self.config())
            try cache.set(SplitMix64.bytes(40_000, seed: 1), forKey: "kept")
            try cache.set(SplitMix64.bytes(40_000, seed: 2), forKey: "lost")
            let rows = try cache.state.withLock { s in
                try s.withManifest(cache) { m throws(SQLiteError) in try m.fileRows() }
            }
            // Given a row whose file vanished, a temporary file and an unreferenced file
            POSIX.unlinkIfPresent(dir + "/data/" + rows.first { $0.key == "lost" }!.filename)
        }
        try TemporaryDirectory.write([1, 2, 3], to: dir + "/data/tmp-123-456")
        try TemporaryDirectory.write([4, 5, 6], to: dir + "/data/789-abc")
        // When the cache is opened and reconciles
        let cache = try DiskCache(directory: dir, configuration: Self.config())
        cache.reapOrphans()
        // Then only the kept value's file remains and the lost row is gone
        #expect(POSIX.list(dir + "/data").count == 1)
        #expect(cache.statistics.count == 1)
        #expect(cache.data(forKey: "kept") == SplitMix64.bytes(40_000, seed: 1))

        // And with a grace period, young orphans are left for their (possibly live) writer
        let other = try TemporaryDirectory.make()
        defer { TemporaryDirectory.remove(other) }
        try POSIX.makeDirectories(other + "/data")
        try TemporaryDirectory.write([1], to: other + "/data/tmp-young")
        try TemporaryDirectory.write([1], to: other + "/data/young")
        let patient = try DiskCache(
            directory: other, configuration: DiskCacheConfiguration(trimInterval: .seconds(3600)))
        patient.reapOrphans()
        #expect(POSIX.list(other + "/data").count == 2)
    }

    @Test("async variants run off the caller's thread with the same results")
    func asyncAPI() async throws {
        let dir = try TemporaryDirectory.make()
        defer { TemporaryDirectory.remove(dir) }
        let cache = try DiskCache(directory: dir, configuration: Self.config())
        try await cache.set([1, 2, 3], forKey: "a")
        #expect(await cache.data(forKey: "a") == [1, 2, 3])
        try await cache.removeValue(forKey: "a")
        #expect(await cache.entry(forKey: "a") == nil)
    }
}
