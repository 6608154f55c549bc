import DarkroomCache
import DarkroomSupport
import Foundation

/// The disk half of `darkroom bench cache`: write and read operations per second for 2 KB, 20 KB, 100 KB and 1 MB
/// values, DiskCache against one file per key, in fresh directories, interleaved (see ``BenchCacheCommand`` for
/// what each side does and does not fsync).
struct DiskBench {
    let root: String
    let repeats: Int
    /// Size labels to measure; all when empty.
    var only: Set<String> = []

    static let sizes: [(label: String, bytes: Int, count: Int)] = [
        ("2k", 2 * 1024, 3000), ("20k", 20 * 1024, 2000), ("100k", 100 * 1024, 600), ("1m", 1024 * 1024, 150),
    ]

    func run() throws -> [String: Any] {
        var out: [String: Any] = [:]
        for size in Self.sizes where only.isEmpty || only.contains(size.label) {
            let values = (0..<16).map { v in (0..<size.bytes).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ v) } }
            let keys = (0..<size.count).map { "https://images.example.com/photos/\($0).jpg?w=256" }
            var samples: [String: [Double]] = [:]
            for r in 0..<repeats {
                // "disk" is the default configuration (size-verified files); "disk_checksum" adds XXH64 on file reads.
                let sides =
                    size.bytes > 20 * 1024
                    ? ["disk", "disk_checksum", "files", "files_fsync"] : ["disk", "files", "files_fsync"]
                for side in sides {
                    let dir = root + "/\(side)-\(size.label)-\(r)"
                    func open() throws -> any BenchStore {
                        side.hasPrefix("disk")
                            ? try DiskStore(dir: dir, verification: side == "disk_checksum" ? .checksum : .size)
                            : FileStore(dir: dir, fsync: side == "files_fsync")
                    }
                    var store: (any BenchStore)? = try open()
                    let w0 = MonotonicClock.seconds()
                    for (i, key) in keys.enumerated() { try store!.write(values[i % values.count], key: key) }
                    let w = Double(keys.count) / (MonotonicClock.seconds() - w0)
                    // Three passes over every key in a scattered order (reads are fast; more of them steady the
                    // median); the last two alone are the "repeat" figure (every key read before in this process).
                    let order = (0..<keys.count).map { ($0 &* 7919) % keys.count }
                    func readPass() throws -> Double {
                        var found = 0
                        let r0 = MonotonicClock.seconds()
                        for i in order { if let v = store!.read(keys[i]), v.count == size.bytes { found += 1 } }
                        let seconds = MonotonicClock.seconds() - r0
                        guard found == order.count else {
                            throw BenchError("\(side) read back \(found) of \(order.count)")
                        }
                        return seconds
                    }
                    let passes = try (0..<3).map { _ in try readPass() }
                    // Then a fresh instance on the same directory (a restarted process: nothing mapped yet, the OS
                    // page cache still warm for both sides) reads every key once; its open is timed on its own.
                    store = nil  // releases the cache and its manifest
                    let o0 = MonotonicClock.seconds()
                    store = try open()
                    samples["\(side)_open_\(size.label)_ms", default: []].append((MonotonicClock.seconds() - o0) * 1e3)
                    let reopened = try readPass()
                    let n = Double(order.count)
                    samples["\(side)_write_\(size.label)_ops", default: []].append(w)
                    samples["\(side)_read_\(size.label)_ops", default: []].append(3 * n / passes.reduce(0, +))
                    samples["\(side)_read_repeat_\(size.label)_ops", default: []].append(
                        2 * n / (passes[1] + passes[2]))
                    samples["\(side)_read_reopened_\(size.label)_ops", default: []].append(n / reopened)
                    try? FileManager.default.removeItem(atPath: dir)
                }
            }
            for (k, v) in samples { out[k] = median(v) }
            for op in ["write", "read", "read_repeat", "read_reopened"]
            where samples["files_\(op)_\(size.label)_ops"] != nil {
                out["disk_vs_files_\(op)_\(size.label)"] =
                    median(samples["disk_\(op)_\(size.label)_ops"]!) / median(samples["files_\(op)_\(size.label)_ops"]!)
            }
        }
        // Verification cost: XXH64 over 1 MiB, the part of a 1 MB read the plain file read does not do.
        let mb = [UInt8](repeating: 7, count: 1 << 20)
        var hashTimes: [Double] = []
        for _ in 0..<50 {
            let t0 = MonotonicClock.seconds()
            _ = XXHash64.hash(mb)
            hashTimes.append(MonotonicClock.seconds() - t0)
        }
        out["xxh64_gb_per_s"] = Double(1 << 20) / median(hashTimes) / 1e9
        return out
    }

    /// Write and read speed per size with everything inline (threshold ∞) against everything in files (threshold 0).
    func thresholdSweep() throws -> [[String: Any]] {
        var rows: [[String: Any]] = []
        for bytes in [4096, 8192, 16384, 20480, 24576, 32768, 65536, 131072] {
            let value = (0..<bytes).map { UInt8(truncatingIfNeeded: $0 &* 13) }
            let keys = (0..<800).map { "key-\($0)" }
            var row: [String: Any] = ["bytes": bytes]
            for (label, threshold) in [("inline", Int.max), ("file", 0)] {
                var ws: [Double] = []
                var rs: [Double] = []
                for r in 0..<max(3, repeats) {
                    let dir = root + "/sweep-\(bytes)-\(label)-\(r)"
                    let cache = try DiskCache(
                        directory: dir,
                        configuration: DiskCacheConfiguration(sizeLimit: .max, inlineThreshold: threshold))
                    let w0 = MonotonicClock.seconds()
                    for key in keys { try cache.set(value, forKey: key) }
                    ws.append(Double(keys.count) / (MonotonicClock.seconds() - w0))
                    let r0 = MonotonicClock.seconds()
                    for key in keys.reversed() { _ = cache.data(forKey: key) }
                    rs.append(Double(keys.count) / (MonotonicClock.seconds() - r0))
                    try? FileManager.default.removeItem(atPath: dir)
                }
                row["\(label)_write_ops"] = median(ws)
                row["\(label)_read_ops"] = median(rs)
            }
            rows.append(row)
        }
        return rows
    }
}

struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ d: String) { description = d }
}

protocol BenchStore {
    func write(_ bytes: [UInt8], key: String) throws
    func read(_ key: String) -> [UInt8]?
}

/// DiskCache with no limits that would trim during the run.
struct DiskStore: BenchStore {
    let cache: DiskCache
    init(dir: String, verification: DiskCacheConfiguration.FileVerification) throws {
        cache = try DiskCache(
            directory: dir, configuration: DiskCacheConfiguration(sizeLimit: .max, fileVerification: verification))
    }
    func write(_ bytes: [UInt8], key: String) throws { try cache.set(bytes, forKey: key) }
    func read(_ key: String) -> [UInt8]? { cache.data(forKey: key) }
}

/// One file per key, named by a hash of the key (as SDWebImage's MD5 names): written to a temporary file and
/// renamed (`Data.write(options: .atomic)`), optionally fsynced first; read whole with open/fstat/read.
struct FileStore: BenchStore {
    let dir: String
    let fsync: Bool

    init(dir: String, fsync: Bool) {
        self.dir = dir
        self.fsync = fsync
        try? FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
    }

    func path(_ key: String) -> String { dir + "/" + Hex.encode(XXHash64.hash(Array(key.utf8))) }

    func write(_ bytes: [UInt8], key: String) throws {
        let final = path(key)
        let temporary = final + ".tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw BenchError("open \(temporary)") }
        let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        if fsync { _ = Glibc.fsync(fd) }
        close(fd)
        guard written == bytes.count, rename(temporary, final) == 0 else { throw BenchError("write \(final)") }
    }

    func read(_ key: String) -> [UInt8]? {
        let fd = open(path(key), O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0 else { return nil }
        let size = Int(st.st_size)
        var ok = false
        let bytes = [UInt8](unsafeUninitializedCapacity: size) { buffer, count in
            var done = 0
            while done < size {
                let n = Glibc.read(fd, buffer.baseAddress! + done, size - done)
                if n <= 0 { break }
                done += n
            }
            ok = done == size
            count = ok ? size : 0
        }
        return ok ? bytes : nil
    }
}
