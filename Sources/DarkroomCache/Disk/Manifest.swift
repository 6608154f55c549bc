import CSQLite

/// The SQLite manifest of a ``DiskCache``: one row per key with its size, checksum, times, the value itself when
/// inline or the name of its file, and optional extended data. WAL mode; every statement prepared once.
/// Not thread-safe: the cache keeps it inside its `Mutex`.
///
/// Its parts are in three files by facet: the statements and transactions here, the in-memory row index
/// (`Manifest+RowIndex.swift`) and inline-value blobs (`Manifest+InlineBlob.swift`). One type, because all three
/// share the one SQLite connection and the lock around it.
final class Manifest {
    static let schemaVersion = 3
    /// Bytes of the database file reads map (`PRAGMA mmap_size`).
    static let mmapSize = 256 << 20
    /// Page size of a new manifest.
    static let pageSize = 8192
    let db: SQLiteDatabase
    /// A read handle on `entries.inline_data`, moved from row to row with `sqlite3_blob_reopen` (see
    /// Manifest+InlineBlob.swift). Kept open between reads only when this process holds the manifest exclusively.
    var inlineBlob: OpaquePointer?
    /// Read handles on `entries.key` and `entries.extended_data` for reads through ``rowIndex``, kept like
    /// ``inlineBlob``.
    var keyBlob: OpaquePointer?
    var extendedBlob: OpaquePointer?
    /// The inline rows this process wrote or read, by key (see Manifest+RowIndex.swift); empty unless exclusive.
    var rowIndex: RowIndex
    /// Whether the blob handles stay open between reads (exclusive locking: no other process can write, so the
    /// read transaction they hold open never hides another writer's rows).
    let keepsInlineBlobOpen: Bool

    /// A row as read for a lookup.
    struct Record {
        var size: Int
        var checksum: UInt64
        var inlineData: [UInt8]?
        var filename: String?
        var modified: Double
        var accessed: Double
        var extendedData: [UInt8]?
    }

    /// What an upsert or delete replaced: the old row's file (to unlink after commit) and size.
    struct Replaced {
        var filename: String?
        var size: Int
        var wasInline: Bool
    }

    /// Opens (creating if needed) the manifest at `path` and checks it: WAL mode, the requested `synchronous`,
    /// `PRAGMA quick_check`, and the schema version. Throws ``SQLiteError`` with a corruption code when the file is
    /// damaged, is not a database, or holds another schema, and `SQLITE_BUSY` when another process holds it
    /// exclusively (or, with `exclusive`, holds it at all). `rowIndexLimit` bounds ``rowIndex`` (used only with
    /// `exclusive`: another process's writes would make its hints stale). `prefaultsCheckpoints` is passed to
    /// ``SQLiteDatabase`` (turned off only by the test that measures what it saves).
    init(
        path: String, fullSync: Bool, exclusive: Bool, rowIndexLimit: Int = 0, prefaultsCheckpoints: Bool = true
    ) throws(SQLiteError) {
        db = try SQLiteDatabase(path: path, prefaultsCheckpoints: prefaultsCheckpoints)
        keepsInlineBlobOpen = exclusive
        rowIndex = RowIndex(limit: exclusive ? rowIndexLimit : 0)
        sqlite3_busy_timeout(db.handle, exclusive ? 250 : 5000)
        if exclusive {
            // Set before the first WAL access: no shared-memory wal-index and no POSIX lock calls per
            // transaction (two fewer syscalls per read, about eight fewer per write). Taken at once below.
            try db.execute("PRAGMA locking_mode=EXCLUSIVE")
        }
        // auto_vacuum only takes effect before the first table is created; harmless afterwards.
        try db.execute("PRAGMA page_size=\(Self.pageSize)")
        try db.execute("PRAGMA auto_vacuum=INCREMENTAL")
        guard try db.text("PRAGMA journal_mode=WAL")?.lowercased() == "wal" else {
            throw SQLiteError(code: SQLITE_CANTOPEN, message: "WAL mode unavailable")
        }
        if exclusive { try db.execute("BEGIN EXCLUSIVE; COMMIT") }
        try db.execute("PRAGMA synchronous=\(fullSync ? "FULL" : "NORMAL")")
        // Reads map the database instead of copying pages with pread (one syscall per page otherwise); the
        // mapping is read-only and shares the OS page cache, so it costs address space, not memory.
        try db.execute("PRAGMA mmap_size=\(Self.mmapSize)")
        let check = try db.text("PRAGMA quick_check") ?? ""
        guard check == "ok" else { throw SQLiteError(code: SQLITE_CORRUPT, message: "quick_check: \(check)") }
        let version = Int(try db.text("PRAGMA user_version") ?? "0") ?? 0
        if version == 0 {
            // Rowids are assigned in insertion order, so a write appends to the table's last page (a rowid derived
            // from the key scattered inserts and split pages: measured ~40 % more pages written per insert).
            // Blobs come last so metadata reads never touch their pages. The access index covers size and file
            // name, so LRU order and the totals computed at open scan the small index, never the table.
            try db.execute(
                """
                CREATE TABLE IF NOT EXISTS entries(
                    key TEXT PRIMARY KEY NOT NULL,
                    size INTEGER NOT NULL,
                    checksum INTEGER NOT NULL,
                    filename TEXT,
                    modified REAL NOT NULL,
                    accessed REAL NOT NULL,
                    extended_data BLOB,
                    inline_data BLOB);
                CREATE INDEX IF NOT EXISTS entries_by_access ON entries(accessed, size, filename);
                PRAGMA user_version=\(Self.schemaVersion);
                """)
        } else if version != Self.schemaVersion {
            throw SQLiteError(code: SQLITE_NOTADB, message: "unknown manifest schema version \(version)")
        }
    }

