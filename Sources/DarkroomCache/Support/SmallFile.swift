import DarkroomSupport

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Reads small text files (`/proc`, `/sys`) with plain POSIX calls.
enum SmallFile {
    /// The file's text (at most 64 KiB), or `nil` if it cannot be opened.
    static func text(_ path: String) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 65536)
        let total = buffer.withUnsafeMutableBytes { POSIXIO.read(fd, into: $0) } ?? 0
        return String(decoding: buffer[..<total], as: UTF8.self)
    }
}
