import DarkroomSupport

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The files that hold values too large to inline, in `DIR/data`. Every file is written once under a temporary
/// name (`tmp-…`), fsynced, and renamed to a fresh random name that is never reused, so a name the manifest points
/// to always names one complete, immutable file (or nothing, after a crash or a concurrent removal).
struct ValueFiles: Sendable {
    static let temporaryPrefix = "tmp-"
    let directory: String

    enum ReadResult {
        case found([UInt8])
        case missing
        case wrongSize
    }

    /// A fresh 128-bit random name (32 hex digits).
    static func freshName() -> String {
        var rng = SystemRandomNumberGenerator()
        let a = rng.next() as UInt64
        let b = rng.next() as UInt64
        return Hex.encode(a) + Hex.encode(b)
    }

    func path(_ name: String) -> String { directory + "/" + name }

    /// Writes `bytes` to a temporary file, fsyncs it, renames it to `name`; with `syncDirectory`, fsyncs the
    /// directory too. Recreates the directory when it has been deleted. The temporary file is removed on failure.
    func write(_ bytes: UnsafeRawBufferPointer, name: String, syncDirectory: Bool) throws(DarkroomCacheError) {
        let temporary = path(Self.temporaryPrefix + name)
        var fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        if fd < 0 && errno == ENOENT {
            try POSIX.makeDirectories(directory)
            fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        }
        guard fd >= 0 else { throw DarkroomCacheError.ioError("cannot create \(temporary)") }
        let ok = POSIXIO.write(fd, bytes) && fsync(fd) == 0
        let failure = ok ? nil : DarkroomCacheError.ioError("cannot write \(temporary)")
        close(fd)
        if let failure {
            unlink(temporary)
            throw failure
        }
        guard rename(temporary, path(name)) == 0 else {
            let e = DarkroomCacheError.ioError("cannot rename \(temporary)")
            unlink(temporary)
            throw e
        }
        if syncDirectory { POSIXIO.syncDirectory(directory) }
    }

    /// Reads file `name`, which must be exactly `size` bytes.
    func read(_ name: String, size: Int) -> ReadResult {
        let fd = open(path(name), O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return .missing }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0, Int(st.st_size) == size else { return .wrongSize }
        var ok = true
        let bytes = [UInt8](unsafeUninitializedCapacity: size) { buffer, initialized in
            ok = POSIXIO.read(fd, into: UnsafeMutableRawBufferPointer(buffer)) == buffer.count
            initialized = ok ? size : 0
        }
        return ok ? .found(bytes) : .wrongSize
    }

    func remove(_ name: String) { unlink(path(name)) }
}
