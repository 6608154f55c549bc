import CDarkroomSQLite
import CSQLite
import DarkroomSupport
import DarkroomTestSupport
import Foundation
import Testing

@testable import DarkroomCache

/// The manifest's VFS maps the pages a WAL checkpoint wrote on the writing thread, so the first read of a value
/// just written takes no page faults; these count faults on the reading thread with and without it.
@Suite("SQLite checkpoint prefault")
struct CheckpointPrefaultTests {
    /// Minor and major page faults taken by the calling thread so far.
    static func threadFaults() -> Int {
        var usage = rusage()
        getrusage(1, &usage)  // RUSAGE_THREAD (Linux; Glibc exports it only under _GNU_SOURCE)
        return usage.ru_minflt + usage.ru_majflt
    }

    /// Writes `count` inline values of 20 KiB (past one automatic checkpoint), then reads each once on this thread;
    /// returns the faults the reads took.
    static func faultsOfFirstReads(prefault: Bool, count: Int) throws -> Int {
        let dir = try TemporaryDirectory.make("prefault")
        defer { TemporaryDirectory.remove(dir) }
        let manifest = try Manifest(
            path: dir + "/manifest.sqlite", fullSync: false, exclusive: true, rowIndexLimit: 50_000,
            prefaultsCheckpoints: prefault)
        let value = SplitMix64.bytes(20 * 1024, seed: 5)
        for i in 0..<count {
            _ = try value.withUnsafeBytes { bytes in
                try manifest.upsert(
                    key: "k\(i)", size: bytes.count, checksum: 0, inline: bytes, filename: nil, extendedData: nil,
                    now: 1)
            }
        }
        let before = threadFaults()
        for i in 0..<count {
            guard try manifest.record(forKey: "k\(i)")?.inlineData?.count == value.count else {
                throw DarkroomCacheError(.database, "k\(i) did not read back")
            }
        }
        return threadFaults() - before
    }

    @Test("values a checkpoint moved into the database file are read without page faults")
    func firstReadsTakeNoFaults() throws {
        // Given 800 values of 20 KiB (16 MB: two automatic checkpoints of 1,000 pages each)
        let prefaulted = darkroom_sqlite_prefaulted_bytes()
        // When they are read back once, through a manifest with and one without the prefaulting VFS
        let without = try Self.faultsOfFirstReads(prefault: false, count: 800)
        let with = try Self.faultsOfFirstReads(prefault: true, count: 800)
        print("prefault: first reads of 800 values of 20 KiB took \(without) page faults without it, \(with) with it")
        // Then without it the first reads fault (the effect is there to remove), with it they do not
        #expect(without >= 100, "first reads without the prefault took \(without) faults")
        #expect(with < 30, "first reads with the prefault took \(with) faults (without: \(without))")
        #expect(darkroom_sqlite_prefaulted_bytes() - prefaulted >= 8 << 20)
    }

    @Test("a manifest opened through the VFS reports it, and reads and writes as through the default one")
    func passesThrough() throws {
        let dir = try TemporaryDirectory.make("prefault-vfs")
        defer { TemporaryDirectory.remove(dir) }
        // Given a manifest opened with the prefaulting VFS
        let manifest = try Manifest(path: dir + "/manifest.sqlite", fullSync: true, exclusive: false)
        // Then SQLite names both layers
        var name: UnsafeMutablePointer<CChar>?
        #expect(sqlite3_file_control(manifest.db.handle, "main", SQLITE_FCNTL_VFSNAME, &name) == SQLITE_OK)
        #expect(name.map { String(cString: $0) }?.hasPrefix("darkroom-prefault/") == true)
        sqlite3_free(name)
        // And when values are written, replaced, checkpointed and deleted, the database checks out whole
        for i in 0..<50 {
            let value = SplitMix64.bytes(3_000 + i * 500, seed: UInt64(i))
            _ = try value.withUnsafeBytes { b in
                try manifest.upsert(
                    key: "k\(i % 20)", size: b.count, checksum: 0, inline: b, filename: nil, extendedData: nil,
                    now: 1)
            }
        }
        #expect(try manifest.db.text("PRAGMA wal_checkpoint(TRUNCATE)") != nil)
        _ = try manifest.delete(key: "k3")
        #expect(try manifest.db.text("PRAGMA integrity_check") == "ok")
        #expect(try manifest.record(forKey: "k19")?.inlineData == SplitMix64.bytes(3_000 + 39 * 500, seed: 39))
        #expect(try manifest.record(forKey: "k3") == nil)
    }
}
