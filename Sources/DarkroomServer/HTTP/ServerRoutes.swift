import DarkroomImage
import DarkroomWorkers
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import Prometheus

/// The server's routes on Hummingbird's `Router`: the own API (`/v1/thumb`, `/v1/info`), the two dialects as route
/// groups (`/imgproxy/…` and `/thumbor/…`, each parsed into the own API's query and answered by the same render),
/// the gallery and its script, health and metrics.
///
/// Every route is a GET and answers HEAD too (the router's generated HEAD endpoints). Two middlewares wrap every
/// route and the router's not-found answer alike: ``ResponseFinishingMiddleware`` (outermost) sets what every answer
/// carries, empties HEAD bodies and counts the answer by route; ``ServerErrorMiddleware`` turns every failure into
/// the JSON error (or the configured fallback image). Handlers only answer or throw ``ServerError``.
struct ServerRoutes: Sendable {
    let renderer: ThumbnailRenderer
    let gallery: GalleryPage
    let registry: PrometheusCollectorRegistry?
    /// The client connections (to tell a request's work when its client leaves; their count for `/health`).
    let connections: ConnectionGuard?

    /// Where imgproxy-style and thumbor-style URLs are served.
    static let imgproxyGroup = "imgproxy"
    static let thumborGroup = "thumbor"

    /// The router with every route and both middlewares. Middlewares first: the router wraps a route in those added
    /// before it.
    func router() -> Router<ServerRequestContext> {
        let router = Router(context: ServerRequestContext.self, options: .autoGenerateHeadEndpoints)
        router.add(middleware: ResponseFinishingMiddleware(metrics: renderer.metrics))
        router.add(middleware: ServerErrorMiddleware(renderer: renderer))
        router.get("/v1/thumb") { request, context in try await thumb(request, context) }
        router.get("/v1/info") { request, context in try await info(request, context) }
        router.group(RouterPath(Self.imgproxyGroup)).get("**") { request, context in
            try await imgproxy(request, context)
        }
        router.group(RouterPath(Self.thumborGroup)).get("**") { request, context in
            try await thumbor(request, context)
        }
        router.get("/health") { _, _ in health() }
        router.get("/metrics") { _, _ in metrics() }
        router.get("/") { request, _ in try await galleryIndex(request) }
        router.get("/view") { request, _ in try viewer(request) }
        router.get("/assets/gallery.js") { _, _ in script() }
        return router
    }

    /// The route label for metrics and errors: a known path, a dialect, or `other` (never the raw path, which
    /// would grow the metric's label set).
    static func label(_ path: String) -> String {
        switch path {
        case "/v1/thumb", "/v1/info", "/health", "/metrics", "/", "/view", "/assets/gallery.js": path
        case _ where path.hasPrefix("/\(imgproxyGroup)/"): imgproxyGroup
        case _ where path.hasPrefix("/\(thumborGroup)/"): thumborGroup
        default: "other"
        }
    }

    /// Whether a route's answer is a thumbnail (where a failure may be answered with the fallback image).
    static func answersThumbnails(_ label: String) -> Bool {
        ["/v1/thumb", imgproxyGroup, thumborGroup].contains(label)
    }

    // MARK: Thumbnails and info

    private func thumb(_ request: Request, _ context: ServerRequestContext) async throws(ServerError) -> Response {
        let query = try QueryString.parse(request.uri.query)
        try renderer.verifySignature(path: request.uri.path, query: query)
        let expanded = try ImgproxyURL.expandingPresets(query, configuration: renderer.configuration.imgproxy)
        return try await thumbnail(expanded, request, context)
    }

    private func imgproxy(_ request: Request, _ context: ServerRequestContext) async throws(ServerError) -> Response {
        let imgproxy = renderer.configuration.imgproxy
        let url = try ImgproxyURL(path: Self.dialectPath(request, Self.imgproxyGroup), configuration: imgproxy)
        let query = Self.defaultingFormat(url.query, negotiated: imgproxy.autoWebP || imgproxy.autoAVIF)
        return try await thumbnail(query, request, context)
    }

    private func thumbor(_ request: Request, _ context: ServerRequestContext) async throws(ServerError) -> Response {
        let thumbor = renderer.configuration.thumbor
        let url = try ThumborURL(path: Self.dialectPath(request, Self.thumborGroup), configuration: thumbor)
        return try await thumbnail(Self.defaultingFormat(url.query, negotiated: thumbor.autoWebP), request, context)
    }

    /// The raw path after a dialect's group (`/imgproxy/` or `/thumbor/`), as the dialect's parser reads it
    /// (escapes and all: signatures are over the raw text).
    private static func dialectPath(_ request: Request, _ group: String) -> String {
        String(request.uri.path.dropFirst(group.count + 2))
    }