    // MARK: Rows

    deinit { closeReadHandles() }

    /// The row for `key`; an inline value is read with ``readInline(rowid:)`` straight into the returned array
    /// (one copy from the mapped pages), not through the statement's column buffer. A row ``rowIndex`` knows is
    /// read without the key index or a statement; one it does not know is remembered for the next read.
    func record(forKey key: String) throws(SQLiteError) -> Record? {
        if let indexed = indexedRecord(forKey: key) { return indexed }
        let s = try Statement(
            db,
            """
            SELECT size, checksum, filename, modified, accessed, extended_data, rowid FROM entries WHERE key=?
            """)
        s.bind(1, key)
        let found = try s.first { r in
            (
                record: Record(
                    size: Int(r.int64(0)), checksum: UInt64(bitPattern: r.int64(1)), inlineData: nil,
                    filename: r.text(2), modified: r.double(3), accessed: r.double(4), extendedData: r.bytes(5)),
                rowid: r.int64(6)
            )
        }
        guard let found else { return nil }
        var record = found.record
        if record.filename == nil {
            let value = try readInline(rowid: found.rowid)
            record.inlineData = value
            rowIndex.remember(
                RowIndex.Row(
                    rowid: found.rowid, checksum: record.checksum, modified: record.modified,
                    accessed: record.accessed, size: Int32(clamping: value.count),
                    hasExtendedData: record.extendedData != nil),
                forKey: key)
        }
        return record
    }

    func contains(_ key: String, modifiedAfter: Double) throws(SQLiteError) -> Bool {
        let s = try Statement(db, "SELECT 1 FROM entries WHERE key=? AND modified>=?")
        s.bind(1, key)
        s.bind(2, modifiedAfter)
        return try s.first { _ in true } ?? false
    }

