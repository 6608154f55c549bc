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
        guard !failed else { throw DarkroomImageError.ioError("cannot read \(path)") }
        return bytes
    }

    /// Reads a whole file unless its first bytes say it is to be left to a reader that takes the path (a video, far
    /// larger than an image and read by its decoder): `leavesUnread` sees up to `prefixBytes` of the file, and
    /// when it returns true nothing more is read and the result is nil. One open; the prefix is read once and kept
    /// as the start of the bytes. `limit` applies to a file read whole, refused before its rest is read.
    /// - Throws: `.notFound`, `.io` (with the errno text) or `.limitExceeded`.
    package static func read(
        _ path: String, limit: Int, prefixBytes: Int = 4096, unless leavesUnread: (UnsafeRawBufferPointer) -> Bool
    ) throws(DarkroomImageError) -> [UInt8]? {
        let (fd, size) = try openRegularFile(path, limit: .max)
        defer { close(fd) }
        var prefix = [UInt8](repeating: 0, count: min(size, prefixBytes))
        guard let got = prefix.withUnsafeMutableBytes({ POSIXIO.read(fd, into: $0) }) else {
            throw DarkroomImageError.ioError("cannot read \(path)")
        }
        prefix.removeLast(prefix.count - got)
        if prefix.withUnsafeBytes(leavesUnread) { return nil }
        guard size <= limit else {
            throw DarkroomImageError(.limitExceeded, "\(path) is \(size) bytes, over the input limit (\(limit))")
        }
        guard got < size else { return prefix }
        var failed = false
        let bytes = [UInt8](unsafeUninitializedCapacity: size) { buffer, initialized in
            let raw = UnsafeMutableRawBufferPointer(buffer)
            prefix.withUnsafeBytes { raw.copyMemory(from: $0) }
            let rest = POSIXIO.read(fd, into: UnsafeMutableRawBufferPointer(rebasing: raw[got...]))
            failed = rest == nil
            initialized = got + (rest ?? 0)
        }
        guard !failed else { throw DarkroomImageError.ioError("cannot read \(path)") }
        return bytes
    }

    /// Opens `path` for reading: a regular file of at most `limit` bytes. Returns the descriptor and the size.
    package static func openRegularFile(_ path: String, limit: Int) throws(DarkroomImageError) -> (fd: Int32, size: Int)
    {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { throw DarkroomImageError.ioError("cannot open \(path)") }
        var st = stat()
        guard fstat(fd, &st) == 0 else {
            let error = DarkroomImageError.ioError("cannot stat \(path)")
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

    /// `mkdir -p` (``POSIXIO/makeFolders(_:mode:)``) with an `.io` error naming the folder that could not be made.
    package static func makeFolders(_ path: String, mode: mode_t) throws(DarkroomImageError) {
        do {
            try POSIXIO.makeFolders(path, mode: mode)
        } catch {
            throw DarkroomImageError(.io, "\(error.what): \(error.systemMessage)")
        }
    }

}
