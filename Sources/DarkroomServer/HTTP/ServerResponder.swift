import DarkroomImage
import DarkroomWorkers
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import Prometheus

/// Routes requests and turns every failure into a JSON error with the right status. One `switch` on the path —
/// the server has six routes, and a table lookup is all a router would add.
struct ServerResponder: HTTPResponder {
    typealias Context = ServerRequestContext

    let service: ThumbnailService
    let gallery: GalleryPage
    let registry: PrometheusCollectorRegistry?
    /// The client connections (to tell a request's work when its client leaves; their count for `/health`).
    let connections: ConnectionGuard?
    /// The configured fallback image and its content type, read once when the responder is built.
    let fallbackImage: (bytes: [UInt8], contentType: String)?

    init(
        service: ThumbnailService, gallery: GalleryPage, registry: PrometheusCollectorRegistry?,
        connections: ConnectionGuard? = nil
    ) {
        (self.service, self.gallery, self.registry, self.connections) = (service, gallery, registry, connections)
        fallbackImage = service.configuration.fallbackImage.flatMap { bytes in
            (try? ImageProber.probe(bytes, limits: service.configuration.limits.decode)).map {
                (bytes, $0.format.mimeType)
            }
        }
    }

    func respond(to request: Request, context: Context) async throws -> Response {
        let started = ContinuousClock.now
        let path = request.uri.path
        let route = Self.route(path)
        var response: Response
        do throws(ServerError) {
            guard request.method == .get || request.method == .head else {
                throw ServerError(.methodNotAllowed, "\(route) accepts GET and HEAD only")
            }
            response = try await answer(
                request, route: route, path: path, client: connections?.connection(for: context.channel))
        } catch {
            response = errorResponse(error)
            if ["/v1/thumb", "imgproxy", "thumbor"].contains(route), let fallback = fallbackImage,
                Self.wantsImage(request.headers[.accept])
            {
                response.body = ResponseBody(byteBuffer: ByteBuffer(bytes: fallback.bytes))
                response.headers[.contentType] = fallback.contentType
                response.headers[.contentLength] = String(fallback.bytes.count)
                response.headers[Self.errorHeader] = error.code.rawValue
            }
        }
        response.headers[.xContentTypeOptions] = "nosniff"
        if request.method == .head {
            // The GET's headers, Content-Length included (replacing the body would set it to 0), and no body.
            let length = response.headers[.contentLength]
            response.body = ResponseBody()
            response.headers[.contentLength] = length
        }
        service.metrics.response(
            route: route, status: Int(response.status.code),
            seconds: (ContinuousClock.now - started).seconds)
        return response
    }

