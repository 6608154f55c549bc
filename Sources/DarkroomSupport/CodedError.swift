/// The one shape of every Darkroom error: a stable machine-readable code, a sentence for people, optional details
/// (what the system or a codec said, an HTTP status) and the error underneath.
///
/// Each module's error type conforms and returns ``formattedDescription`` as its `description`, so every error
/// prints the same way everywhere — `code: message (detail) (cause: …)` — and a cause is never dropped.
package protocol CodedError: Error, Sendable, CustomStringConvertible {
    associatedtype Code: RawRepresentable where Code.RawValue == String
    /// What went wrong, as a stable value.
    var code: Code { get }
    /// A sentence for people.
    var message: String { get }
    /// Extra facts printed in parentheses after the message, in order (for example `system: No such file`).
    var details: [String] { get }
    /// The error that caused this one, if any.
    var underlying: (any Error & Sendable)? { get }
}

extension CodedError {
    package var details: [String] { [] }

    /// `code: message (detail)… (cause: underlying)`: the format all Darkroom errors print.
    package var formattedDescription: String {
        var text = "\(code.rawValue): \(message)"
        for detail in details where !detail.isEmpty { text += " (\(detail))" }
        if let underlying { text += " (cause: \(underlying))" }
        return text
    }
}
