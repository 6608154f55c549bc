import DarkroomSupport

/// The error every DarkroomCache operation throws: a stable ``code``, a human-readable ``message``, what SQLite
/// or the operating system said (``systemMessage``), and the underlying error when there is one.
///
/// Reads never throw for a value that is merely missing, expired or failed verification: those read as absent.
public struct DarkroomCacheError: Error, Sendable, CustomStringConvertible, CodedError {
    /// What went wrong, as a stable machine-readable value.
    public enum Code: String, Sendable, Codable, CaseIterable {
        /// The cache directory or one of its files could not be created, read or written (`errno` is in
        /// ``DarkroomCacheError/systemMessage``).
        case io
        /// SQLite refused an operation that a reset (moving the database aside and starting empty) did not cure.
        case database
        /// Another process holds the cache directory (see ``DiskCacheConfiguration/ProcessSharing``).
        case busy
        /// A caller passed an impossible argument (an empty key, a negative limit).
        case invalidArgument = "invalid_argument"
        /// The cache was closed before the call.
        case closed
    }

    /// What went wrong.
    public let code: Code
    /// A sentence for people, naming the path, key or limit involved where there is one.
    public let message: String
    /// What SQLite (`sqlite3_errmsg`) or the C library (`strerror(errno)`) said, when it said something.
    public let systemMessage: String?
    /// The error that caused this one, if any.
    public let underlying: (any Error & Sendable)?

    /// Creates an error.
    public init(
        _ code: Code, _ message: String, systemMessage: String? = nil,
        underlying: (any Error & Sendable)? = nil
    ) {
        self.code = code
        self.message = message
        self.systemMessage = systemMessage
        self.underlying = underlying
    }

    /// `code: message (system: …) (cause: …)`, the format every Darkroom error prints.
    public var description: String { formattedDescription }

    package var details: [String] { systemMessage.map { ["system: \($0)"] } ?? [] }
}

extension DarkroomCacheError: SystemCallError {
    /// A failed system call's error: `.io`, the system's text as ``systemMessage``.
    package init(systemCall message: String, systemMessage: String, missing: Bool) {
        self.init(.io, message, systemMessage: systemMessage)
    }
}
