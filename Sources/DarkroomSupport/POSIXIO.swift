#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The EINTR-safe read and write loops every module's file code is built on.
///
/// Each call retries on `EINTR` and on short transfers, so a signal or a pipe never yields a partial result that
/// looks complete. They return counts, not errors: the caller maps a failure (`errno` is left as the system set it)
/// to its own module's error type with `POSIXIO.lastError`.
package enum POSIXIO {
    /// `strerror(errno)` now.
    package static var lastError: String {
        let code = errno
        return strerror(code).map { String(cString: $0) } ?? "errno \(code)"
    }

    /// Reads into `buffer` until it is full or the file ends, from the current position (`offset == nil`) or
    /// with `pread` from `offset`. Returns the bytes read (fewer than `buffer.count` only at end of file), or `nil`
    /// on an error other than EINTR.
    package static func read(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer, at offset: Int? = nil) -> Int? {
        guard let base = buffer.baseAddress else { return 0 }
        var done = 0
        while done < buffer.count {
            let n: Int
            if let offset {
                n = pread(fd, base + done, buffer.count - done, off_t(offset + done))
            } else {
                n = systemRead(fd, base + done, buffer.count - done)
            }
            if n < 0 {
                if errno == EINTR { continue }
                return nil
            }
            if n == 0 { break }
            done += n
        }
        return done
    }

    /// Writes all of `bytes` at the current position (`offset == nil`) or with `pwrite` at `offset`; false on an
    /// error other than EINTR (or a write that makes no progress).
    package static func write(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, at offset: Int? = nil) -> Bool {
        guard let base = bytes.baseAddress else { return true }
        var done = 0
        while done < bytes.count {
            let n: Int
            if let offset {
                n = pwrite(fd, base + done, bytes.count - done, off_t(offset + done))
            } else {
                n = systemWrite(fd, base + done, bytes.count - done)
            }
            if n < 0 {
                if errno == EINTR { continue }
                return false
            }
            if n == 0 { return false }
            done += n
        }
        return true
    }

    /// What failed in a file operation: the step (naming the file) and the system's text for `errno` then. Each
    /// module maps it to its own error type.
    package struct Failure: Error, Sendable {
        /// The step that failed, e.g. `cannot rename a.tmp-1-2 to a`.
        package let what: String
        /// `strerror(errno)` at the failure.
        package let systemMessage: String

        init(_ what: String) { (self.what, self.systemMessage) = (what, POSIXIO.lastError) }
    }

    /// Replaces the file at `path` with `bytes` so a reader sees the old file or the new one, never part of
    /// either: a temporary file in the same directory (a fresh name), written whole, then renamed over `path`. With
    /// `durable`, the data is synced before the rename and the directory after, so the new file also survives power
    /// loss. On failure the temporary file is removed and `path` is untouched. Cost: one file write (plus two
    /// syncs when durable).
    package static func replace(_ path: String, with bytes: UnsafeRawBufferPointer, durable: Bool)
        throws(Failure)
    {
        let temporary = path + ".tmp-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw Failure("cannot create \(temporary)") }
        var failure: Failure?
        if !write(fd, bytes) {
            failure = Failure("cannot write \(temporary)")
        } else if durable && fdatasync(fd) != 0 {
            failure = Failure("cannot sync \(temporary)")
        }
        close(fd)
        if failure == nil && rename(temporary, path) != 0 { failure = Failure("cannot rename \(temporary) to \(path)") }
        if let failure {
            unlink(temporary)
            throw failure
        }
        if durable { syncDirectory(of: path) }
    }

    /// `mkdir -p`: creates `path` and each missing folder above it with `mode` (a relative path from the working
    /// folder). Folders that exist are left as they are. Cost: one `mkdir` per component.
    package static func makeFolders(_ path: String, mode: mode_t) throws(Failure) {
        var current = path.hasPrefix("/") ? "" : "."
        for part in path.split(separator: "/") {
            current += "/" + part
            if mkdir(current, mode) != 0 && errno != EEXIST { throw Failure("cannot create \(current)") }
        }
    }

    /// `fsync` of `directory`, so a rename or a new file in it survives power loss (best effort: errors ignored).
    package static func syncDirectory(_ directory: String) {
        let fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return }
        _ = fsync(fd)
        close(fd)
    }

    /// ``syncDirectory(_:)`` of the directory holding `path`.
    package static func syncDirectory(of path: String) {
        syncDirectory(path.lastIndex(of: "/").map { String(path[..<$0]) }.map { $0.isEmpty ? "/" : $0 } ?? ".")
    }
}

#if canImport(Glibc)
    private let systemRead = Glibc.read
    private let systemWrite = Glibc.write
#else
    private let systemRead = Darwin.read
    private let systemWrite = Darwin.write
#endif
