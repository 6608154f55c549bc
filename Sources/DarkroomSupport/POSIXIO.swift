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
}

#if canImport(Glibc)
    private let systemRead = Glibc.read
    private let systemWrite = Glibc.write
#else
    private let systemRead = Darwin.read
    private let systemWrite = Darwin.write
#endif
