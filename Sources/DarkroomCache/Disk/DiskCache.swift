import DarkroomSupport
import Dispatch
import Synchronization

/// Persistent bytes keyed by string: a SQLite manifest (WAL) that holds small values inline and names the files of
/// large ones, trimmed least-recently-used in the background.
///
/// **Costs.** A read of an inline value (≤ ``DiskCacheConfiguration/inlineThreshold``, 20 KiB by default) is one
/// indexed SQLite lookup; a larger value adds one file read. With `.exclusive` sharing, an inline value is read
/// without the key index when its rowid is remembered in memory — the newest entries' from open on, then those
/// this process writes or reads (bounded by ``DiskCacheConfiguration/rowIndexLimit``, tens of bytes each, loaded
/// at open in O(limit)) — and the key stored in the row is checked before the value is
/// returned. Every value is checked against its stored size
/// before it is returned; with ``DiskCacheConfiguration/FileVerification/checksum`` file values are also
/// checked against their XXH64 (one pass over the value). Inline values need no checksum: a SQLite row commits
/// whole or not at all.
/// A write is one SQLite transaction, plus, for a large value, a file written, fsynced and renamed before the row
/// commits. About every 8 MB written, a write also runs SQLite's checkpoint, and then maps the pages it copied into
/// the manifest so that first reads of new values take no page faults (work moved from the reader to the writer).
/// A read records its time at most once per ``DiskCacheConfiguration/accessTimeResolution`` per key, written in
/// batches off the read path. Calls block the calling thread on disk I/O: call them off a render loop,
/// or use the `async` variants, which run on the cache's own I/O threads.
///
/// **Never a torn value.** After `kill -9` (or, see ``DiskCacheConfiguration/Durability``, power loss) at any
/// moment, a read returns the old value, the new value or nothing. Files are named once and never rewritten;
/// a file is durable under its final name before the row that names it commits, so a crash leaves at worst an
/// orphan file, reaped on open. A value whose size (or, when verified, checksum) does not match reads as absent
/// and is removed.
///
/// **Recovery.** A manifest that fails to open, fails `PRAGMA quick_check` or reports corruption later is moved
/// aside (`manifest.sqlite.corrupt`) and the cache starts empty instead of failing. A cache directory deleted
/// under a running process is recreated by the next write.
///
/// **Threads and processes.** Safe for concurrent use within a process (one SQLite connection behind a lock;
/// file reads and writes happen outside it). Across processes, ``DiskCacheConfiguration/processSharing`` decides:
/// `.exclusive` (default) holds the directory until the cache is released and another process's open fails with
/// code `busy`; `.shared` lets several processes use it at once — SQLite's locking keeps the manifest consistent
/// and every read is verified, but each process trims by its own limits, any process may replace or evict a value
/// another wrote (last writer wins), and orphan files are reaped only after
/// ``DiskCacheConfiguration/orphanGracePeriod``. Don't share a directory between processes with different limits.
///
/// Layout: `DIR/manifest.sqlite` (+ `-wal`; `-shm` when shared) and `DIR/data/<random name>`.
///
/// Its facets are files of their own: reads and writes here, maintenance (trim, batched read times, orphan reaping)
/// in `DiskCache+Maintenance.swift`, the `async` variants in `DiskCache+Async.swift`; the SQLite rows live in
/// `Manifest` and the value files in `ValueFiles`.
public final class DiskCache: Sendable {
    /// The cache directory.
    public let directory: String
    /// The configuration it was opened with.
    public let configuration: DiskCacheConfiguration

    let manifestPath: String
    /// Wall-clock seconds for modification and access times (shared by processes, so not monotonic).
    let clock: @Sendable () -> Double
    let files: ValueFiles
    let state: Locked<DiskCacheState>
    /// Trims and read-time flushes, one at a time, on a thread of the cache's own.
    let maintenance = WorkQueue(name: "darkroom.disk-cache.maintenance", maxConcurrent: 1)
    /// Whether a timed maintenance run is queued and not yet started.
    let timedRunQueued = Atomic(false)
    /// The `async` variants' blocking calls (never on Swift's cooperative pool): up to four at once.
    let io = WorkQueue(name: "darkroom.disk-cache.io", maxConcurrent: 4)

    /// Pending read times are written once this many have accumulated (in the background).
    static let touchBatch = 256
    /// Rows deleted per transaction while trimming (the lock is dropped between batches).
    static let trimBatch = 64

    /// Opens (creating if needed) the cache in `directory`. Recovers rather than fails when the manifest is corrupt;
    /// throws ``DarkroomCacheError`` with code `io` only when the directory cannot be created or written.
    /// Starts a background timer (every ``DiskCacheConfiguration/trimInterval``) that trims by age and free space
    /// and reaps orphan files; the first run is scheduled at once.
    public convenience init(
        directory: String,
        configuration: DiskCacheConfiguration = DiskCacheConfiguration()
    ) throws(DarkroomCacheError) {
        try self.init(directory: directory, configuration: configuration, clock: MonotonicClock.wallSeconds)
    }

