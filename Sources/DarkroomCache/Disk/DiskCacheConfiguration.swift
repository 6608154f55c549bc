/// How a ``DiskCache`` stores, verifies and trims. The defaults suit a thumbnail cache.
public struct DiskCacheConfiguration: Sendable, Equatable {
    /// What a completed `set` survives.
    public enum Durability: String, Sendable, Codable, CaseIterable {
        /// Survives the process being killed (`kill -9`) at any moment. After a power loss or OS crash the latest
        /// writes may be lost (SQLite WAL with `synchronous=NORMAL`: transactions since the last checkpoint can
        /// roll back), but a read still returns an old value, the new value or nothing, never a mix: value files
        /// are fsynced before they are renamed into place and every read checks size and checksum.
        case processCrash = "process_crash"
        /// Also survives power loss once `set` returns: `synchronous=FULL` (fsync per commit) and an fsync of the
        /// data directory after each rename. Several times slower per write.
        case powerLoss = "power_loss"
    }

    /// How much of a file-backed value a read checks before returning it. Inline values are always checksummed.
    public enum FileVerification: String, Sendable, Codable, CaseIterable {
        /// Size and XXH64 checksum: catches torn, truncated, foreign and bit-rotted files. Costs one pass over the
        /// value, of the order of reading it from the page cache.
        case checksum
        /// Size only. Crash safety does not depend on the checksum — file names are never reused and a file is
        /// complete and fsynced before any row names it — so this still never serves a torn write; it no longer
        /// catches a file damaged or replaced behind the cache's back with one of the same size.
        case size
    }

    /// Whether other processes may open the directory while this cache has it open.
    public enum ProcessSharing: String, Sendable, Codable, CaseIterable {
        /// This process holds the manifest exclusively until the cache is released; another process's open fails
        /// with ``DarkroomCacheError/Code/busy``. No lock calls per operation: the fast default.
        case exclusive
        /// Several processes may use the directory at once through SQLite's POSIX locks (about two extra system
        /// calls per read and eight per write). Each trims by its own limits; last writer wins.
        case shared
    }

    /// Total bytes of values kept; least recently used go first when exceeded. Default 512 MiB.
    public var sizeLimit: Int
    /// Most entries kept. Default unlimited.
    public var countLimit: Int
    /// Entries not written for longer than this read as absent and are trimmed. `nil` (default): no age limit.
    public var maxAge: Duration?
    /// The cache trims itself while the file system has less free space than this. Default 0: no such limit.
    public var minFreeDiskSpace: Int
    /// Values of at most this many bytes are stored inside SQLite; larger ones as files beside it. Default 20 KiB,
    /// chosen by measurement (docs/PERFORMANCE.md, "Caches").
    public var inlineThreshold: Int
    /// What a completed write survives. Default ``Durability/processCrash``.
    public var durability: Durability
    /// What a read of a file-backed value checks. Default ``FileVerification/size`` (crash safety comes from the
    /// write order, see ``FileVerification/size``); ``FileVerification/checksum`` adds bit-rot detection.
    public var fileVerification: FileVerification
    /// Whether other processes may use the directory at the same time. Default ``ProcessSharing/exclusive``.
    public var processSharing: ProcessSharing
    /// A read records its time (for least-recently-used order) only when the recorded one is older than this, so
    /// a hot key costs at most one write per interval and most reads write nothing. Default 60 s: trimming order
    /// is exact to a minute.
    public var accessTimeResolution: Duration
    /// How often the background trimmer checks age and free space (size and count are also checked after writes
    /// that exceed them). Default 60 s.
    public var trimInterval: Duration
    /// Orphan files (a crashed writer's) younger than this are left alone on open, so another process's write in
    /// flight is never reaped. Default 60 s.
    public var orphanGracePeriod: Duration
    /// With ``ProcessSharing/exclusive``, how many inline entries the cache remembers the rows of (about 80 bytes
    /// of memory each), so reading one takes one table descent instead of the key index and a statement
    /// (docs/PERFORMANCE.md, "Caches"). The newest entries are loaded at open (one pass over the table's leaf pages,
    /// O(limit)), then every entry written or read; past the limit, entries not read for a while are forgotten
    /// first. Default 50,000 (a few MB); 0 turns it off.
    public var rowIndexLimit: Int

    /// Creates a configuration; negative limits are treated as zero.
    public init(
        sizeLimit: Int = 512 << 20, countLimit: Int = .max, maxAge: Duration? = nil, minFreeDiskSpace: Int = 0,
        inlineThreshold: Int = 20 * 1024, durability: Durability = .processCrash,
        fileVerification: FileVerification = .size,
        processSharing: ProcessSharing = .exclusive, accessTimeResolution: Duration = .seconds(60),
        trimInterval: Duration = .seconds(60), orphanGracePeriod: Duration = .seconds(60),
        rowIndexLimit: Int = 50_000
    ) {
        self.sizeLimit = max(0, sizeLimit)
        self.countLimit = max(0, countLimit)
        self.maxAge = maxAge
        self.minFreeDiskSpace = max(0, minFreeDiskSpace)
        self.inlineThreshold = max(0, inlineThreshold)
        self.durability = durability
        self.processSharing = processSharing
        self.fileVerification = fileVerification
        self.accessTimeResolution = accessTimeResolution
        self.trimInterval = trimInterval
        self.orphanGracePeriod = orphanGracePeriod
        self.rowIndexLimit = max(0, rowIndexLimit)
    }
}

/// A ``DiskCache``'s totals at one instant.
public struct DiskCacheStatistics: Sendable, Equatable {
    /// Entries in the manifest.
    public var count: Int
    /// Total bytes of their values.
    public var totalSize: Int
    /// How many of them are stored inline in SQLite.
    public var inlineCount: Int
    /// Bytes the manifest database files (`manifest.sqlite`, its WAL) take on disk.
    public var databaseBytes: Int
}

/// One stored value with its metadata.
public struct DiskCacheEntry: Sendable, Equatable {
    /// The value.
    public var data: [UInt8]
    /// The caller's extended data stored with it, if any.
    public var extendedData: [UInt8]?
    /// When it was written (seconds since 1970).
    public var modified: Double
    /// When it was last read or written (seconds since 1970; reads are recorded in batches).
    public var accessed: Double
}
