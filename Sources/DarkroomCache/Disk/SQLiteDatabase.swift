import CDarkroomSQLite
import CSQLite

/// `SQLITE_TRANSIENT`, a macro cast C-side: SQLite copies the bound bytes before the bind call returns.
let sqliteTransient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

/// A failed SQLite call: its extended result code and `sqlite3_errmsg`.
struct SQLiteError: Error, Sendable, CustomStringConvertible {
    let code: Int32
    let message: String

    /// The primary result code (`SQLITE_CORRUPT`, `SQLITE_BUSY`, …).
    var primary: Int32 { code & 0xff }
    /// The database file is damaged or is not a database: the cure is to move it aside and start empty.
    var isCorruption: Bool { primary == SQLITE_CORRUPT || primary == SQLITE_NOTADB }
    /// The file was unlinked or replaced under the open connection (the directory was deleted): reopen.
    var isMovedOrGone: Bool {
        // SQLITE_READONLY_DBMOVED and SQLITE_IOERR_DELETE_NOENT are function-like macros C-side.
        code == SQLITE_READONLY | (4 << 8) || primary == SQLITE_CANTOPEN || code == SQLITE_IOERR | (23 << 8)
    }

    var description: String { "SQLite \(code): \(message)" }
}

/// One SQLite connection and its prepared statements. Not thread-safe: ``DiskCache`` keeps it inside a `Mutex`.
/// Opened with `SQLITE_OPEN_NOMUTEX` (the caller serializes), extended result codes on.
///
/// With `prefaultsCheckpoints` (the default) the connection goes through the `darkroom-prefault` VFS
/// (CDarkroomSQLite), which passes every call to the default VFS and, after a WAL checkpoint has copied pages into
/// the database file, enters them into the connection's read mapping on the checkpointing (writing) thread, so the
/// first read of a value just written takes no page faults. Falls back to the default VFS if registration fails.
final class SQLiteDatabase {
    let handle: OpaquePointer
    private var statements: [String: OpaquePointer] = [:]

    init(path: String, prefaultsCheckpoints: Bool = true) throws(SQLiteError) {
        var db: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
        let vfs = prefaultsCheckpoints && darkroom_sqlite_register_vfs() == SQLITE_OK ? DARKROOM_SQLITE_VFS_NAME : nil
        let rc = sqlite3_open_v2(path, &db, flags, vfs)
        guard rc == SQLITE_OK, let db else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            sqlite3_close_v2(db)
            throw SQLiteError(code: rc, message: message)
        }
        handle = db
        sqlite3_extended_result_codes(db, 1)
    }

    deinit {
        for s in statements.values { sqlite3_finalize(s) }
        sqlite3_close_v2(handle)
    }

    func error(_ rc: Int32) -> SQLiteError {
        SQLiteError(code: rc, message: String(cString: sqlite3_errmsg(handle)))
    }

    /// Runs SQL with no results (several statements allowed).
    func execute(_ sql: String) throws(SQLiteError) {
        let rc = sqlite3_exec(handle, sql, nil, nil, nil)
        guard rc == SQLITE_OK else { throw error(rc) }
    }

    /// The first column of the first row of a query, as text (for pragmas).
    func text(_ sql: String) throws(SQLiteError) -> String? {
        let s = try statement(sql)
        defer { sqlite3_reset(s) }
        let rc = sqlite3_step(s)
        if rc == SQLITE_DONE { return nil }
        guard rc == SQLITE_ROW else { throw error(rc) }
        return sqlite3_column_text(s, 0).map { String(cString: $0) }
    }

    /// A cached prepared statement for `sql` (prepared once per connection).
    func statement(_ sql: String) throws(SQLiteError) -> OpaquePointer {
        if let s = statements[sql] { return s }
        var s: OpaquePointer?
        let rc = sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &s, nil)
        guard rc == SQLITE_OK, let s else { throw error(rc) }
        statements[sql] = s
        return s
    }

    /// Runs `body` inside `BEGIN IMMEDIATE … COMMIT`, rolling back if it throws.
    func transaction<R>(_ body: () throws(SQLiteError) -> R) throws(SQLiteError) -> R {
        try step("BEGIN IMMEDIATE")
        do {
            let result = try body()
            try step("COMMIT")
            return result
        } catch {
            if sqlite3_get_autocommit(handle) == 0 { _ = sqlite3_exec(handle, "ROLLBACK", nil, nil, nil) }
            throw error
        }
    }

    /// Steps a cached statement that returns no rows.
    private func step(_ sql: String) throws(SQLiteError) {
        let s = try statement(sql)
        let rc = sqlite3_step(s)
        sqlite3_reset(s)
        guard rc == SQLITE_DONE else { throw error(rc) }
    }
}

