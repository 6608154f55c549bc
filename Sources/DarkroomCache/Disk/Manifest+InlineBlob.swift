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
    /// would grow by every write, without bound.
    /// Otherwise it is closed after each read, so another process's writes are seen.
    func readInline(rowid: Int64) throws(SQLiteError) -> [UInt8] {
        try readBlob(&inlineBlob, column: "inline_data", rowid: rowid)
    }

    /// Column `column` of row `rowid` through the kept handle `handle` (see ``readInline(rowid:)``).
    func readBlob(_ handle: inout OpaquePointer?, column: String, rowid: Int64) throws(SQLiteError) -> [UInt8] {
        defer {
            if !keepsInlineBlobOpen, let blob = handle {
                sqlite3_blob_close(blob)
                handle = nil
            }
        }
        let blob = try move(&handle, column: column, rowid: rowid)
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

    /// `handle` moved to row `rowid` (or opened there), `nil` when the row is gone or its column is `NULL`.
    func moveBlob(_ handle: inout OpaquePointer?, column: String, rowid: Int64) -> OpaquePointer? {
        try? move(&handle, column: column, rowid: rowid)
    }

    private func move(_ handle: inout OpaquePointer?, column: String, rowid: Int64) throws(SQLiteError) -> OpaquePointer
    {
        if let blob = handle {
            if sqlite3_blob_reopen(blob, rowid) == SQLITE_OK { return blob }
            sqlite3_blob_close(blob)  // a handle that failed to move is aborted for good
            handle = nil
        }
        var opened: OpaquePointer?
        let rc = sqlite3_blob_open(db.handle, "main", "entries", column, rowid, 0, &opened)
        guard rc == SQLITE_OK, let opened else {
            sqlite3_blob_close(opened)
            throw db.error(rc)
        }
        handle = opened
        return opened
    }

    /// Closes the kept blob handles (and so ends the read transaction they hold); a no-op when none is open.
    func closeReadHandles() {
        for handle in [inlineBlob, keyBlob, extendedBlob] { if let handle { sqlite3_blob_close(handle) } }
        inlineBlob = nil
        keyBlob = nil
        extendedBlob = nil
    }
}
