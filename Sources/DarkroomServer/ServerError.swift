import Darkroom
import DarkroomImage
import DarkroomSupport

/// Why the server refused or failed a request: a stable ``Code``, a message for people, the HTTP status it maps to
/// and the underlying cause. Sent to clients as `{"error": {"code": "...", "message": "..."}}`.
public struct ServerError: Error, Sendable, CustomStringConvertible, CodedError {
    /// Stable, machine-readable reasons. The raw value is what clients see.
    public enum Code: String, Sendable, Codable, CaseIterable {
        /// A parameter is missing or malformed (400).
        case badRequest = "bad_request"
        /// `--key` is set and `sig` is missing or wrong (403).
        case badSignature = "bad_signature"
        /// A source path leaves `--root` (`..`, absolute, or a symlink pointing out) (403).
        case pathOutsideRoot = "path_outside_root"
        /// A remote source's host is not named by `--allow-host` (403).
        case hostNotAllowed = "host_not_allowed"
        /// A remote source (or a redirect) resolves to a loopback, private, link-local, multicast or other
        /// non-public address (403).
        case addressBlocked = "address_blocked"
        /// The source does not exist (404).
        case notFound = "not_found"
        /// The source is over a configured limit: bytes, pixels, dimensions, frames or scans (413).
        case sourceTooLarge = "source_too_large"
        /// The source is not an image in a supported format (415).
        case unsupportedMediaType = "unsupported_media_type"
        /// The source claims to be an image but cannot be decoded (422).
        case undecodable
        /// The render queue is full; retry after `Retry-After` seconds (429).
        case overloaded
        /// The remote source failed (status, connection, too many redirects) (502).
        case upstreamFailed = "upstream_failed"
        /// The request did not finish within its time limit (504).
        case timedOut = "timed_out"
        /// The client closed its connection before the answer was ready; the work for it was cancelled (499, as
        /// nginx logs it; nobody receives the answer).
        case clientClosed = "client_closed"
        /// Anything else (500).
        case internalError = "internal_error"
        /// The route does not exist (404).
        case noRoute = "no_route"
        /// The route exists but not for this method (405).
        case methodNotAllowed = "method_not_allowed"
    }

    /// The reason.
    public let code: Code
    /// A sentence for people; never includes secrets.
    public let message: String
    /// What caused it, when something did.
    public let underlying: (any Error & Sendable)?

    /// Creates an error.
    public init(_ code: Code, _ message: String, underlying: (any Error & Sendable)? = nil) {
        self.code = code
        self.message = message
        self.underlying = underlying
    }

    /// The HTTP status this error is answered with.
    public var status: Int {
        switch code {
        case .badRequest: 400
        case .badSignature, .pathOutsideRoot, .hostNotAllowed, .addressBlocked: 403
        case .notFound, .noRoute: 404
        case .methodNotAllowed: 405
        case .sourceTooLarge: 413
        case .unsupportedMediaType: 415
        case .undecodable: 422
        case .overloaded: 429
        case .internalError: 500
        case .upstreamFailed: 502
        case .timedOut: 504
        case .clientClosed: 499
        }
    }

    /// `code: message (cause: …)`, the format every Darkroom error prints (clients see only code and message).
    public var description: String { formattedDescription }
}
