import Darkroom
import DarkroomCache
import DarkroomImage
import DarkroomSupport
import DarkroomWorkers
import Foundation
import Logging

/// The server's engine, apart from HTTP: resolves sources safely, answers from the caches, and renders through
/// the pipeline under admission control.
///
/// One request's path: signature → parameters → source (root / allow-list) → variant (format, `Accept`) →
/// key and `ETag` → `If-None-Match` (304, no work) → memory (synchronous) → shared render: disk cache →
/// admission (429 when full) → pipeline (fetch with address checks, shrink-on-load decode) → encode → store.
///
/// Threads: the handlers are async, but nothing here blocks a cooperative-pool thread. Disk-cache reads and writes
/// and file probes run on the pipeline's I/O threads, encodes on its processing threads
/// (``ImagePipeline/perform(on:priority:_:)``); only the memory-cache hit is answered inline.
final class ThumbnailRenderer: Sendable {
    /// The answer to one thumbnail request.
    enum Answer: Sendable {
        case notModified(Validators)
        case thumbnail(EncodedThumbnail, Validators, origin: String)
    }

    /// What a client revalidates with: the `ETag`, the source file's modification time (`Last-Modified`; none for
    /// remote sources) and whether the answer varies by `Accept`.
    struct Validators: Sendable {
        var etag: String
        var lastModified: Int?
        var variesByAccept: Bool
    }

    let configuration: ServerConfiguration
    let root: RootDirectory?
    let signer: RequestSigner?
    let pipeline: ImagePipeline
    /// The decode workers the pipeline decodes in (their counts go to `/health` and `/metrics`); nil in-process.
    let decodeWorkers: DecodeWorkerPool?
    let cache: ThumbnailCache
    /// Why the disk caches could not be opened at start (a full or read-only disk, permissions): the server then
    /// answers from its memory caches alone and `/health` says `degraded`, rather than refusing to start — a
    /// restart during a disk-full spell must not take the service down. `nil` when they opened or none is set.
    let diskCacheProblem: String?
    let admission: AdmissionController
    let renders = RenderCoalescer<(EncodedThumbnail, String)>()
    let metrics = ServerMetrics()
    let loader: GuardedDataLoader
    let paths = ResolvedPathCache()
    /// The gallery's kept listing of the root; `nil` without a root.
    let gallery: GalleryIndex?
    /// ThumbHash placeholders of local images, from their first rendered thumbnail (the gallery paints them).
    let placeholders = GalleryPlaceholders()
    /// Disk writes queued and not yet done (tests wait for 0 before reopening the cache).
    let pendingDiskWrites = Locked(0)
    private let logger: Logger
    /// Called with the name of each blocking step (`disk-read`, `encode`, `disk-write`) on the thread
    /// that runs it; tests use it to check those threads are the pipeline's.
    let stepObserver: (@Sendable (_ step: String) -> Void)?

    /// Makes the service from its assembled parts (``assemble(_:resolver:)``) and starts the gallery's listing.
    init(
        configuration: ServerConfiguration, parts: Parts, stepObserver: (@Sendable (_ step: String) -> Void)? = nil
    ) {
        self.configuration = configuration
        self.stepObserver = stepObserver
        logger = configuration.logger
        root = parts.root
        gallery = parts.gallery
        signer = parts.signer
        loader = parts.loader
        cache = parts.cache
        diskCacheProblem = parts.diskCacheProblem
        pipeline = parts.pipeline
        decodeWorkers = parts.decodeWorkers
        admission = parts.admission
        gallery?.prepare(on: pipeline)
    }

    /// Checks `sig` when the server has a key.
    func verifySignature(path: String, query: [(name: String, value: String)]) throws(ServerError) {
        try signer?.verify(path: path, query: query)
    }