    /// Inserts or replaces the row for `key` in one transaction, returning what it replaced.
    func upsert(
        key: String, size: Int, checksum: UInt64, inline: UnsafeRawBufferPointer?, filename: String?,
        extendedData: [UInt8]?, now: Double
    ) throws(SQLiteError) -> Replaced? {
        closeReadHandles()  // end the read transaction the handle holds, so the WAL can be checkpointed and reused
        rowIndex.forget(key)
        let replaced = try db.transaction { () throws(SQLiteError) -> Replaced? in
            let old = try replacedRow(key)
            let s = try Statement(
                db,
                """
                INSERT OR REPLACE INTO entries(key, size, checksum, filename, modified, accessed, extended_data, inline_data)
                VALUES(?, ?, ?, ?, ?, ?, ?, ?)
                """)
            s.bind(1, key)
            s.bind(2, Int64(size))
            s.bind(3, Int64(bitPattern: checksum))
            if let filename { s.bind(4, filename) } else { s.bindNull(4) }
            s.bind(5, now)
            s.bind(6, now)
            s.bind(7, extendedData)
            if let inline { s.bindStatic(8, inline) } else { s.bindNull(8) }
            try s.run()
            return old
        }
        if let inline {  // committed: the next read of it can skip the key index
            rowIndex.remember(
                RowIndex.Row(
                    rowid: sqlite3_last_insert_rowid(db.handle), checksum: checksum, modified: now, accessed: now,
                    size: Int32(clamping: inline.count), hasExtendedData: extendedData != nil),
                forKey: key)
        }
        return replaced
    }

    private func replacedRow(_ key: String) throws(SQLiteError) -> Replaced? {
        let s = try Statement(db, "SELECT filename, size, filename IS NULL FROM entries WHERE key=?")
        s.bind(1, key)
        return try s.first { r in Replaced(filename: r.text(0), size: Int(r.int64(1)), wasInline: r.int64(2) != 0) }
    }

    /// Deletes the row for `key`, returning what it held.
    func delete(key: String) throws(SQLiteError) -> Replaced? {
        closeReadHandles()  // end the read transaction the handle holds, so the WAL can be checkpointed and reused
        rowIndex.forget(key)
        let s = try Statement(db, "DELETE FROM entries WHERE key=? RETURNING filename, size, filename IS NULL")
        s.bind(1, key)
        return try s.first { r in Replaced(filename: r.text(0), size: Int(r.int64(1)), wasInline: r.int64(2) != 0) }
    }

    /// Deletes the row for `key` only if it is still the one that was read (same checksum and file).
    func deleteIfUnchanged(key: String, checksum: UInt64, filename: String?) throws(SQLiteError) -> Replaced? {
        closeReadHandles()  // end the read transaction the handle holds, so the WAL can be checkpointed and reused
        rowIndex.forget(key)
        let s = try Statement(
            db,
            """
            DELETE FROM entries WHERE key=? AND checksum=? AND filename IS ? RETURNING filename, size, filename IS NULL
            """)
        s.bind(1, key)
        s.bind(2, Int64(bitPattern: checksum))
        if let filename { s.bind(3, filename) } else { s.bindNull(3) }
        return try s.first { r in Replaced(filename: r.text(0), size: Int(r.int64(1)), wasInline: r.int64(2) != 0) }
    }

    /// Records read times, in one transaction.
    func touch(_ accesses: [(key: String, time: Double)]) throws(SQLiteError) {
        closeReadHandles()  // end the read transaction the handle holds, so the WAL can be checkpointed and reused
        guard !accesses.isEmpty else { return }
        try db.transaction { () throws(SQLiteError) in
            let s = try Statement(db, "UPDATE entries SET accessed=max(accessed, ?) WHERE key=?")
            for a in accesses {
                s.bind(1, a.time)
                s.bind(2, a.key)
                try s.run()
            }
        }
        for a in accesses { rowIndex.touched(a.key, at: a.time) }
    }