    private func info(_ request: Request, _ context: ServerRequestContext) async throws(ServerError) -> Response {
        let query = try QueryString.parse(request.uri.query)
        try renderer.verifySignature(path: request.uri.path, query: query)
        let probe = try await renderer.info(query: query, client: client(context))
        return ServerResponses.json(.ok, InfoBody(probe))
    }

    /// Answers a thumbnail request given as `/v1/thumb` query items (the dialects translate into them).
    private func thumbnail(
        _ query: [(name: String, value: String)], _ request: Request, _ context: ServerRequestContext
    ) async throws(ServerError) -> Response {
        let answer = try await renderer.thumbnail(
            query: query, accept: request.headers[.accept], ifNoneMatch: request.headers[.ifNoneMatch],
            ifModifiedSince: request.headers[.ifModifiedSince], client: client(context))
        return thumbnailResponse(answer)
    }

    private func client(_ context: ServerRequestContext) -> ClientConnection? {
        connections?.connection(for: context.channel)
    }

    /// A dialect URL that names no format answers in the source's own format (`format=source`), as thumbor and
    /// imgproxy do by default, unless the server negotiates for that dialect (`autoWebP`/`autoAVIF`: `format=auto`).
    static func defaultingFormat(_ query: [(name: String, value: String)], negotiated: Bool) -> [(
        name: String, value: String
    )] {
        guard !query.contains(where: { $0.name == "format" }) else { return query }
        return query + [("format", negotiated ? "auto" : "source")]
    }

    private func thumbnailResponse(_ answer: ThumbnailRenderer.Answer) -> Response {
        var headers = HTTPFields()
        headers[.cacheControl] = "public, max-age=\(renderer.configuration.cacheMaxAge)"
        func validate(_ v: ThumbnailRenderer.Validators) {
            headers[.eTag] = v.etag
            if let modified = v.lastModified { headers[.lastModified] = HTTPDate.format(modified) }
            if v.variesByAccept { headers[.vary] = "Accept" }
        }
        switch answer {
        case .notModified(let validators):
            validate(validators)
            return Response(status: .notModified, headers: headers)
        case .thumbnail(let thumbnail, let validators, let origin):
            validate(validators)
            headers[.contentType] = thumbnail.contentType
            headers[Self.cacheHeader] = origin
            return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: thumbnail.body))
        }
    }

    /// `X-Darkroom-Cache`: where the thumbnail came from (`memory`, `disk`, `rendered`).
    static let cacheHeader = HTTPField.Name("X-Darkroom-Cache")!

    // MARK: Health, metrics and the gallery

    private func health() -> Response {
        ServerResponses.json(
            .ok,
            HealthBody(
                status: renderer.diskCacheProblem == nil ? "ok" : "degraded",
                rendersRunning: renderer.admission.running, rendersQueued: renderer.admission.queued,
                connectionsOpen: connections?.openCount ?? 0,
                diskCache: renderer.diskCacheProblem.map { "unavailable: " + $0 }
                    ?? (renderer.configuration.cacheDirectory == nil ? "none" : "ok"),
                decoding: renderer.decodeWorkers == nil ? "in-process" : "workers",
                decodeWorkers: renderer.decodeWorkers?.statistics))
    }

    private func metrics() -> Response {
        if let workers = renderer.decodeWorkers { renderer.metrics.decodeWorkers(workers.statistics) }
        var bytes: [UInt8] = []
        registry?.emit(into: &bytes)
        var headers = HTTPFields()
        headers[.contentType] = "text/plain; version=0.0.4; charset=utf-8"
        headers[.cacheControl] = "no-store"
        return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
    }

    private func galleryIndex(_ request: Request) async throws(ServerError) -> Response {
        let query = try QueryString.parse(request.uri.query)
        let dir = query.last { $0.name == "dir" }?.value ?? ""
        let page = query.last { $0.name == "page" }.map { Int($0.value) ?? 0 } ?? 1
        let snapshot = await renderer.gallery?.snapshot(on: renderer.pipeline)
        return ServerResponses.html(try gallery.index(snapshot, dir: dir, page: page))
    }

    /// Signed like `/v1/*`: the page holds signed thumbnail URLs for its `src`, so an unsigned one would sign any
    /// path a client names.
    private func viewer(_ request: Request) throws(ServerError) -> Response {
        let query = try QueryString.parse(request.uri.query)
        try renderer.verifySignature(path: request.uri.path, query: query)
        let src = try ThumbnailParameters.source(in: query, limits: renderer.configuration.limits)
        _ = try ResolvedSource.resolve(src, root: renderer.root, remote: RemotePolicy(), cache: renderer.paths)
        return ServerResponses.html(gallery.viewer(src))
    }

    private func script() -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "text/javascript; charset=utf-8"
        headers[.cacheControl] = "public, max-age=3600"
        return Response(
            status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: GalleryPage.script)))
    }
}
