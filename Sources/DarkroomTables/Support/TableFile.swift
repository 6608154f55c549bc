import DarkroomSupport

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Thin, `errno`-checking wrappers over the POSIX calls a table makes on its file.
enum TableFile {
    /// The system page size (the unit entries and chunks are rounded to).
    static let pageSize: Int = Int(sysconf(Int32(_SC_PAGESIZE)))

    static func size(_ fd: Int32) throws(ImageTableError) -> Int {
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw ImageTableError.ioError("cannot stat the table") }
        return Int(st.st_size)
    }

    /// Reads exactly `count` bytes at `offset` into `buffer`; short only at end of file (returns bytes read).
    @discardableResult
    static func read(_ fd: Int32, into buffer: UnsafeMutableRawPointer, count: Int, at offset: Int)
        throws(ImageTableError) -> Int
    {
        guard let done = POSIXIO.read(fd, into: UnsafeMutableRawBufferPointer(start: buffer, count: count), at: offset)
        else {
            throw ImageTableError.ioError("cannot read \(count) bytes at offset \(offset)")
        }
        return done
    }

    /// Writes all of `bytes` at `offset`.
    static func write(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, at offset: Int) throws(ImageTableError) {
        guard POSIXIO.write(fd, bytes, at: offset) else {
            throw ImageTableError.ioError("cannot write \(bytes.count) bytes at offset \(offset)")
        }
    }

    static func write(_ fd: Int32, _ bytes: [UInt8], at offset: Int) throws(ImageTableError) {
        try bytes.withBytes { (raw) throws(ImageTableError) in try write(fd, raw, at: offset) }
    }

    static func truncate(_ fd: Int32, to size: Int) throws(ImageTableError) {
        while ftruncate(fd, off_t(size)) != 0 {
            if errno == EINTR { continue }
            throw ImageTableError.ioError("cannot resize the table to \(size) bytes")
        }
    }

    static func sync(_ fd: Int32) throws(ImageTableError) {
        guard fdatasync(fd) == 0 else { throw ImageTableError.ioError("cannot sync the table") }
    }

    /// Writes `bytes` to `path` so that a crash leaves either the old file or the new one
    /// (`POSIXIO.replace(_:with:durable:)`, durable).
    static func replace(_ path: String, with bytes: [UInt8]) throws(ImageTableError) {
        let written = bytes.withUnsafeBytes { raw in
            Result { () throws(POSIXIO.Failure) in try POSIXIO.replace(path, with: raw, durable: true) }
        }
        if case .failure(let failure) = written {
            throw ImageTableError(.io, failure.what, systemMessage: failure.systemMessage)
        }
    }

    /// The whole file at `path`, or `nil` if it cannot be read.
    static func readWhole(_ path: String) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        guard let size = try? size(fd), size > 0 else { return nil }
        var bytes = [UInt8](repeating: 0, count: size)
        let n = bytes.withUnsafeMutableBytes { raw in (try? read(fd, into: raw.baseAddress!, count: size, at: 0)) ?? -1
        }
        return n == size ? bytes : nil
    }
}
