import CSQLite

extension Manifest {
    /// The inline value of row `rowid`, read with `sqlite3_blob_read` straight into the returned array.
    ///
    /// Selecting the column instead makes SQLite assemble a value that spans overflow pages (a 20 KiB value spans
    /// three 8 KiB pages) into a buffer of its own, which is then copied again into the array: an allocation and
    /// a copy more per read. The handle is moved between rows with `sqlite3_blob_reopen` (no statement to
    /// prepare); one that fails to move (its row changed or vanished: SQLite expires the handle) is closed and
    /// opened afresh. With ``keepsInlineBlobOpen`` it stays open until the next write, which closes it first: an
    /// open handle holds the connection's read transaction, and while it is held the WAL can never restart, so it
    /// would grow by every write (measured: 180 MB after 3,000 interleaved 16 KiB writes, against under 16 MB).
    /// Otherwise it is closed after each read, so another process's writes are seen.
    func readInline(rowid: Int64) throws(SQLiteError) -> [UInt8] {
        defer { if !keepsInlineBlobOpen { closeInlineBlob() } }
        if let blob = inlineBlob, sqlite3_blob_reopen(blob, rowid) == SQLITE_OK {
            return try read(blob)
        }
        closeInlineBlob()
        var opened: OpaquePointer?
        let rc = sqlite3_blob_open(db.handle, "main", "entries", "inline_data", rowid, 0, &opened)
        guard rc == SQLITE_OK, let opened else {
            sqlite3_blob_close(opened)
            throw db.error(rc)
        }
        inlineBlob = opened
        return try read(opened)
    }

    private func read(_ blob: OpaquePointer) throws(SQLiteError) -> [UInt8] {
        let count = Int(sqlite3_blob_bytes(blob))
        guard count > 0 else { return [] }
        var rc = SQLITE_OK
        let bytes = [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            rc = sqlite3_blob_read(blob, buffer.baseAddress, Int32(count), 0)
            initialized = rc == SQLITE_OK ? count : 0
        }
        guard rc == SQLITE_OK else { throw db.error(rc) }
        return bytes
    }

    /// Closes the kept handle (and so ends the read transaction it holds); a no-op when none is open.
    func closeInlineBlob() {
        guard let blob = inlineBlob else { return }
        sqlite3_blob_close(blob)
        inlineBlob = nil
    }
}
