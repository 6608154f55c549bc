import DarkroomSupport

/// An error of the decode workers' machinery: the confinement could not be prepared or applied, or a worker could
/// not be made. Printed as every Darkroom error is: `code: message (cause: …)`.
public struct WorkerError: Error, Sendable, CustomStringConvertible, CodedError {
    /// What went wrong, as a stable machine-readable value.
    public enum Code: String, Sendable, Codable, CaseIterable {
        /// The seccomp filter could not be built, or the kernel refused to apply it.
        case confinementUnavailable = "confinement_unavailable"
        /// A process could not be made (fork or spawn failed).
        case spawnFailed = "spawn_failed"
        /// The worker executable is not where the configuration says.
        case executableMissing = "executable_missing"
    }

    /// What went wrong.
    public let code: Code
    /// A sentence for people.
    public let message: String
    /// The error underneath, if any.
    public let underlying: (any Error & Sendable)?

    /// Creates an error.
    public init(_ code: Code, _ message: String, underlying: (any Error & Sendable)? = nil) {
        self.code = code
        self.message = message
        self.underlying = underlying
    }

    public var description: String { formattedDescription }
}
