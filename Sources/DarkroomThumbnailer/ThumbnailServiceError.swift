import DarkroomSupport

/// Why the thumbnail service could not start, or refused a call: a code, a message and the system's words.
/// Printed as every Darkroom error is (`code: message (detail)`). A refused call reaches its client as the D-Bus
/// error ``busErrorName``.
public struct ThumbnailServiceError: CodedError {
    /// What went wrong.
    public enum Code: String, Sendable {
        /// The bus could not be reached or went away.
        case busUnavailable = "bus_unavailable"
        /// Another process (tumblerd, or another instance) owns one of the service's names.
        case nameTaken = "name_taken"
        /// A call's arguments do not fit its signature's meaning (lists of different lengths).
        case invalidArgument = "invalid_argument"
        /// A call asks for more than a configured limit allows.
        case limitExceeded = "limit_exceeded"
    }

    /// What went wrong, as a stable value.
    public let code: Code
    /// A sentence for people.
    public let message: String
    /// What the system said, when it said something.
    public let systemMessage: String?
    /// None: the system's words are in ``systemMessage``.
    public var underlying: (any Error & Sendable)? { nil }
    /// `system: …` when the system said something.
    public var details: [String] { systemMessage.map { ["system: " + $0] } ?? [] }
    /// `code: message (system: …)`, as every Darkroom error prints.
    public var description: String { formattedDescription }

    /// An error with its code, sentence and, when there is one, the system's words.
    public init(_ code: Code, _ message: String, systemMessage: String? = nil) {
        self.code = code
        self.message = message
        self.systemMessage = systemMessage
    }

    /// The D-Bus error name a refused call is answered with.
    public var busErrorName: String {
        switch code {
        case .invalidArgument: "org.freedesktop.DBus.Error.InvalidArgs"
        case .limitExceeded: "org.freedesktop.DBus.Error.LimitsExceeded"
        case .busUnavailable, .nameTaken: "org.freedesktop.DBus.Error.Failed"
        }
    }
}
