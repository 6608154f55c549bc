import DarkroomSupport
import Dispatch
import Synchronization

/// Trimming, batched access-time writes and orphan reaping. Each step holds the lock for one small SQLite
/// transaction (at most ``DiskCache/trimBatch`` rows) and deletes files after dropping it, so callers are never
/// blocked for longer than one batch.
extension DiskCache {
    // MARK: Public trimming

    /// Removes least recently used values until the total size is at most `size` bytes. Runs on the calling
    /// thread, in batches (other threads proceed between them).
    public func trim(toSize size: Int) throws(DarkroomCacheError) {
        try trim(excess: { s in (max(0, s.totalSize - max(0, size)), 0) })
    }

    /// Removes least recently used values until at most `count` remain.
    public func trim(toCount count: Int) throws(DarkroomCacheError) {
        try trim(excess: { s in (0, max(0, s.count - max(0, count))) })
    }

    /// Removes every value older than ``DiskCacheConfiguration/maxAge`` (nothing when there is no age limit).
    public func removeExpired() throws(DarkroomCacheError) {
        guard configuration.maxAge != nil else { return }
        let cutoff = oldestFresh()
        while true {
            let removed = try state.withLock { (s) throws(DarkroomCacheError) -> [Manifest.Replaced] in
                let rows = try s.withManifest(self, checkIdentity: true) { m throws(SQLiteError) in
                    try m.deleteModified(before: cutoff, limit: Self.trimBatch)
                }
                for r in rows { s.account(removing: r) }
                return rows
            }
            for r in removed { if let name = r.filename { files.remove(name) } }
            if removed.count < Self.trimBatch { break }
        }
    }

    /// Trims to the configured size and count limits, then to the free-space floor, then by age.
    /// Runs in the background after a write that exceeds a limit and on the maintenance timer.
    public func trimToLimits() {
        state.withLock { $0.trimScheduled = false }
        try? trim(toCount: configuration.countLimit)
        try? trim(toSize: configuration.sizeLimit)
        if configuration.minFreeDiskSpace > 0, let free = POSIX.freeSpace(directory),
            free < configuration.minFreeDiskSpace
        {
            let size = state.withLock { $0.totalSize }
            try? trim(toSize: size - (configuration.minFreeDiskSpace - free))
        }
        try? removeExpired()
        state.withLock { s in s.manifest?.releaseFreePages() }
    }

    /// Deletes least recently used rows in batches while `excess` reports (bytes, rows) over a limit. Pending read
    /// times are written first so the order is right, and totals are recounted from the manifest (other processes
    /// may have written to it).
    private func trim(excess: (DiskCacheState) -> (bytes: Int, count: Int)) throws(DarkroomCacheError) {
        try state.withLock { (s) throws(DarkroomCacheError) in
            let touches = s.takeTouches()
            let totals = try s.withManifest(self, checkIdentity: true) { m throws(SQLiteError) in
                try m.touch(touches)
                return try m.totals()
            }
            (s.count, s.totalSize, s.inlineCount) = totals
        }
        while true {
            let removed = try state.withLock { (s) throws(DarkroomCacheError) -> [Manifest.Replaced] in
                let (bytes, count) = excess(s)
                guard bytes > 0 || count > 0 else { return [] }
                let rows = try s.withManifest(self) { m throws(SQLiteError) in
                    try m.deleteLeastRecentlyUsed(bytes: bytes, count: count, limit: Self.trimBatch)
                }
                for r in rows { s.account(removing: r) }
                if rows.isEmpty { (s.count, s.totalSize, s.inlineCount) = (0, 0, 0) }
                return rows
            }
            if removed.isEmpty { break }
            for r in removed { if let name = r.filename { files.remove(name) } }
        }
    }

    // MARK: Background work

    /// Starts the maintenance timer: at once (trim, then reap orphans), then every
    /// ``DiskCacheConfiguration/trimInterval`` (trim).
    func startMaintenance() {
        let ns = Int(min(configuration.trimInterval.nanoseconds, UInt64(Int.max)))
        state.withLock { s in
            // The timer only wakes; the work runs on the maintenance thread, after any trim already queued there
            let timer = DispatchSource.makeTimerSource()
            timer.schedule(deadline: .now(), repeating: .nanoseconds(max(ns, 1_000_000)), leeway: .milliseconds(100))
            // Orphans come from crashes, so they are reaped once, in the first run after open (a full table scan);
            // later runs only trim.
            // The handler runs on a global queue's threads, one tick at a time but not always on the same thread
            let first = Locked(true)
            timer.setEventHandler { [weak self] in
                guard let self else { return }
                let reaps = first.withLock { isFirst in
                    defer { isFirst = false }
                    return isFirst
                }
                // Ticks that come while a run waits or runs are one run, as a timer on a busy serial queue coalesces
                guard !self.timedRunQueued.exchange(true, ordering: .acquiringAndReleasing) else { return }
                self.maintenance.enqueue { [weak self] _ in
                    guard let self else { return }
                    self.timedRunQueued.store(false, ordering: .releasing)
                    self.flush()
                    self.trimToLimits()
                    if reaps { self.reapOrphans() }
                }
            }
            timer.resume()
            s.timer = timer
        }
    }

    /// Writes the pending read times in the background.
    func scheduleTouchFlush() {
        state.withLock { $0.flushScheduled = true }
        maintenance.enqueue { [weak self] _ in
            guard let self else { return }
            self.state.withLock { $0.flushScheduled = false }
            self.flush()
        }
    }

    /// Reconciles the data directory with the manifest: deletes files no row names (a crashed writer's temporary
    /// or renamed files) once older than ``DiskCacheConfiguration/orphanGracePeriod``, and rows whose file is gone.
    /// The directory is listed before the manifest is read, so a file renamed in between is still in flight or
    /// already committed and is never taken for an orphan.
    public func reapOrphans() {
        let listing = POSIX.list(files.directory)
        guard
            let (rows, inFlight) = try? state.withLock({ (s) throws(DarkroomCacheError) in
                (try s.withManifest(self) { m throws(SQLiteError) in try m.fileRows() }, s.inFlight)
            })
        else { return }
        let referenced = Set(rows.map(\.filename))
        let cutoff = MonotonicClock.wallSeconds() - configuration.orphanGracePeriod.seconds
        var present = Set<String>()
        for entry in listing {
            present.insert(entry.name)
            let name =
                entry.name.hasPrefix(ValueFiles.temporaryPrefix)
                ? String(entry.name.dropFirst(ValueFiles.temporaryPrefix.count)) : entry.name
            let orphan = entry.name.hasPrefix(ValueFiles.temporaryPrefix) || !referenced.contains(name)
            if orphan, !inFlight.contains(name), entry.modified < cutoff { files.remove(entry.name) }
        }
        for row in rows where !present.contains(row.filename) && POSIX.identity(files.path(row.filename)) == nil {
            state.withLock { s in
                let r = try? s.withManifest(self) { m throws(SQLiteError) in
                    try m.delete(key: row.key, ifFilename: row.filename)
                }
                if let r = r ?? nil { s.account(removing: r) }
            }
        }
    }
}
