import CSQLite
import DarkroomSupport
import Glibc

/// What a manifest held exclusively remembers of the inline rows this process wrote or read, by a hash of the key,
/// so that reading one again skips the key index and the row's metadata: the key, the extended data and the value
/// are read through kept blob handles moved to the remembered rowid (one table descent, no statement).
///
/// A hint, never the truth: the key stored in the row is compared with the one asked for before anything is
/// returned, so a hash collision, a stale rowid or a row replaced in between falls back to the indexed lookup
/// instead of returning another key's value. Kept in step by the manifest's own writes (this process is the only
/// writer while it holds the file exclusively): a write forgets the key first and remembers it only once the row
/// has committed. Bounded by ``limit`` rows (about 80 bytes each); reaching it forgets them all and the index fills
/// again from the reads that follow.
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
    private var rows: [UInt64: Row] = [:]

    init(limit: Int) { self.limit = max(0, limit) }

    /// Rows remembered now.
    var count: Int { rows.count }

    static func hash(_ key: String) -> UInt64 {
        var key = key
        return key.withUTF8 { XXHash64.hash(UnsafeRawBufferPointer($0)) }
    }

    func row(forKey key: String) -> Row? {
        rows.isEmpty ? nil : rows[Self.hash(key)]
    }

    /// Remembers `row` for `key` (an inline row just read or committed).
    mutating func remember(_ row: Row, forKey key: String) {
        guard limit > 0, row.size >= 0 else { return }
        if rows.count >= limit { rows.removeAll() }
        rows[Self.hash(key)] = row
    }

    mutating func forget(_ key: String) {
        if !rows.isEmpty { rows[Self.hash(key)] = nil }
    }

    mutating func forgetAll() { rows.removeAll() }

    /// Records a read time written to the row.
    mutating func touched(_ key: String, at time: Double) {
        let hash = Self.hash(key)
        if let row = rows[hash], row.accessed < time { rows[hash]?.accessed = time }
    }
}

extension Manifest {
    /// The record for `key` read through the row index, or `nil` when the index does not know the key or what it
    /// knows no longer matches the row (the caller then takes the indexed lookup, and the stale hint is dropped).
    func indexedRecord(forKey key: String) -> Record? {
        guard let row = rowIndex.row(forKey: key) else { return nil }
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
