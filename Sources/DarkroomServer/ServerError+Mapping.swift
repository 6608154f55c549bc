import Darkroom
import DarkroomImage

extension ServerError {
    /// The error a client sees for any failure: a ``ServerError`` as it is; a pipeline or decode error by its
    /// code (a missing source 404, a remote failure 502, a source over a limit 413, not an image 415, an image
    /// that cannot be decoded 422, a request the image cannot answer such as a page it does not have 400,
    /// cancellation 504); anything else 500. The one place a library error becomes
    /// an HTTP status (``status``).
    init(mapping error: any Error) {
        self = Self.mapped(error)
    }

    private static func mapped(_ error: any Error) -> ServerError {
        if let e = error as? ServerError { return e }
        if error is CancellationError { return ServerError(.timedOut, "the request was cancelled") }
        guard let e = error as? DarkroomError else {
            return ServerError(.internalError, "unexpected failure: \(error)", underlying: error)
        }
        if let inner = e.underlying as? ServerError { return inner }
        switch e.code {
        case .cancelled: return ServerError(.timedOut, "the request was cancelled", underlying: e)
        case .invalidRequest: return ServerError(.badRequest, e.message, underlying: e)
        case .httpStatus where [404, 410].contains(e.statusCode ?? 0):
            return ServerError(.notFound, "the remote source answered \(e.statusCode!)", underlying: e)
        case .httpStatus, .network, .tooManyRedirects:
            return ServerError(.upstreamFailed, e.message, underlying: e)
        case .responseTooLarge: return ServerError(.sourceTooLarge, e.message, underlying: e)
        case .timedOut: return ServerError(.timedOut, e.message, underlying: e)
        case .notAnImage:
            return ServerError(.unsupportedMediaType, "the source is not an image in a supported format", underlying: e)
        case .decodeFailed:
            switch (e.underlying as? DarkroomImageError)?.code {
            case .limitExceeded?, .outOfMemory?: return ServerError(.sourceTooLarge, e.message, underlying: e)
            case .unsupportedFormat?, .empty?: return ServerError(.unsupportedMediaType, e.message, underlying: e)
            case .invalidArgument?: return ServerError(.badRequest, e.message, underlying: e)
            default: return ServerError(.undecodable, e.message, underlying: e)
            }
        case .notFound: return ServerError(.notFound, e.message, underlying: e)
        case .refused: return ServerError(.hostNotAllowed, e.message, underlying: e)
        case .fileIO: return ServerError(.internalError, e.message, underlying: e)
        case .processingFailed: return ServerError(.internalError, e.message, underlying: e)
        }
    }
}
