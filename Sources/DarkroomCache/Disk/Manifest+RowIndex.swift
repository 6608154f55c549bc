import CSQLite
import DarkroomSupport
import Glibc

/// What a manifest held exclusively remembers of its inline rows, by a hash of the key, so that reading one skips
/// the key index and the row's metadata: the key, the extended data and the value are read through kept blob handles
/// moved to the remembered rowid (one table descent, no statement). Filled at open from the newest rows (so a
/// restarted process reads at this speed from its first read), then by every inline row this process writes or
/// reads.
///
/// A hint, never the truth: the key stored in the row is compared with the one asked for before anything is
/// returned, so a hash collision, a stale rowid or a row replaced in between falls back to the indexed lookup
/// instead of returning another key's value. Kept in step by the manifest's own writes (this process is the only
/// writer while it holds the file exclusively): a write forgets the key first and remembers it only once the row
/// has committed.
///
/// Bounded by ``limit`` rows (about 80 bytes each) in two generations of up to half the limit: rows land in the
/// recent one; when it is full it becomes the older one and the previous older one is dropped. A read found in the
/// older generation moves to the recent one, so rows in use survive and rows not read for a generation go.
struct RowIndex {
    /// What a read needs of a row besides its bytes.
    struct Row {
        var rowid: Int64
        var checksum: UInt64
        var modified: Double
        var accessed: Double
        var size: Int32
        var hasExtendedData: Bool
    }

    /// Most rows remembered; 0 remembers none.
    let limit: Int
    private var recent: [UInt64: Row] = [:]
    private var older: [UInt64: Row] = [:]

    init(limit: Int) { self.limit = max(0, limit) }

    /// Rows remembered now.
    var count: Int { recent.count + older.count }

    /// Rows one generation holds at most (both together stay within ``limit``).
    private var generation: Int { max(1, limit / 2) }

    static func hash(_ key: String) -> UInt64 {
        var key = key
        return key.withUTF8 { hash(utf8: UnsafeRawBufferPointer($0)) }
    }

    /// The hash of a key given as its UTF-8 bytes (a key column read in place); equal to ``hash(_:)`` of that key.
    static func hash(utf8 key: UnsafeRawBufferPointer) -> UInt64 { XXHash64.hash(key) }

    /// The row for `key`, left in its generation (an inspection; reads go through ``use(_:)``).
    func row(forKey key: String) -> Row? {
        if recent.isEmpty && older.isEmpty { return nil }
        let hash = Self.hash(key)
        return recent[hash] ?? older[hash]
    }

    /// The row for `key`, moved to the recent generation if it was in the older one.
    mutating func use(_ key: String) -> Row? {
        if recent.isEmpty && older.isEmpty { return nil }
        let hash = Self.hash(key)
        if let row = recent[hash] { return row }
        guard let row = older.removeValue(forKey: hash) else { return nil }
        insert(row, hash: hash)
        return row
    }

    /// Remembers `row` for `key` (an inline row just read or committed).
    mutating func remember(_ row: Row, forKey key: String) {
        guard limit > 0, row.size >= 0 else { return }
        let hash = Self.hash(key)
        if !older.isEmpty { older[hash] = nil }
        insert(row, hash: hash)
    }

    private mutating func insert(_ row: Row, hash: UInt64) {
        if recent.count >= generation && recent[hash] == nil {
            older = limit >= 2 ? recent : [:]
            recent = [:]
            recent.reserveCapacity(generation)
        }
        recent[hash] = row
    }

    /// Makes room for `rows` loaded at open without growing the tables as they fill.
    mutating func reserve(_ rows: Int) {
        recent.reserveCapacity(min(rows, generation))
        if limit >= 2 { older.reserveCapacity(min(max(0, rows - generation), limit - generation)) }
    }

