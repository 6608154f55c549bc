import Dispatch

/// Everything a ``DiskCache`` shares between threads, kept inside its lock (a `Mutex`): the SQLite connection, the
/// identity of the manifest file it opened, running totals, read times not yet written, and the names of value
/// files being written (so the orphan reaper never takes a file whose row is about to commit).
struct DiskCacheState {
    var manifest: Manifest?
    var identity: FileIdentity?
    var count: Int
    var totalSize: Int
    var inlineCount: Int
    var pendingTouches: [String: Double] = [:]
    var inFlight: Set<String> = []
    var trimScheduled = false
    var flushScheduled = false
    var timer: (any DispatchSourceTimer)?

    init(_ opened: DiskCache.Opened) {
        manifest = opened.manifest
        identity = opened.identity
        count = opened.totals.count
        totalSize = opened.totals.size
        inlineCount = opened.totals.inline
    }

    /// Runs `body` on the manifest, recovering once: a corrupt manifest is moved aside and replaced by an empty
    /// one; a manifest deleted or replaced under us (directory deleted, another process's reset) is reopened.
    /// With `checkIdentity` (writes), first checks that the path still names the file that is open (one `stat`).
    mutating func withManifest<R>(
        _ cache: DiskCache, checkIdentity: Bool = false,
        _ body: (Manifest) throws(SQLiteError) -> R
    ) throws(DarkroomCacheError) -> R {
        if manifest == nil || (checkIdentity && POSIX.identity(cache.manifestPath) != identity) {
            try reopen(cache, moveAside: false)
        }
        do {
            return try body(manifest!)
        } catch {
            guard error.isCorruption || error.isMovedOrGone else {
                throw DarkroomCacheError(
                    error.primary == 5 ? .busy : .database, "manifest operation failed in \(cache.directory)",
                    systemMessage: error.message, underlying: error)
            }
            try reopen(cache, moveAside: error.isCorruption)
            do {
                return try body(manifest!)
            } catch {
                throw DarkroomCacheError(
                    .database, "manifest operation failed after recovery in \(cache.directory)",
                    systemMessage: error.message, underlying: error)
            }
        }
    }

    /// Closes the connection, optionally moves the manifest aside, and opens (creating) it again.
    mutating func reopen(_ cache: DiskCache, moveAside: Bool) throws(DarkroomCacheError) {
        manifest = nil  // closes the connection
        if moveAside { DiskCache.moveAside(cache.manifestPath) }
        let opened = try DiskCache.openManifest(
            directory: cache.directory, manifestPath: cache.manifestPath,
            files: cache.files, configuration: cache.configuration)
        manifest = opened.manifest
        identity = opened.identity
        count = opened.totals.count
        totalSize = opened.totals.size
        inlineCount = opened.totals.inline
        pendingTouches = [:]
    }

    /// Updates the totals for a row that was replaced or deleted.
    mutating func account(removing r: Manifest.Replaced) {
        count -= 1
        totalSize -= r.size
        if r.wasInline { inlineCount -= 1 }
    }

    /// Hands back the pending read times and clears them.
    mutating func takeTouches() -> [(key: String, time: Double)] {
        defer { pendingTouches = [:] }
        return pendingTouches.map { ($0.key, $0.value) }
    }
}

extension DiskCache {
    /// A freshly opened manifest.
    struct Opened {
        let manifest: Manifest
        let identity: FileIdentity?
        let totals: (count: Int, size: Int, inline: Int)
    }

    /// Creates the directories and opens the manifest; a manifest that is corrupt, not a database or of an
    /// unknown schema is moved aside and an empty one created.
    static func openManifest(
        directory: String, manifestPath: String, files: ValueFiles,
        configuration: DiskCacheConfiguration
    ) throws(DarkroomCacheError) -> Opened {
        try POSIX.makeDirectories(directory)
        try POSIX.makeDirectories(files.directory)
        var lastError: SQLiteError?
        for attempt in 0..<2 {
            do {
                let manifest = try Manifest(
                    path: manifestPath, fullSync: configuration.durability == .powerLoss,
                    exclusive: configuration.processSharing == .exclusive,
                    rowIndexLimit: configuration.rowIndexLimit)
                let totals = try manifest.totals()
                try manifest.fillRowIndex(inlineRows: totals.inline)  // nothing unless exclusive
                return Opened(manifest: manifest, identity: POSIX.identity(manifestPath), totals: totals)
            } catch {
                lastError = error
                guard attempt == 0, error.isCorruption else { break }
                moveAside(manifestPath)
            }
        }
        let code: DarkroomCacheError.Code =
            switch lastError?.primary {
            case 5, 6: .busy  // SQLITE_BUSY, SQLITE_LOCKED
            case 14: .io  // SQLITE_CANTOPEN
            default: .database
            }
        throw DarkroomCacheError(
            code, "cannot open the cache manifest \(manifestPath)",
            systemMessage: lastError?.message, underlying: lastError)
    }

    /// Renames a damaged manifest to `manifest.sqlite.corrupt` (replacing an older one) and removes its WAL and
    /// shared-memory files, so the next open starts empty. The value files it named become orphans.
    static func moveAside(_ manifestPath: String) {
        POSIX.rename(manifestPath, to: manifestPath + ".corrupt")
        POSIX.unlinkIfPresent(manifestPath + "-wal")
        POSIX.unlinkIfPresent(manifestPath + "-shm")
    }
}