    private func answer(_ request: Request, route: String, path: String, client: ClientConnection?)
        async throws(ServerError) -> Response
    {
        switch route {
        case "/v1/thumb":
            let query = try QueryString.parse(request.uri.query)
            try service.verifySignature(path: path, query: query)
            let expanded = try ImgproxyURL.expandingPresets(query, configuration: service.configuration.imgproxy)
            return try await thumbnail(expanded, request, client: client)
        case "imgproxy":
            let imgproxy = service.configuration.imgproxy
            let url = try ImgproxyURL(path: String(path.dropFirst(Self.imgproxyPrefix.count)), configuration: imgproxy)
            let query = Self.defaultingFormat(url.query, negotiated: imgproxy.autoWebP || imgproxy.autoAVIF)
            return try await thumbnail(query, request, client: client)
        case "thumbor":
            let thumbor = service.configuration.thumbor
            let url = try ThumborURL(path: String(path.dropFirst(Self.thumborPrefix.count)), configuration: thumbor)
            return try await thumbnail(
                Self.defaultingFormat(url.query, negotiated: thumbor.autoWebP), request, client: client)
        case "/v1/info":
            let query = try QueryString.parse(request.uri.query)
            try service.verifySignature(path: path, query: query)
            let probe = try await service.info(query: query, client: client)
            return json(.ok, InfoBody(probe))
        case "/health":
            return json(
                .ok,
                HealthBody(
                    status: service.diskCacheProblem == nil ? "ok" : "degraded",
                    rendersRunning: service.admission.running, rendersQueued: service.admission.queued,
                    connectionsOpen: connections?.openCount ?? 0,
                    diskCache: service.diskCacheProblem.map { "unavailable: " + $0 }
                        ?? (service.configuration.cacheDirectory == nil ? "none" : "ok"),
                    decoding: service.decodeWorkers == nil ? "in-process" : "workers",
                    decodeWorkers: service.decodeWorkers?.statistics))
        case "/metrics":
            if let workers = service.decodeWorkers { service.metrics.decodeWorkers(workers.statistics) }
            var bytes: [UInt8] = []
            registry?.emit(into: &bytes)
            var headers = HTTPFields()
            headers[.contentType] = "text/plain; version=0.0.4; charset=utf-8"
            headers[.cacheControl] = "no-store"
            return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
        case "/":
            let query = try QueryString.parse(request.uri.query)
            let dir = query.last { $0.name == "dir" }?.value ?? ""
            let page = query.last { $0.name == "page" }.map { Int($0.value) ?? 0 } ?? 1
            let snapshot = await service.gallery?.snapshot(on: service.pipeline)
            return html(try gallery.index(snapshot, dir: dir, page: page))
        case "/view":
            // Signed like `/v1/*`: the page holds signed thumbnail URLs for its `src`, so an unsigned one would
            // sign any path a client names
            let query = try QueryString.parse(request.uri.query)
            try service.verifySignature(path: path, query: query)
            let src = try ThumbnailParameters.source(in: query, limits: service.configuration.limits)
            _ = try ResolvedSource.resolve(src, root: service.root, remote: RemotePolicy(), cache: service.paths)
            return html(gallery.viewer(src))
        case "/assets/gallery.js":
            var headers = HTTPFields()
            headers[.contentType] = "text/javascript; charset=utf-8"
            headers[.cacheControl] = "public, max-age=3600"
            return Response(
                status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: GalleryPage.script)))
        default:
            throw ServerError(.noRoute, "no route for \(path.prefix(200))")
        }
    }

    /// Answers a thumbnail request given as `/v1/thumb` query items (the dialects translate into them).
    private func thumbnail(
        _ query: [(name: String, value: String)], _ request: Request, client: ClientConnection?
    ) async throws(ServerError) -> Response {
        let answer = try await service.thumbnail(
            query: query, accept: request.headers[.accept], ifNoneMatch: request.headers[.ifNoneMatch],
            ifModifiedSince: request.headers[.ifModifiedSince], client: client)
        return thumbnailResponse(answer)
    }

    /// Whether `Accept` asks for an image rather than JSON: names `image/` and not `application/json`.
    static func wantsImage(_ accept: String?) -> Bool {
        guard let accept else { return false }
        return accept.contains("image/") && !accept.contains("application/json")
    }

    /// `X-Darkroom-Error`: the error code, when the body is the fallback image instead of the JSON error.
    static let errorHeader = HTTPField.Name("X-Darkroom-Error")!

    /// Where imgproxy-style and thumbor-style URLs are served.
    static let imgproxyPrefix = "/imgproxy/"
    static let thumborPrefix = "/thumbor/"

    /// A dialect URL that names no format answers in the source's own format (`format=source`), as thumbor and
    /// imgproxy do by default, unless the server negotiates for that dialect (`autoWebP`/`autoAVIF`: `format=auto`).
    static func defaultingFormat(_ query: [(name: String, value: String)], negotiated: Bool) -> [(
        name: String, value: String
    )] {
        guard !query.contains(where: { $0.name == "format" }) else { return query }
        return query + [("format", negotiated ? "auto" : "source")]
    }

    /// The route label for metrics: a known path, a dialect, or `other` (never the raw path, which would grow the
    /// label set).
    static func route(_ path: String) -> String {
        switch path {
        case "/v1/thumb", "/v1/info", "/health", "/metrics", "/", "/view", "/assets/gallery.js": path
        case _ where path.hasPrefix(imgproxyPrefix): "imgproxy"
        case _ where path.hasPrefix(thumborPrefix): "thumbor"
        default: "other"
        }
    }

    private func thumbnailResponse(_ answer: ThumbnailService.Answer) -> Response {
        var headers = HTTPFields()
        headers[.cacheControl] = "public, max-age=\(service.configuration.cacheMaxAge)"
        func validate(_ v: ThumbnailService.Validators) {
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
            return Response(
                status: .ok, headers: headers,
                body: ResponseBody(byteBuffer: thumbnail.body))
        }
    }

    /// `X-Darkroom-Cache`: where the thumbnail came from (`memory`, `disk`, `rendered`).
    static let cacheHeader = HTTPField.Name("X-Darkroom-Cache")!

    private func errorResponse(_ error: ServerError) -> Response {
        var message = error.message
        if let root = service.root?.path { message = message.replacingOccurrences(of: root + "/", with: "") }
        var response = json(
            HTTPResponse.Status(code: error.status),
            ErrorBody(error: .init(code: error.code.rawValue, message: message)))
        response.headers[.cacheControl] = "no-store"
        if error.code == .overloaded {
            response.headers[.retryAfter] = String(service.admission.retryAfterSeconds)
        }
        return response
    }

    private func json(_ status: HTTPResponse.Status, _ body: some Encodable) -> Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let data = (try? encoder.encode(body)) ?? Data("{}".utf8)
        var headers = HTTPFields()
        headers[.contentType] = "application/json; charset=utf-8"
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: data)))
    }

    private func html(_ page: String) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "text/html; charset=utf-8"
        // The page's script reads /v1/info (a video cell's duration): the server's own origin, nothing else
        headers[.contentSecurityPolicy] =
            "default-src 'none'; img-src 'self'; script-src 'self'; connect-src 'self'; style-src 'unsafe-inline'"
        headers[.cacheControl] = "no-cache"
        return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: page)))
    }
}