    /// Loads a row read from the table at open, before any other use: the first half of the limit fills the recent
    /// generation, the second the older one; past both it is not kept.
    mutating func load(_ row: Row, keyHash hash: UInt64) {
        guard limit > 0, row.size >= 0 else { return }
        if recent.count < generation {
            recent[hash] = row
        } else if limit >= 2 && older.count < limit - generation {
            older[hash] = row
        }
    }

    mutating func forget(_ key: String) {
        if recent.isEmpty && older.isEmpty { return }
        let hash = Self.hash(key)
        recent[hash] = nil
        if !older.isEmpty { older[hash] = nil }
    }

    mutating func forgetAll() {
        recent.removeAll()
        older.removeAll()
    }

    /// Records a read time written to the row.
    mutating func touched(_ key: String, at time: Double) {
        let hash = Self.hash(key)
        if let row = recent[hash], row.accessed < time { recent[hash]?.accessed = time }
        if let row = older[hash], row.accessed < time { older[hash]?.accessed = time }
    }
}

extension Manifest {
    /// The record for `key` read through the row index, or `nil` when the index does not know the key or what it
    /// knows no longer matches the row (the caller then takes the indexed lookup, and the stale hint is dropped).
    func indexedRecord(forKey key: String) -> Record? {
        guard let row = rowIndex.use(key) else { return nil }
        guard storedKey(rowid: row.rowid, equals: key) else {
            rowIndex.forget(key)
            return nil
        }
        var extendedData: [UInt8]?
        if row.hasExtendedData {
            guard let bytes = try? readBlob(&extendedBlob, column: "extended_data", rowid: row.rowid) else {
                rowIndex.forget(key)
                return nil
            }
            extendedData = bytes
        }
        guard let value = try? readInline(rowid: row.rowid), value.count == Int(row.size) else {
            rowIndex.forget(key)
            return nil
        }
        return Record(
            size: value.count, checksum: row.checksum, inlineData: value, filename: nil, modified: row.modified,
            accessed: row.accessed, extendedData: extendedData)
    }

    /// Fills ``rowIndex`` from the inline rows, newest first, up to its limit: one pass over the table's leaf pages
    /// (the values' overflow pages are not read), sized up front for the `inlineRows` the table holds.
    func fillRowIndex(inlineRows: Int) throws(SQLiteError) {
        guard rowIndex.limit > 0, inlineRows > 0 else { return }
        rowIndex.reserve(inlineRows)
        let s = try Statement(
            db,
            """
            SELECT key, rowid, checksum, modified, accessed, size, extended_data IS NOT NULL FROM entries
            WHERE filename IS NULL ORDER BY rowid DESC LIMIT ?
            """)
        s.bind(1, Int64(rowIndex.limit))
        try s.run { r in
            guard let text = sqlite3_column_text(r.handle, 0) else { return }
            let key = UnsafeRawBufferPointer(start: text, count: Int(sqlite3_column_bytes(r.handle, 0)))
            rowIndex.load(
                RowIndex.Row(
                    rowid: r.int64(1), checksum: UInt64(bitPattern: r.int64(2)), modified: r.double(3),
                    accessed: r.double(4), size: Int32(clamping: r.int64(5)), hasExtendedData: r.int64(6) != 0),
                keyHash: RowIndex.hash(utf8: key))
        }
    }

    /// Whether row `rowid`'s key is `key`, read through a kept blob handle on the key column.
    private func storedKey(rowid: Int64, equals key: String) -> Bool {
        guard let blob = moveBlob(&keyBlob, column: "key", rowid: rowid) else { return false }
        var key = key
        return key.withUTF8 { wanted in
            guard Int(sqlite3_blob_bytes(blob)) == wanted.count else { return false }
            guard wanted.count > 0 else { return true }
            return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: wanted.count) { stored in
                sqlite3_blob_read(blob, stored.baseAddress, Int32(wanted.count), 0) == SQLITE_OK
                    && memcmp(stored.baseAddress!, wanted.baseAddress!, wanted.count) == 0
            }
        }
    }
}
