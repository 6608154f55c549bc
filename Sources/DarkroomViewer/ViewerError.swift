import DarkroomSupport

/// Why `darkroom view` could not start or go on: no display, an unreadable folder or script, a stats or screenshot
/// file that cannot be written.
public struct ViewerError: CodedError {
    /// What went wrong, as a stable value.
    public enum Code: String, Sendable {
        /// SDL could not open a window or renderer (no display: run under Xvfb, or set `DISPLAY`).
        case sdl
        /// A script line the viewer does not understand (the message names the line).
        case script
        /// A folder, stats file or screenshot that could not be read or written.
        case io
        /// An option out of its range.
        case invalidArgument = "invalid_argument"
    }

    /// What went wrong.
    public let code: Code
    /// A sentence naming the value or file.
    public let message: String
    /// The error underneath, if any.
    public let underlying: (any Error & Sendable)?

    /// Creates an error.
    public init(_ code: Code, _ message: String, underlying: (any Error & Sendable)? = nil) {
        self.code = code
        self.message = message
        self.underlying = underlying
    }

    /// `code: message (cause: …)`, as every Darkroom error prints.
    public var description: String { formattedDescription }
}
