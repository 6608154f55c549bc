import DarkroomImage
import DarkroomSupport

/// The error every pipeline operation reports: a stable ``code``, a sentence for people, the HTTP status when
/// one was received, and the error underneath (a `DarkroomImageError` for decode failures, an HTTP client
/// error for transport failures).
public struct DarkroomError: Error, Sendable, CustomStringConvertible, CodedError {
    /// What went wrong, as a stable machine-readable value.
    public enum Code: String, Sendable, Codable, CaseIterable {
        /// Every waiter cancelled the request (or its task) before it finished.
        case cancelled
        /// The request cannot be carried out as written (an unsupported URL scheme, an empty source).
        case invalidRequest = "invalid_request"
        /// The server answered with a status other than 2xx or 304; ``DarkroomError/statusCode`` holds it.
        case httpStatus = "http_status"
        /// The response is larger than ``ImagePipeline/Configuration/maxResponseBytes`` (announced or streamed).
        case responseTooLarge = "response_too_large"
        /// A connect, read or total deadline passed.
        case timedOut = "timed_out"
        /// More redirects than allowed, or a redirect cycle.
        case tooManyRedirects = "too_many_redirects"
        /// The connection failed or broke (refused, reset, closed before the body ended).
        case network
        /// The bytes are not an image format Darkroom decodes (checked by magic bytes, never Content-Type).
        case notAnImage = "not_an_image"
        /// The decoder refused the bytes (truncated, corrupt, over a limit); ``underlying`` is the decoder's error.
        case decodeFailed = "decode_failed"
        /// A processor threw.
        case processingFailed = "processing_failed"
        /// A local file could not be read.
        case fileIO = "file_io"
        /// The data loader refused the request by its own policy (a host or address it may not reach);
        /// ``DarkroomError/underlying`` holds its reason.
        case refused
        /// The source does not exist: a missing file, or a remote 404/410 (``DarkroomError/statusCode`` holds it).
        case notFound = "not_found"
    }

    /// What went wrong.
    public let code: Code
    /// A sentence for people, naming the value and the limit involved where there is one.
    public let message: String
    /// The HTTP status for ``Code/httpStatus``, else `nil`.
    public let statusCode: Int?
    /// The error that caused this one, if any.
    public let underlying: (any Error & Sendable)?

    /// Creates an error.
    public init(_ code: Code, _ message: String, statusCode: Int? = nil, underlying: (any Error & Sendable)? = nil) {
        self.code = code
        self.message = message
        self.statusCode = statusCode
        self.underlying = underlying
    }

    /// `code: message (HTTP status) (cause: …)`, the format every Darkroom error prints.
    public var description: String { formattedDescription }

    package var details: [String] { statusCode.map { ["HTTP \($0)"] } ?? [] }

    static let cancelled = DarkroomError(.cancelled, "the request was cancelled")

    /// Whether trying again may succeed (a transport failure, a timeout, 408/429/502/503/504), as opposed to a
    /// permanent answer (404, 500, an oversized or non-image body). Retries happen only for these.
    public var isTransient: Bool {
        switch code {
        case .timedOut, .network: true
        case .httpStatus: [408, 429, 502, 503, 504].contains(statusCode ?? 0)
        default: false
        }
    }
}
