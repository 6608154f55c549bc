#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A module's error type that reports failed system calls. Each module keeps its own error type and code; the
/// reading of `errno` after a failed call, and what counts as a missing file, live here once.
package protocol SystemCallError: CodedError {
    /// The error for a failed system call: `message` says what failed, `systemMessage` is the system's text for
    /// its `errno`, and `missing` is whether that `errno` says the file or a folder on its path does not exist.
    init(systemCall message: String, systemMessage: String, missing: Bool)
}

extension SystemCallError {
    /// The error for the system call that just failed: `what` (naming the file or the step), with the system's
    /// text for the current `errno`. Call it before anything else can change `errno`.
    package static func ioError(_ what: String) -> Self {
        let code = errno
        let text = strerror(code).map { String(cString: $0) } ?? "errno \(code)"
        return Self(systemCall: what, systemMessage: text, missing: code == ENOENT || code == ENOTDIR)
    }
}