/// Binding and stepping helpers over a prepared statement. Every `run` resets the statement and clears bindings
/// afterwards, so borrowed buffers bound with `SQLITE_STATIC` are never read after the call.
struct Statement {
    let db: SQLiteDatabase
    let handle: OpaquePointer

    init(_ db: SQLiteDatabase, _ sql: String) throws(SQLiteError) {
        self.db = db
        handle = try db.statement(sql)
    }

    func bind(_ index: Int32, _ value: String) {
        sqlite3_bind_text(handle, index, value, -1, sqliteTransient)
    }

    func bind(_ index: Int32, _ value: Int64) { sqlite3_bind_int64(handle, index, value) }
    func bind(_ index: Int32, _ value: Double) { sqlite3_bind_double(handle, index, value) }
    func bindNull(_ index: Int32) { sqlite3_bind_null(handle, index) }

    /// Binds borrowed bytes without copying: valid only until the statement is reset.
    func bindStatic(_ index: Int32, _ bytes: UnsafeRawBufferPointer) {
        sqlite3_bind_blob64(
            handle, index, bytes.baseAddress ?? UnsafeRawPointer(bitPattern: 1), sqlite3_uint64(bytes.count), nil)
    }

    func bind(_ index: Int32, _ bytes: [UInt8]?) {
        guard let bytes else { return bindNull(index) }
        _ = bytes.withUnsafeBytes {
            sqlite3_bind_blob64(
                handle, index, $0.baseAddress ?? UnsafeRawPointer(bitPattern: 1), sqlite3_uint64($0.count),
                sqliteTransient)
        }
    }

    /// Steps through every row, calling `row` for each, then resets.
    func run(_ row: (Row) throws(SQLiteError) -> Void = { _ throws(SQLiteError) in }) throws(SQLiteError) {
        defer {
            sqlite3_reset(handle)
            sqlite3_clear_bindings(handle)
        }
        while true {
            let rc = sqlite3_step(handle)
            if rc == SQLITE_DONE { return }
            guard rc == SQLITE_ROW else { throw db.error(rc) }
            try row(Row(handle: handle))
        }
    }

    /// The first row mapped by `map`, or `nil` when there is none; then resets.
    func first<R>(_ map: (Row) -> R) throws(SQLiteError) -> R? {
        defer {
            sqlite3_reset(handle)
            sqlite3_clear_bindings(handle)
        }
        let rc = sqlite3_step(handle)
        if rc == SQLITE_DONE { return nil }
        guard rc == SQLITE_ROW else { throw db.error(rc) }
        return map(Row(handle: handle))
    }
}

/// Column access for the current row (valid only inside the `run`/`first` callback).
struct Row {
    let handle: OpaquePointer

    func isNull(_ i: Int32) -> Bool { sqlite3_column_type(handle, i) == SQLITE_NULL }
    func int64(_ i: Int32) -> Int64 { sqlite3_column_int64(handle, i) }
    func double(_ i: Int32) -> Double { sqlite3_column_double(handle, i) }
    func text(_ i: Int32) -> String? { sqlite3_column_text(handle, i).map { String(cString: $0) } }

    /// A copy of a blob column (`nil` for NULL).
    func bytes(_ i: Int32) -> [UInt8]? {
        if isNull(i) { return nil }
        let count = Int(sqlite3_column_bytes(handle, i))
        guard count > 0, let p = sqlite3_column_blob(handle, i) else { return [] }
        return [UInt8](UnsafeRawBufferPointer(start: p, count: count))
    }
}
