import DarkroomSupport

/// The error every DarkroomImage operation throws: a stable ``code``, a human-readable ``message``, and
/// the codec's own words (``codecMessage``) or an underlying error when there is one.
public struct DarkroomImageError: Error, Sendable, CustomStringConvertible, CodedError {
    /// What went wrong, as a stable machine-readable value.
    public enum Code: String, Sendable, Codable, CaseIterable {
        /// The input is empty.
        case empty
        /// The bytes are not a format Darkroom decodes (checked by magic bytes, never by name or MIME type).
        case unsupportedFormat = "unsupported_format"
        /// The format is recognized but this variant (say, a 12-bit JPEG or an arithmetic-coded one) is not.
        case unsupportedFeature = "unsupported_feature"
        /// The input ends before the image does.
        case truncated
        /// The input is malformed.
        case corrupt
        /// A configured limit (``DecodeLimits``) would be exceeded.
        case limitExceeded = "limit_exceeded"
        /// Memory could not be allocated.
        case outOfMemory = "out_of_memory"
        /// A caller passed an impossible argument (a zero size, a bad quality).
        case invalidArgument = "invalid_argument"
        /// Encoding failed.
        case encodeFailed = "encode_failed"
        /// Reading or writing a file failed.
        case io
        /// The file does not exist.
        case notFound = "not_found"
        /// The process decoding the input ended (a crash, or killed) before it answered; the input is not retried.
        case decoderCrashed = "decoder_crashed"
    }

    /// What went wrong.
    public let code: Code
    /// A sentence for people, naming the value and the limit involved where there is one.
    public let message: String
    /// What the codec library itself said, when it said something.
    public let codecMessage: String?
    /// The error that caused this one, if any.
    public let underlying: (any Error & Sendable)?

    /// Creates an error.
    public init(
        _ code: Code, _ message: String, codecMessage: String? = nil,
        underlying: (any Error & Sendable)? = nil
    ) {
        self.code = code
        self.message = message
        self.codecMessage = codecMessage
        self.underlying = underlying
    }

    /// A failed system call's error: `.notFound` when the file or a folder on its path does not exist, else `.io`,
    /// the system's text in the message.
    package init(systemCall message: String, systemMessage: String, missing: Bool) {
        self.init(missing ? .notFound : .io, "\(message): \(systemMessage)")
    }

    /// `code: message (codec: …) (cause: …)`, the format every Darkroom error prints.
    public var description: String { formattedDescription }

    package var details: [String] { codecMessage.map { ["codec: \($0)"] } ?? [] }
}

extension DarkroomImageError: SystemCallError {}
