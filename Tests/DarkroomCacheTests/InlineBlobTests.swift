import DarkroomSupport
import DarkroomTestSupport
import Foundation
import Testing

@testable import DarkroomCache

/// Inline values are read through a blob handle kept open between reads; these check it never serves a stale or
/// foreign value and never holds back a write.
@Suite("DiskCache inline reads")
struct InlineBlobTests {
    @Test("replaced, removed and re-added inline values read back exactly, interleaved with reads of others")
    func replaceAndRemoveBetweenReads() throws {
        // Given a cache with three inline values, each read once (so the handle is open on a row)
        let dir = try TemporaryDirectory.make("inline")
        defer { TemporaryDirectory.remove(dir) }
        let cache = try DiskCache(directory: dir, configuration: DiskCacheTests.config())
        let values = (0..<3).map { SplitMix64.bytes(20 * 1024 - $0, seed: UInt64($0)) }
        for (i, v) in values.enumerated() { try cache.set(v, forKey: "k\(i)") }
        for i in 0..<3 { #expect(cache.data(forKey: "k\(i)") == values[i]) }
        // When one is replaced (a new row), one removed and one re-added, with reads in between
        let replacement = SplitMix64.bytes(9_000, seed: 99)
        try cache.set(replacement, forKey: "k1")
        #expect(cache.data(forKey: "k0") == values[0])
        try cache.removeValue(forKey: "k2")
        #expect(cache.data(forKey: "k1") == replacement)
        #expect(cache.data(forKey: "k2") == nil)
        try cache.set(values[2], forKey: "k2")
        // Then every read returns exactly the latest value of its own key
        #expect(cache.data(forKey: "k0") == values[0])
        #expect(cache.data(forKey: "k1") == replacement)
        #expect(cache.data(forKey: "k2") == values[2])
    }

    @Test("a write after a read is committed at once: a copy of the files taken then (a crash) holds it")
    func writeAfterReadIsCommitted() throws {
        // Given a cache whose blob handle is open after a read
        let dir = try TemporaryDirectory.make("inline-commit")
        let copy = try TemporaryDirectory.make("inline-commit-copy")
        defer {
            TemporaryDirectory.remove(dir)
            TemporaryDirectory.remove(copy)
        }
        let cache = try DiskCache(directory: dir, configuration: DiskCacheTests.config())
        let first = SplitMix64.bytes(10_000, seed: 1)
        let second = SplitMix64.bytes(12_000, seed: 2)
        try cache.set(first, forKey: "a")
        #expect(cache.data(forKey: "a") == first)
        // When another value is written and the files are copied while the cache is still open (as a kill -9 leaves them)
        try cache.set(second, forKey: "b")
        for name in ["manifest.sqlite", "manifest.sqlite-wal"]
        where FileManager.default.fileExists(atPath: dir + "/" + name) {
            try FileManager.default.copyItem(atPath: dir + "/" + name, toPath: copy + "/" + name)
        }
        // Then the copy opens with both values
        let reopened = try DiskCache(directory: copy, configuration: DiskCacheTests.config())
        #expect(reopened.data(forKey: "a") == first)
        #expect(reopened.data(forKey: "b") == second)
    }
}

extension InlineBlobTests {
    @Test("reads between writes do not hold the WAL open: it is checkpointed and reused, not grown without bound")
    func walStaysBounded() throws {
        // Given a cache written and read alternately, 3,000 inline values of 16 KiB (48 MB in all)
        let dir = try TemporaryDirectory.make("inline-wal")
        defer { TemporaryDirectory.remove(dir) }
        let cache = try DiskCache(directory: dir, configuration: DiskCacheTests.config())
        let value = SplitMix64.bytes(16 * 1024, seed: 7)
        for i in 0..<3_000 {
            try cache.set(value, forKey: "k\(i)")
            #expect(cache.data(forKey: "k\(i / 2)")?.count == value.count)
        }
        // Then the write-ahead log stays near SQLite's checkpoint threshold (1,000 pages of 8 KiB), far below 48 MB
        var st = stat()
        #expect(stat(dir + "/manifest.sqlite-wal", &st) == 0)
        #expect(Int(st.st_size) < 16 << 20, "WAL is \(st.st_size) bytes")
    }
}