    /// Deletes the least recently used rows until `bytes` bytes and `count` rows have gone, at most `limit` rows,
    /// in one transaction, returning what they held.
    func deleteLeastRecentlyUsed(bytes: Int, count: Int, limit: Int) throws(SQLiteError) -> [Replaced] {
        closeReadHandles()  // end the read transaction the handle holds, so the WAL can be checkpointed and reused
        return try db.transaction { () throws(SQLiteError) -> [Replaced] in
            let select = try Statement(db, "SELECT key, size FROM entries ORDER BY accessed LIMIT ?")
            select.bind(1, Int64(limit))
            var victims: [String] = []
            var freed = 0
            try select.run { r in
                if freed < bytes || victims.count < count, let key = r.text(0) {
                    victims.append(key)
                    freed += Int(r.int64(1))
                }
            }
            var deleted: [Replaced] = []
            for key in victims { if let r = try delete(key: key) { deleted.append(r) } }
            return deleted
        }
    }

    /// Deletes up to `limit` rows written before `modifiedBefore`, in one transaction, returning what they held.
    func deleteModified(before modifiedBefore: Double, limit: Int) throws(SQLiteError) -> [Replaced] {
        closeReadHandles()  // end the read transaction the handle holds, so the WAL can be checkpointed and reused
        rowIndex.forgetAll()  // rare (age trimming): the index refills from the reads and writes that follow
        return try db.transaction { () throws(SQLiteError) -> [Replaced] in
            let s = try Statement(
                db,
                """
                DELETE FROM entries WHERE rowid IN (SELECT rowid FROM entries WHERE modified<? ORDER BY modified LIMIT ?)
                RETURNING filename, size, filename IS NULL
                """)
            s.bind(1, modifiedBefore)
            s.bind(2, Int64(limit))
            var deleted: [Replaced] = []
            try s.run { r in
                deleted.append(Replaced(filename: r.text(0), size: Int(r.int64(1)), wasInline: r.int64(2) != 0))
            }
            return deleted
        }
    }

    /// Deletes every row, returning the file names they referenced.
    func deleteAll() throws(SQLiteError) -> [String] {
        closeReadHandles()  // end the read transaction the handle holds, so the WAL can be checkpointed and reused
        rowIndex.forgetAll()
        return try db.transaction { () throws(SQLiteError) -> [String] in
            let s = try Statement(db, "DELETE FROM entries RETURNING filename")
            var names: [String] = []
            try s.run { r in if let n = r.text(0) { names.append(n) } }
            return names
        }
    }

    /// (count, total size, inline count) of every row.
    func totals() throws(SQLiteError) -> (count: Int, size: Int, inline: Int) {
        let s = try Statement(
            db, "SELECT COUNT(*), COALESCE(SUM(size), 0), COALESCE(SUM(filename IS NULL), 0) FROM entries")
        return try s.first { r in (Int(r.int64(0)), Int(r.int64(1)), Int(r.int64(2))) } ?? (0, 0, 0)
    }

    /// Every (key, filename) of a file-backed row.
    func fileRows() throws(SQLiteError) -> [(key: String, filename: String)] {
        let s = try Statement(db, "SELECT key, filename FROM entries WHERE filename IS NOT NULL")
        var rows: [(String, String)] = []
        try s.run { r in if let k = r.text(0), let f = r.text(1) { rows.append((k, f)) } }
        return rows
    }

    /// Returns freed pages to the file system (the database was created with `auto_vacuum=INCREMENTAL`).
    func releaseFreePages() {
        closeReadHandles()  // end the read transaction the handle holds, so the WAL can be checkpointed and reused
        _ = sqlite3_exec(db.handle, "PRAGMA incremental_vacuum", nil, nil, nil)
    }
}

extension Manifest {
    /// Deletes the row for `key` only if it still names `filename` (an orphan row whose file is gone).
    func delete(key: String, ifFilename filename: String) throws(SQLiteError) -> Replaced? {
        closeReadHandles()  // end the read transaction the handle holds, so the WAL can be checkpointed and reused
        rowIndex.forget(key)
        let s = try Statement(
            db,
            """
            DELETE FROM entries WHERE key=? AND filename=? RETURNING filename, size, filename IS NULL
            """)
        s.bind(1, key)
        s.bind(2, filename)
        return try s.first { r in Replaced(filename: r.text(0), size: Int(r.int64(1)), wasInline: r.int64(2) != 0) }
    }
}
