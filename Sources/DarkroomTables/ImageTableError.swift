import DarkroomSupport

/// The error every ``ImageTable`` operation throws: a stable ``code``, a human-readable ``message``, the
/// operating system's words (``systemMessage``, from `errno`) when a system call failed, and the error that caused
/// this one (say, the `DarkroomImageError` a draw closure threw) when there is one.
public struct ImageTableError: Error, Sendable, CustomStringConvertible, CodedError {
    /// What went wrong, as a stable machine-readable value.
    public enum Code: String, Sendable, Codable, CaseIterable {
        /// A system call on the table file or its index failed (open, read, write, map, sync, rename).
        case io
        /// Another process (or another open ``ImageTable`` in this one) holds the table: one writer, or any
        /// number of read-only openers, at a time.
        case busy
        /// A read-only open found no table file at the path.
        case notFound = "not_found"
        /// The file is not an image table, or its header is damaged (a read-only open; a writable one rebuilds).
        case corrupt
        /// A read-only open asked for a format whose size or pixel format differs from the table's.
        case formatMismatch = "format_mismatch"
        /// The table was opened read-only and cannot be written.
        case readOnly = "read_only"
        /// The table was closed.
        case closed
        /// A caller passed an impossible argument (a zero size, an entity id too long, a bitmap too large).
        case invalidArgument = "invalid_argument"
        /// Every entry is pinned or being written and the table's hard slot limit is reached.
        case full
        /// The draw closure of ``ImageTable/set(entity:source:draw:)`` threw; see ``underlying``.
        case drawFailed = "draw_failed"
    }

    /// What went wrong.
    public let code: Code
    /// A sentence for people, naming the path, value or limit involved.
    public let message: String
    /// `strerror(errno)` when a system call failed.
    public let systemMessage: String?
    /// The error that caused this one, if any.
    public let underlying: (any Error & Sendable)?

    /// Creates an error.
    public init(
        _ code: Code, _ message: String, systemMessage: String? = nil, underlying: (any Error & Sendable)? = nil
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

extension ImageTableError: SystemCallError {
    /// A failed system call's error: `.io`, the system's text as ``systemMessage``.
    package init(systemCall message: String, systemMessage: String, missing: Bool) {
        self.init(.io, message, systemMessage: systemMessage)
    }
}