/// `{"error": {"code": "...", "message": "..."}}`.
struct ErrorBody: Codable, Sendable {
    struct Detail: Codable, Sendable {
        var code: String
        var message: String
    }
    var error: Detail
}

/// `GET /health`: `ok`, or `degraded` while the server runs without the disk caches it was given (it still
/// serves, from memory; the reason is in `diskCache`). Always 200 while the process answers.
struct HealthBody: Codable, Sendable {
    var status: String
    var rendersRunning: Int
    var rendersQueued: Int
    /// Client connections open, this one included.
    var connectionsOpen: Int
    /// `ok`, `none` (memory caches by configuration) or `unavailable: REASON`.
    var diskCache: String
    /// `workers` (confined decode workers) or `in-process`.
    var decoding: String
    /// What the decode workers have done (started, decodes, crashes, timeouts, recycled); absent in-process.
    var decodeWorkers: DecodeWorkerPool.Statistics?
}

/// `GET /v1/info`: the probe plus the upright size.
struct InfoBody: Codable, Sendable {
    var format: String
    var width: Int
    var height: Int
    var orientedWidth: Int
    var orientedHeight: Int
    var orientation: Int
    var hasAlpha: Bool
    var isGrayscale: Bool
    var frameCount: Int
    var isProgressive: Bool
    var hasICCProfile: Bool
    var bitDepth: Int
    var isCMYK: Bool
    /// The colour description: ICC profile (description, model, whether sRGB, usable), CICP or PNG chunks.
    var colorProfile: ColorProfileSummary?
    /// HEIC/AVIF: coded size, transformations, item count, thumbnail sizes, codec.
    var heif: HEIFDetails?
    /// Camera RAW: maker, model, sensor size, and the embedded previews' sizes and encoding.
    var raw: RAWDetails?
    /// HDR (PQ or HLG): the transfer, primaries, content light level, and whether thumbnails are tone-mapped.
    var hdr: HDRDetails?
    /// A gain map (Ultra HDR JPEG): its container, metadata form, size and parameters.
    var gainMap: GainMapDetails?
    /// What is wrong with the file's metadata that the image is shown without (a damaged gain map); absent when
    /// nothing is.
    var warnings: [String]?
    /// Pages a TIFF holds (`page=N` picks one); 1 for other formats.
    var pageCount: Int
    /// A video: its container, codec, duration, frame rate, frame count, rotation, coded size and audio.
    var video: VideoDetails?
    /// Animations: each frame's duration in milliseconds as stored, the loop count as stored (absent: none),
    /// how many times it plays (0 forever) and one play's length by the browsers' delay rule.
    var animation: AnimationBody?
    /// A ThumbHash of the image (base64), to paint a blurred placeholder while the thumbnail loads; absent when
    /// the image cannot be decoded.
    var thumbhash: String?

    struct AnimationBody: Codable, Sendable {
        var durations: [Int]
        var loopCount: Int?
        var plays: Int
        var totalDisplayDuration: Int
    }

    init(_ p: ImageProbe) {
        format = p.format.rawValue
        width = p.width
        height = p.height
        orientedWidth = p.orientedWidth
        orientedHeight = p.orientedHeight
        orientation = p.orientation.rawValue
        hasAlpha = p.hasAlpha
        isGrayscale = p.isGrayscale
        frameCount = p.frameCount
        isProgressive = p.isProgressive
        hasICCProfile = p.hasICCProfile
        bitDepth = p.bitDepth
        isCMYK = p.isCMYK
        colorProfile = p.colorProfile
        thumbhash = p.thumbHash.map { Data($0).base64EncodedString() }
        animation = p.animation.map {
            AnimationBody(
                durations: $0.durations, loopCount: $0.loopCount, plays: $0.plays,
                totalDisplayDuration: $0.totalDisplayDuration)
        }
        heif = p.heif
        raw = p.raw
        hdr = p.hdr
        gainMap = p.gainMap
        let warnings = [p.gainMap?.warning.map { "gain map: \($0)" }].compactMap { $0 }
        self.warnings = warnings.isEmpty ? nil : warnings
        pageCount = p.pageCount
        video = p.video
    }
}