    /// Opens the cache with `clock` (wall-clock seconds) stamping writes and reads; for tests.
    init(
        directory: String, configuration: DiskCacheConfiguration,
        clock: @escaping @Sendable () -> Double
    ) throws(DarkroomCacheError) {
        self.clock = clock
        var dir = directory
        while dir.count > 1 && dir.hasSuffix("/") { dir.removeLast() }
        self.directory = dir
        self.configuration = configuration
        manifestPath = dir + "/manifest.sqlite"
        files = ValueFiles(directory: dir + "/data")
        let opened = try Self.openManifest(
            directory: dir, manifestPath: manifestPath, files: files,
            configuration: configuration)
        state = Locked(DiskCacheState(opened))
        startMaintenance()
    }

    deinit {
        state.withLock { $0.timer?.cancel() }
        // Pending read times are written best effort; the connection closes when the state is destroyed.
        state.withLock { s in
            if let manifest = s.manifest { try? manifest.touch(s.takeTouches()) }
        }
    }

    // MARK: Reading

    /// The value for `key`, or `nil` when absent, older than ``DiskCacheConfiguration/maxAge``, or unreadable
    /// (a missing or damaged file or row reads as absent, and is removed). Never returns bytes whose size and
    /// checksum do not match what was written.
    public func data(forKey key: String) -> [UInt8]? {
        entry(forKey: key)?.data
    }

    /// The value for `key` with its extended data and times; `nil` as for ``data(forKey:)-ap1k``.
    public func entry(forKey key: String) -> DiskCacheEntry? {
        for attempt in 0..<2 {
            guard let record = lookup(key) else { return nil }
            let bytes: [UInt8]
            if let inline = record.inlineData {
                bytes = inline
            } else if let name = record.filename {
                switch files.read(name, size: record.size) {
                case .found(let b): bytes = b
                case .missing:
                    // Replaced or removed since the lookup (retry once), or lost: drop the row.
                    if attempt == 0 { continue }
                    discard(key, record, deleteFile: false)
                    return nil
                case .wrongSize:
                    discard(key, record, deleteFile: true)
                    return nil
                }
            } else {
                bytes = []
            }
            // Inline values live inside SQLite's atomic WAL commits: a row is all there or not at all, so the
            // size check suffices. File values are checked as `fileVerification` says.
            let checksummed = record.filename != nil && configuration.fileVerification == .checksum
            guard bytes.count == record.size, !checksummed || XXHash64.hash(bytes) == record.checksum else {
                discard(key, record, deleteFile: true)
                return nil
            }
            return DiskCacheEntry(
                data: bytes, extendedData: record.extendedData, modified: record.modified,
                accessed: record.accessed)
        }
        return nil
    }

    /// Whether a fresh value for `key` is recorded (one indexed lookup; the value itself is not verified).
    public func contains(_ key: String) -> Bool {
        state.withLock { s in
            (try? s.withManifest(self) { m throws(SQLiteError) in try m.contains(key, modifiedAfter: oldestFresh()) })
                ?? false
        }
    }

    /// The row for `key` if fresh, recording the access for the batched access-time update.
    private func lookup(_ key: String) -> Manifest.Record? {
        let now = clock()
        let (record, flush) = state.withLock { s -> (Manifest.Record?, Bool) in
            guard let r = try? s.withManifest(self, { m throws(SQLiteError) in try m.record(forKey: key) }) else {
                return (nil, false)
            }
            if let maxAge = configuration.maxAge, r.modified < now - maxAge.seconds { return (nil, false) }
            // Access times only order trimming: one write per key per resolution interval is precise enough and
            // keeps the common read (a hot key) free of writes.
            if r.accessed <= now - configuration.accessTimeResolution.seconds { s.pendingTouches[key] = now }
            return (r, s.pendingTouches.count >= Self.touchBatch && !s.flushScheduled)
        }
        if flush { scheduleTouchFlush() }
        return record
    }

    /// Drops the row just read (if still unchanged) after it failed verification; optionally deletes its file.
    private func discard(_ key: String, _ record: Manifest.Record, deleteFile: Bool) {
        let removed = state.withLock { s in
            let r = try? s.withManifest(self) { m throws(SQLiteError) in
                try m.deleteIfUnchanged(key: key, checksum: record.checksum, filename: record.filename)
            }
            if let r = r ?? nil { s.account(removing: r) }
            return r ?? nil
        }
        if removed != nil, deleteFile, let name = record.filename { files.remove(name) }
    }

    // MARK: Writing

    /// Stores `data` (and optional `extendedData`) for `key`, replacing any older value. Values up to the inline
    /// threshold go into SQLite in one transaction; larger ones are written to a file that is fsynced and renamed
    /// before the row commits. Returns once the row is committed (see ``DiskCacheConfiguration/Durability``).
    /// May schedule a background trim. Throws ``DarkroomCacheError`` (`io`, `database`, `invalidArgument`).
    public func set(_ data: [UInt8], forKey key: String, extendedData: [UInt8]? = nil) throws(DarkroomCacheError) {
        // Array.withUnsafeBytes rethrows untyped errors: carry the typed one out in a Result.
        let result = data.withUnsafeBytes { bytes in
            Result { () throws(DarkroomCacheError) in try set(bytes: bytes, forKey: key, extendedData: extendedData) }
        }
        try result.get()
    }

