import DarkroomImage
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// Turns every failure of a route into the server's JSON error (`{"error":{"code","message"}}`, its status from the
/// error's code), and the router's not-found answer into `no_route` (404) or, for a path that is a route asked with
/// another method, `method_not_allowed` (405). A failed thumbnail route whose client asks for an image (`Accept` names
/// `image/` and not JSON) gets the configured fallback image instead, its error code in `X-Darkroom-Error`.
/// Errors that are not the server's own (a cancelled request) pass through to Hummingbird.
struct ServerErrorMiddleware: RouterMiddleware {
    typealias Context = ServerRequestContext

    let renderer: ThumbnailRenderer
    /// The configured fallback image and its content type, read once when the middleware is made.
    let fallbackImage: (bytes: [UInt8], contentType: String)?

    init(renderer: ThumbnailRenderer) {
        self.renderer = renderer
        fallbackImage = renderer.configuration.fallbackImage.flatMap { bytes in
            (try? ImageProber.probe(bytes, limits: renderer.configuration.limits.decode)).map {
                (bytes, $0.format.mimeType)
            }
        }
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
        async throws -> Response
    {
        let failure: ServerError
        do {
            return try await next(request, context)
        } catch let error as ServerError {
            failure = error
        } catch let error as HTTPError where error.status == .notFound {
            failure = Self.unrouted(request)
        }
        var response = errorResponse(failure)
        if ServerRoutes.answersThumbnails(ServerRoutes.label(request.uri.path)), let fallback = fallbackImage,
            Self.wantsImage(request.headers[.accept])
        {
            response.body = ResponseBody(byteBuffer: ByteBuffer(bytes: fallback.bytes))
            response.headers[.contentType] = fallback.contentType
            response.headers[.contentLength] = String(fallback.bytes.count)
            response.headers[Self.errorHeader] = failure.code.rawValue
        }
        return response
    }

    /// What the router's not-found answer means: a known route asked with a method other than GET or HEAD, or a
    /// path that is no route.
    static func unrouted(_ request: Request) -> ServerError {
        let label = ServerRoutes.label(request.uri.path)
        if label != "other" && request.method != .get && request.method != .head {
            return ServerError(.methodNotAllowed, "\(label) accepts GET and HEAD only")
        }
        return ServerError(.noRoute, "no route for \(request.uri.path.prefix(200))")
    }

    /// Whether `Accept` asks for an image rather than JSON: names `image/` and not `application/json`.
    static func wantsImage(_ accept: String?) -> Bool {
        guard let accept else { return false }
        return accept.contains("image/") && !accept.contains("application/json")
    }

    /// `X-Darkroom-Error`: the error code, when the body is the fallback image instead of the JSON error.
    static let errorHeader = HTTPField.Name("X-Darkroom-Error")!

    private func errorResponse(_ error: ServerError) -> Response {
        var message = error.message
        if let root = renderer.root?.path { message = message.replacingOccurrences(of: root + "/", with: "") }
        var response = ServerResponses.json(
            HTTPResponse.Status(code: error.status),
            ErrorBody(error: .init(code: error.code.rawValue, message: message)))
        response.headers[.cacheControl] = "no-store"
        if error.code == .overloaded {
            response.headers[.retryAfter] = String(renderer.admission.retryAfterSeconds)
        }
        return response
    }
}

/// What every answer gets on its way out, errors included: `X-Content-Type-Options: nosniff`; for HEAD, the GET's
/// headers (its `Content-Length` too) without the body; and one count and duration in the response metrics, under
/// the route's label (``ServerRoutes/label(_:)``).
struct ResponseFinishingMiddleware: RouterMiddleware {
    typealias Context = ServerRequestContext

    let metrics: ServerMetrics

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response)
        async throws -> Response
    {
        let started = ContinuousClock.now
        var response = try await next(request, context)
        response.headers[.xContentTypeOptions] = "nosniff"
        if request.method == .head {
            // Replacing the body would set Content-Length to 0: keep the GET's
            let length = response.headers[.contentLength]
            response.body = ResponseBody()
            response.headers[.contentLength] = length
        }
        metrics.response(
            route: ServerRoutes.label(request.uri.path), status: Int(response.status.code),
            seconds: (ContinuousClock.now - started).seconds)
        return response
    }
}

/// The server's JSON and HTML answers.
enum ServerResponses {
    static func json(_ status: HTTPResponse.Status, _ body: some Encodable) -> Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let data = (try? encoder.encode(body)) ?? Data("{}".utf8)
        var headers = HTTPFields()
        headers[.contentType] = "application/json; charset=utf-8"
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: data)))
    }

    static func html(_ page: String) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "text/html; charset=utf-8"
        // The page's script reads /v1/info (a video cell's duration): the server's own origin, nothing else
        headers[.contentSecurityPolicy] =
            "default-src 'none'; img-src 'self'; script-src 'self'; connect-src 'self'; style-src 'unsafe-inline'"
        headers[.cacheControl] = "no-cache"
        return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: page)))
    }
}