    /// Answers `GET /v1/thumb`. `If-None-Match` decides when given; otherwise `If-Modified-Since` answers 304 for a
    /// file not modified since (RFC 9110 §13.2.2).
    /// A render stops when `client` leaves (and frees its slot when no other request waits for it).
    func thumbnail(
        query: [(name: String, value: String)], accept: String?, ifNoneMatch: String?, ifModifiedSince: String? = nil,
        client: ClientConnection? = nil
    ) async throws(ServerError) -> Answer {
        let parameters = try ThumbnailParameters(query: query, limits: configuration.limits)
        let source = try ResolvedSource.resolve(
            parameters.source, root: root, remote: configuration.remote, cache: paths,
            s3Buckets: configuration.s3?.allowedBuckets)
        // Kept metadata goes into JPEG or PNG only, so `auto` then negotiates as for a client that names no format
        let variant = OutputVariant(
            parameters.format, accept: parameters.keepMetadata == nil ? accept : nil, offerAVIF: configuration.autoAVIF,
            offerJXL: configuration.autoJXL)
        let key = "t|" + source.identity + "|" + parameters.renderKey + "|" + variant.rawValue
        let etag = Self.etag(forKey: key)
        let validators = Validators(etag: etag, lastModified: source.modified, variesByAccept: variant.variesByAccept)
        if let ifNoneMatch {
            if Self.matches(ifNoneMatch, etag: etag) {
                metrics.thumbnail("not_modified")
                return .notModified(validators)
            }
        } else if let ifModifiedSince, let modified = source.modified, let since = HTTPDate.parse(ifModifiedSince),
            modified <= since
        {
            metrics.thumbnail("not_modified")
            return .notModified(validators)
        }
        if let hit = cache.memoryValue(forKey: key) {
            metrics.thumbnail("memory")
            return .thumbnail(hit, validators, origin: "memory")
        }
        let timeout = configuration.requestTimeout
        do {
            let (thumbnail, origin) = try await withDeadline(
                seconds: timeout, timeout: ServerError(.timedOut, "the thumbnail was not ready within \(timeout) s"),
                client: client
            ) { [self] in
                try await renders.value(forKey: key) { [self] in
                    try await render(parameters, source: source, variant: variant, key: key)
                }
            }
            metrics.thumbnail(origin)
            return .thumbnail(thumbnail, validators, origin: origin)
        } catch {
            throw ServerError(mapping: error)
        }
    }

