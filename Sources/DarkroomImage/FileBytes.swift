import DarkroomSupport

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Whole-file reads and atomic writes with POSIX calls: no Foundation, errors as ``DarkroomImageError``.
public enum FileBytes {
    /// Reads a whole file, refusing one larger than `limit` bytes before reading it.
    /// - Throws: `.io` (with the errno text) or `.limitExceeded`.
    public static func read(_ path: String, limit: Int = DecodeLimits.default.maxInputBytes) throws(DarkroomImageError)
        -> [UInt8]
    {
        let (fd, size) = try openRegularFile(path, limit: limit)
        defer { close(fd) }
        // Read straight into uninitialized storage: zero-filling first would touch every page twice
        var failed = false
        let bytes = [UInt8](unsafeUninitializedCapacity: size) { buffer, initialized in
            let done = POSIXIO.read(fd, into: UnsafeMutableRawBufferPointer(buffer))
            failed = done == nil
            initialized = done ?? 0
        }
        guard !failed else { throw ioError("cannot read \(path)") }
        return bytes
    }

    /// Opens `path` for reading: a regular file of at most `limit` bytes. Returns the descriptor and the size.
    static func openRegularFile(_ path: String, limit: Int) throws(DarkroomImageError) -> (fd: Int32, size: Int) {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw ioError("cannot open \(path)", missing: errno == ENOENT || errno == ENOTDIR) }
        var st = stat()
        guard fstat(fd, &st) == 0 else {
            let error = ioError("cannot stat \(path)")
            close(fd)
            throw error
        }
        guard (st.st_mode & S_IFMT) == S_IFREG else {
            close(fd)
            throw DarkroomImageError(.io, "\(path) is not a regular file")
        }
        let size = Int(st.st_size)
        guard size <= limit else {
            close(fd)
            throw DarkroomImageError(.limitExceeded, "\(path) is \(size) bytes, over the input limit (\(limit))")
        }
        return (fd, size)
    }

    /// Writes `bytes` to `path` atomically: a temporary file in the same directory, then rename. A reader
    /// never sees a partial file; on failure the temporary is removed and `path` is untouched.
    /// - Throws: `.io` with the errno text.
    public static func writeAtomically(_ bytes: [UInt8], to path: String) throws(DarkroomImageError) {
        let written = bytes.withUnsafeBytes { raw in
            Result { () throws(POSIXIO.Failure) in try POSIXIO.replace(path, with: raw, durable: false) }
        }
        if case .failure(let failure) = written {
            throw DarkroomImageError(.io, "\(failure.what): \(failure.systemMessage)")
        }
    }

    /// An `.io` error (`.notFound` when `missing`) with the system's text for the current `errno`.
    static func ioError(_ what: String, missing: Bool = false) -> DarkroomImageError {
        DarkroomImageError(missing ? .notFound : .io, "\(what): \(POSIXIO.lastError)")
    }
}