    /// ``set(_:forKey:extendedData:)-9ezxo`` for borrowed bytes (no copy is made of values stored as files).
    public func set(bytes: UnsafeRawBufferPointer, forKey key: String, extendedData: [UInt8]? = nil)
        throws(DarkroomCacheError)
    {
        guard !key.isEmpty else { throw DarkroomCacheError(.invalidArgument, "empty key") }
        let checksum = XXHash64.hash(bytes)
        let inline = bytes.count <= configuration.inlineThreshold
        let filename: String? = inline ? nil : ValueFiles.freshName()
        if let name = filename {
            state.withLock { _ = $0.inFlight.insert(name) }
            do {
                try files.write(bytes, name: name, syncDirectory: configuration.durability == .powerLoss)
            } catch {
                state.withLock { _ = $0.inFlight.remove(name) }
                throw error
            }
        }
        let now = clock()
        let size = bytes.count
        let inlineBytes = BorrowedBytes(buffer: inline ? bytes : nil)
        let result = state.withLock { s -> Result<(Manifest.Replaced?, Bool), DarkroomCacheError> in
            defer { if let filename { s.inFlight.remove(filename) } }
            do throws(DarkroomCacheError) {
                let replaced = try s.withManifest(self, checkIdentity: true) { m throws(SQLiteError) in
                    try m.upsert(
                        key: key, size: size, checksum: checksum, inline: inlineBytes.buffer,
                        filename: filename, extendedData: extendedData, now: now)
                }
                if let replaced { s.account(removing: replaced) }
                s.count += 1
                s.totalSize += size
                if inline { s.inlineCount += 1 }
                s.pendingTouches[key] = nil
                let overLimits = s.totalSize > configuration.sizeLimit || s.count > configuration.countLimit
                let scheduleTrim = overLimits && !s.trimScheduled
                if scheduleTrim { s.trimScheduled = true }
                return .success((replaced, scheduleTrim))
            } catch {
                return .failure(error)
            }
        }
        switch result {
        case .success(let (replaced, scheduleTrim)):
            if let old = replaced?.filename, old != filename { files.remove(old) }
            if scheduleTrim { maintenance.enqueue { [weak self] _ in self?.trimToLimits() } }
        case .failure(let error):
            if let filename { files.remove(filename) }
            throw error
        }
    }

    /// Removes the value for `key` (nothing happens when absent).
    public func removeValue(forKey key: String) throws(DarkroomCacheError) {
        let removed = try state.withLock { (s) throws(DarkroomCacheError) -> Manifest.Replaced? in
            let r = try s.withManifest(self, checkIdentity: true) { m throws(SQLiteError) in try m.delete(key: key) }
            if let r { s.account(removing: r) }
            s.pendingTouches[key] = nil
            return r
        }
        if let name = removed?.filename { files.remove(name) }
    }

    /// Removes every value.
    public func removeAll() throws(DarkroomCacheError) {
        let names = try state.withLock { (s) throws(DarkroomCacheError) -> [String] in
            let names = try s.withManifest(self, checkIdentity: true) { m throws(SQLiteError) in try m.deleteAll() }
            s.count = 0
            s.totalSize = 0
            s.inlineCount = 0
            s.pendingTouches = [:]
            return names
        }
        for name in names { files.remove(name) }
        state.withLock { s in s.manifest?.releaseFreePages() }
    }

    // MARK: Totals

    /// Entry count, total value size and inline count (as this process last counted them), and the bytes the
    /// manifest takes on disk.
    public var statistics: DiskCacheStatistics {
        let (count, size, inline) = state.withLock { ($0.count, $0.totalSize, $0.inlineCount) }
        let dbBytes = POSIX.fileSize(manifestPath) + POSIX.fileSize(manifestPath + "-wal")
        return DiskCacheStatistics(count: count, totalSize: size, inlineCount: inline, databaseBytes: dbBytes)
    }

    /// Writes pending read times now (they are otherwise written in batches in the background).
    public func flush() {
        state.withLock { s in
            guard let m = s.manifest else { return }
            let touches = s.takeTouches()
            try? m.touch(touches)
        }
    }

    /// Entries written before this wall-clock time are stale.
    func oldestFresh() -> Double {
        configuration.maxAge.map { clock() - $0.seconds } ?? -Double.infinity
    }
}

extension Duration {
    /// Seconds as a `Double`.
    var seconds: Double {
        let (s, atto) = components
        return Double(s) + Double(atto) / 1e18
    }
}

/// A caller's borrowed bytes carried into the manifest lock for an inline write.
///
/// `@unchecked Sendable` is safe: the pointer is bound and stepped synchronously inside `withLock` during the
/// `set` call that borrowed it, and the statement is reset (bindings cleared) before `upsert` returns, so the
/// pointer is never read after the borrow ends nor by any other thread.
struct BorrowedBytes: @unchecked Sendable {
    let buffer: UnsafeRawBufferPointer?
}