    /// The shared render for one key: disk cache, else admission → pipeline → encode → store.
    private func render(
        _ parameters: ThumbnailParameters, source: ResolvedSource, variant: OutputVariant,
        key: String
    ) async throws -> (EncodedThumbnail, String) {
        let diskHit = try await pipeline.perform(on: .io, priority: .high) { [self] in
            stepObserver?("disk-read")
            return cache.diskValue(forKey: key, isRemote: source.isRemote)
        }
        if let diskHit { return (diskHit, "disk") }
        defer { metrics.admission(running: admission.running, queued: admission.queued) }
        metrics.admission(running: admission.running, queued: admission.queued)
        var request = ImageRequest(source: source.imageSource, processors: parameters.processors)
        request.geometry = parameters.geometry
        request.imageID = source.identity  // a changed file is a new image for the pipeline's caches too
        let probe = await probeFile(request, source: source)
        let cost = RenderCost.estimate(probe: probe, source: source, parameters: parameters)
        return try await admission.run(cost: cost) { [self] in
            // The source's bytes, when something besides the decode needs them (read once: the decode then works
            // from these bytes rather than reading the source again)
            var bytes: [UInt8]?
            func sourceBytes() async throws -> [UInt8] {
                if let bytes { return bytes }
                var dataRequest = request
                dataRequest.options.insert(.returnData)
                do {
                    bytes = try await pipeline.image(for: dataRequest).data ?? []
                } catch {
                    throw ServerError(mapping: error)
                }
                request.source = .data(id: source.identity, bytes: bytes!)
                return bytes!
            }
            // A clip's motion, animated: read from the file under the root where it lies
            if parameters.motion {
                guard case .file(let path, _, _, _) = source else {
                    throw ServerError(
                        .badRequest,
                        "motion=1 reads videos and Motion or Live Photos under the root, not remote sources")
                }
                guard let animatedFormat = variant.animatedFormat(source: nil) else {
                    throw ServerError(.badRequest, "motion=1 writes an animation: format auto, webp or gif")
                }
                let thumbnail = try await pipeline.perform(on: .cpu, priority: .high) {
                    [self] () throws(ServerError) in
                    try motion(path, parameters: parameters, format: animatedFormat)
                }
                store(thumbnail, forKey: key)
                return (thumbnail, "rendered")
            }
            // A video's frame is SDR whatever `hdr` asks (its light is tone-mapped by the frame's decode), and not an
            // animation: known from a file's header, from the pipeline's reading a remote source by ranges (which the
            // paths below that take the whole source's bytes would undo), or else from the bytes they fetched
            let isVideo = probe?.format == .video || source.remoteURL.map(pipeline.readsByRanges) == true
            // A thumbnail for HDR displays is rendered from the source's bytes (an animation's first frame)
            if parameters.hdr == .apply, !isVideo, let bytes = try await Self.stillBytes(sourceBytes) {
                let thumbnail = try await pipeline.perform(on: .cpu, priority: .high) {
                    [self] () throws(ServerError) in try hdrDisplay(bytes, parameters: parameters)
                }
                store(thumbnail, forKey: key)
                return (thumbnail, "rendered")
            }
            // An animation is rendered frame by frame from its bytes (the pipeline's still decode would give its
            // first frame). Files are known animated from their header; remote sources from the fetched bytes.
            if !parameters.still, !isVideo, variant.mayAnimate, probe.map({ $0.frameCount > 1 }) ?? true {
                let bytes = try await sourceBytes()
                if let animated = try? ImageProber.probe(bytes, limits: configuration.limits.decode),
                    animated.frameCount > 1, let animatedFormat = variant.animatedFormat(source: animated.format)
                {
                    let thumbnail = try await pipeline.perform(on: .cpu, priority: .high) {
                        [self] () throws(ServerError) in
                        try animate(bytes, parameters: parameters, format: animatedFormat)
                    }
                    store(thumbnail, forKey: key)
                    return (thumbnail, "rendered")
                }
            }
            // An Ultra HDR photo or an iPhone HEIC asked to stay HDR, as a plain JPEG resize: encoded with its gain
            // map from its bytes
            if !isVideo,
                case .ultraHDR? = HDRThumbnailRequest.Output.asked(
                    by: parameters.hdr, headroom: nil,
                    writing: variant.fileFormat(hasAlpha: false, source: probe?.format ?? .jpeg),
                    source: probe?.format),
                parameters.keepsHDRAsItIs, let bytes = try await Self.stillBytes(sourceBytes)
            {
                let thumbnail = try await pipeline.perform(on: .cpu, priority: .high) {
                    [self] () throws(ServerError) in try ultraHDR(bytes, parameters: parameters)
                }
                if let thumbnail {
                    store(thumbnail, forKey: key)
                    return (thumbnail, "rendered")
                }
            }
            // A PQ or HLG photo asked to stay HDR as an AVIF: its light, encoded in PQ from its bytes
            if !isVideo,
                case .signal? = HDRThumbnailRequest.Output.asked(
                    by: parameters.hdr, headroom: nil,
                    writing: variant.fileFormat(hasAlpha: false, source: probe?.format), source: probe?.format,
                    sourceIsHDRSignal: probe.map { $0.hdr?.toneMapped == true }),
                parameters.keepsHDRAsItIs, let bytes = try await Self.stillBytes(sourceBytes)
            {
                let thumbnail = try await pipeline.perform(on: .cpu, priority: .high) {
                    [self] () throws(ServerError) in try hdrSignal(bytes, parameters: parameters)
                }
                if let thumbnail {
                    store(thumbnail, forKey: key)
                    return (thumbnail, "rendered")
                }
            }
            // Kept metadata comes from the source's bytes
            let keptExif: [UInt8]? =
                if let keep = parameters.keepMetadata {
                    ExifMetadata.extract(from: try await sourceBytes()).flatMap {
                        ExifMetadata.prepared($0, keep: keep)
                    }
                } else {
                    nil
                }
            let response: ImageResponse
            do {
                response = try await pipeline.image(for: request)
            } catch {
                throw ServerError(mapping: error)
            }
            guard let container = response.container else {
                throw ServerError(.internalError, "the pipeline returned no image")
            }
            let exif = keptExif
            let thumbnail = try await pipeline.perform(on: .cpu, priority: .high) { [self] () throws(ServerError) in
                if !source.isRemote { placeholders.remember(parameters.source, from: container.bitmap) }
                let thumbnail = try encode(container, variant: variant, parameters: parameters)
                guard let exif else { return thumbnail }
                return EncodedThumbnail(
                    bytes: ExifMetadata.embedding(exif, in: thumbnail.bytes, format: thumbnail.format),
                    format: thumbnail.format, width: thumbnail.width, height: thumbnail.height)
            }
            store(thumbnail, forKey: key)
            return (thumbnail, "rendered")
        }
    }

    /// Stores a rendered thumbnail: in memory at once (so the next request hits), on disk later on an I/O thread at
    /// low priority — the answer does not wait for the disk write.
    private func store(_ thumbnail: EncodedThumbnail, forKey key: String) {
        cache.storeInMemory(thumbnail, forKey: key)
        guard cache.disk != nil else { return }
        pendingDiskWrites.withLock { $0 += 1 }
        pipeline.performDetached(on: .io, priority: .low) { [self] in
            defer { pendingDiskWrites.withLock { $0 -= 1 } }
            stepObserver?("disk-write")
            if !cache.storeOnDisk(thumbnail, forKey: key) {
                logger.warning("thumbnail cache write failed", metadata: ["key": "\(key)"])
            }
        }
    }

    /// The source's bytes from `read`, or nil when they are a video's (a remote video not named as one): its frame
    /// is then the pipeline's, from those bytes.
    private static func stillBytes(_ read: () async throws -> [UInt8]) async throws -> [UInt8]? {
        let bytes = try await read()
        return bytes.withUnsafeBytes { ImageProber.format(of: $0) } == .video ? nil : bytes
    }

    /// The header of a file source, probed by the pipeline on an I/O thread; nil for remote sources (their header
    /// is not fetched before admission) and for a header that cannot be read (the render then reports the error).
    private func probeFile(_ request: ImageRequest, source: ResolvedSource) async -> ImageProbe? {
        guard case .file = source else { return nil }
        return try? await pipeline.probe(request)
    }

    /// Answers `GET /v1/info`: the pipeline's probe of the source with its colour profile (header and profile
    /// read on an I/O thread for files; remote sources are fetched through the pipeline under admission, so the
    /// original is cached for a later thumbnail).
    func info(query: [(name: String, value: String)], client: ClientConnection? = nil) async throws(ServerError)
        -> ImageProbe
    {
        let src = try ThumbnailParameters.source(in: query, limits: configuration.limits)
        let source = try ResolvedSource.resolve(
            src, root: root, remote: configuration.remote, cache: paths, s3Buckets: configuration.s3?.allowedBuckets)
        var request = ImageRequest(source: source.imageSource)
        request.imageID = source.identity
        do {
            if source.isRemote {
                let timeout = configuration.requestTimeout
                return try await withDeadline(
                    seconds: timeout, timeout: ServerError(.timedOut, "the source was not fetched within \(timeout) s"),
                    client: client
                ) { [self, request] in
                    try await admission.run { [self] in try await pipeline.probe(request, colorProfile: true) }
                }
            }
            return try await pipeline.probe(request, colorProfile: true)
        } catch {
            throw ServerError(mapping: error)
        }
    }

    // MARK: ETags

    /// A strong ETag: the hex XXH64 of the cache key (source identity, parameters, variant).
    static func etag(forKey key: String) -> String {
        var key = key
        let hash = key.withUTF8 { XXHash64.hash(UnsafeRawBufferPointer($0)) }
        // Built in place: this runs for every thumbnail request, cached ones included
        return String(unsafeUninitializedCapacity: 18) { out in
            out[0] = UInt8(ascii: "\"")
            Hex.write(hash, into: out, at: 1)
            out[17] = UInt8(ascii: "\"")
            return 18
        }
    }

    /// `If-None-Match` semantics: `*`, or any listed tag equal to `etag` (weak comparison: `W/` ignored).
    static func matches(_ header: String, etag: String) -> Bool {
        for raw in header.split(separator: ",") {
            var tag = raw.trimmingCharacters(in: .whitespaces)
            if tag == "*" { return true }
            if tag.hasPrefix("W/") { tag.removeFirst(2) }
            if tag == etag { return true }
        }
        return false
    }
}
