import CoreMetrics
import DarkroomCache
import DarkroomImage
import DarkroomSupport
import Foundation
import Logging

/// The fetch job's product: encoded bytes and where they came from.
struct FetchOutput: Sendable {
    var bytes: [UInt8]
    var origin: ImageResponse.Origin
    var timings: ImageResponse.Timings
    /// For a body so far: the length the response announced, if it did.
    var expected: Int64? = nil
    /// A local file the decoder reads itself (a video, `bytes` then empty): only the parts a frame needs.
    var file: String? = nil
    /// A remote file the decoder reads by ranges where it lies (a video, `bytes` then empty).
    var ranges: (any ByteRangeReading)? = nil
}

/// The fetch stage: a source's encoded bytes, once per source however many requests wait for them.
///
/// Bytes given in the request are checked and passed on; files are read on the I/O threads; HTTP(S) and the
/// configured loader schemes go to the disk cache of original bytes first (fresh: done; stale with validators: a
/// conditional request), then to the network through the scheduler's per-host and total limits. What comes back is
/// checked by its magic bytes, never by a name or a Content-Type, and stored as original bytes when the response's
/// cache headers allow.
final class FetchStage: Sendable {
    let context: PipelineContext
    /// Fetches in flight, one per source (a reload that skips the disk cache is its own).
    let jobs = JobPool<String, FetchOutput>()

    init(context: PipelineContext) {
        self.context = context
    }

    private var configuration: ImagePipeline.Configuration { context.configuration }
    private var counters: PipelineCounters { context.counters }
    /// Key of the fetch job: one per source (a reload that skips the disk cache is its own job).
    static func key(for request: ImageRequest) -> String {
        (request.options.contains(.disableDiskCacheReads) ? "reload|" : "") + request.sourceKey
    }

    /// Joins or starts the fetch of `request`'s source.
    func subscribe(
        _ request: ImageRequest, priority: ImageRequest.Priority,
        handler: @escaping SharedJob<FetchOutput>.Handler
    ) -> JobSubscription {
        let (subscription, joined) = jobs.subscribe(
            key: context.sharingKey(Self.key(for: request)), priority: priority, handler: handler,
            start: { job in self.start(job, request: request) })
        if joined { counters.add(.sharedRequests) }
        return subscription
    }

    private func start(_ job: SharedJob<FetchOutput>, request: ImageRequest) {
        switch request.source {
        case .data(_, let bytes):
            job.finish(
                Self.checkImage(bytes, source: request.source).map {
                    FetchOutput(bytes: $0, origin: .data, timings: .init())
                })
        case .file(let path):
            readFile(job, path: path, request: request)
        case .url(let url) where url.isFileURL:
            readFile(job, path: url.path, request: request)
        case .url(let url)
        where ["http", "https"].contains(url.scheme?.lowercased() ?? "")
            || configuration.loaderSchemes.contains(url.scheme?.lowercased() ?? ""):
            fetchHTTP(job, url: url, request: request)
        case .url(let url):
            job.finish(.failure(DarkroomError(.invalidRequest, "unsupported URL scheme in \(url)")))
        }
    }

    private func readFile(_ job: SharedJob<FetchOutput>, path: String, request: ImageRequest) {
        let limit = configuration.maxResponseBytes
        job.link(
            context.ioQueue.enqueue(priority: job.priority.queueLevel) { [self] _ in
                guard !job.isCancelled else { return }
                let t0 = MonotonicClock.seconds()
                counters.add(.fileReads)
                // A video is read by its decoder from the file (it may be far larger than an image), when the
                // pipeline has one: its first bytes say so, and the rest is left unread
                let byPath = !configuration.decoder.customDecoders.isEmpty
                do throws(DarkroomImageError) {
                    let bytes = try FileBytes.read(path, limit: limit) {
                        byPath && ImageProber.format(of: $0) == .video
                    }
                    var timings = ImageResponse.Timings()
                    timings.fetch = MonotonicClock.seconds() - t0
                    guard let bytes else {
                        return job.finish(.success(FetchOutput(bytes: [], origin: .file, timings: timings, file: path)))
                    }
                    job.finish(
                        Self.checkImage(bytes, source: request.source).map {
                            FetchOutput(bytes: $0, origin: .file, timings: timings)
                        })
                } catch {
                    let code: DarkroomError.Code =
                        switch error.code {
                        case .limitExceeded: .responseTooLarge
                        case .notFound: .notFound
                        default: .fileIO
                        }
                    job.finish(.failure(DarkroomError(code, error.message, underlying: error)))
                }
            })
    }

    /// Disk cache of original bytes first (fresh → done; stale with validators → conditional request), then
    /// the network.
    private func fetchHTTP(_ job: SharedJob<FetchOutput>, url: URL, request: ImageRequest) {
        guard let dataCache = configuration.dataCache, !request.options.contains(.disableDiskCacheReads) else {
            return fetchNetwork(job, url: url, request: request, stale: nil, cacheRead: 0)
        }
        job.link(
            context.ioQueue.enqueue(priority: job.priority.queueLevel) { [self] _ in
                guard !job.isCancelled else { return }
                let t0 = MonotonicClock.seconds()
                let entry = dataCache.cachedData(forKey: Self.originalDiskKey(request))
                let cacheRead = MonotonicClock.seconds() - t0
                guard let entry else {
                    return fetchNetwork(job, url: url, request: request, stale: nil, cacheRead: cacheRead)
                }
                let metadata = HTTPCacheMetadata.decode(entry.metadata)
                if metadata.map({ $0.isFresh(now: configuration.now()) }) ?? true {
                    counters.add(.diskOriginalHits)
                    var timings = ImageResponse.Timings()
                    timings.cacheRead = cacheRead
                    return job.finish(.success(FetchOutput(bytes: entry.data, origin: .diskOriginal, timings: timings)))
                }
                let stale = metadata!.hasValidators ? (entry, metadata!) : nil
                context.logger.debug("stale disk copy", metadata: ["url": "\(url)", "revalidate": "\(stale != nil)"])
                fetchNetwork(job, url: url, request: request, stale: stale, cacheRead: cacheRead)
            })
    }

    static func originalDiskKey(_ request: ImageRequest) -> String { "o|" + request.sourceKey }

    private func fetchNetwork(
        _ job: SharedJob<FetchOutput>, url: URL, request: ImageRequest,
        stale: (CachedData, HTTPCacheMetadata)?, cacheRead: Double
    ) {
        let loader = configuration.dataLoader
        let running = Locked<Task<Void, Never>?>(nil)
        let queued = MonotonicClock.seconds()
        let ticket = context.network.schedule(host: url.host ?? "", priority: job.priority) { [self] done in
            guard !job.isCancelled else { return done() }
            counters.add(.networkFetches)
            // A video (by its name) whose decoder reads ranges is read where it lies: its first block now, to
            // learn its size and check its bytes, the rest as the decoder asks
            let byRanges = stale == nil && RemoteRanges.applies(to: url, configuration)
            let task = Task {
                defer { done() }
                let dataRequest =
                    byRanges
                    ? RemoteRanges.firstRequest(url, configuration)
                    : DataRequest(
                        url: url, headers: stale?.1.conditionalHeaders ?? [],
                        partialDataTrigger: request.options.contains(.progressivePreviews)
                            ? ProgressivePreviewTrigger() : nil)
                let progress: @Sendable (DataProgress) -> Void = { p in
                    job.send(.progress(completed: p.received, total: p.expected))
                    if let partial = p.partialData {
                        job.send(
                            .preview(
                                FetchOutput(bytes: partial, origin: .network, timings: .init(), expected: p.expected)))
                    }
                }
                var result: Result<DataResponse, DarkroomError>
                var ranges: RemoteRanges?
                do throws(DarkroomError) {
                    var response = try await loader.loadData(dataRequest, progress: progress)
                    if byRanges, response.statusCode == 206 {
                        ranges = RemoteRanges.make(url, first: response, configuration, counters: counters)
                        // Not a video after all, or a length the server does not say: the whole file
                        if ranges == nil {
                            response = try await loader.loadData(DataRequest(url: url), progress: progress)
                        }
                    }
                    result = .success(response)
                } catch {
                    result = .failure(Task.isCancelled ? .cancelled : error)
                }
                var timings = ImageResponse.Timings()
                timings.cacheRead = cacheRead
                timings.fetch = MonotonicClock.seconds() - queued
                counters.fetchTimer.recordSeconds(timings.fetch)
                if let ranges {
                    return job.finish(
                        .success(FetchOutput(bytes: [], origin: .network, timings: timings, ranges: ranges)))
                }
                job.finish(
                    result.flatMap { response in
                        handleNetworkResponse(response, request: request, stale: stale, timings: timings)
                    })
            }
            running.withLock { $0 = task }
            if job.isCancelled { task.cancel() }
        }
        job.onCancel {
            ticket.cancel()
            running.withLock { $0 }?.cancel()
        }
        job.onPriorityChange { ticket.setPriority($0) }
    }

    private func handleNetworkResponse(
        _ response: DataResponse, request: ImageRequest,
        stale: (CachedData, HTTPCacheMetadata)?,
        timings: ImageResponse.Timings
    ) -> Result<FetchOutput, DarkroomError> {
        let now = configuration.now()
        if response.statusCode == 304, let (entry, old) = stale {
            counters.add(.revalidated)
            counters.add(.diskOriginalHits)
            let metadata =
                HTTPCachePolicy.updated(
                    old, with: response.headers, now: now, defaultMaxAge: configuration.defaultMaxAge)
                ?? HTTPCacheMetadata(etag: old.etag, lastModified: old.lastModified, expires: now)
            storeOriginal(entry.data, metadata: metadata, request: request)
            return .success(FetchOutput(bytes: entry.data, origin: .diskOriginal, timings: timings))
        }
        if response.statusCode == 304 {
            return .failure(DarkroomError(.httpStatus, "unexpected 304 for an unconditional request", statusCode: 304))
        }
        counters.add(.bytesFetched, response.data.count)
        return Self.checkImage(response.data, source: request.source).map { bytes in
            if let metadata = HTTPCachePolicy.metadata(
                for: response.headers, now: now, defaultMaxAge: configuration.defaultMaxAge)
            {
                storeOriginal(bytes, metadata: metadata, request: request)
            }
            return FetchOutput(bytes: bytes, origin: .network, timings: timings)
        }
    }

    private func storeOriginal(_ bytes: [UInt8], metadata: HTTPCacheMetadata, request: ImageRequest) {
        guard let dataCache = configuration.dataCache, !request.options.contains(.disableDiskCacheWrites),
            configuration.diskCachePolicy != .storeEncodedImages
        else { return }
        let key = Self.originalDiskKey(request)
        let encoded = metadata.encoded()
        context.ioQueue.enqueue(priority: .low) { _ in dataCache.storeData(bytes, metadata: encoded, forKey: key) }
    }

    /// Magic bytes decide whether these are an image, never a name or a Content-Type.
    static func checkImage(_ bytes: [UInt8], source: ImageRequest.Source) -> Result<[UInt8], DarkroomError> {
        let format = bytes.withUnsafeBytes { ImageProber.format(of: $0) }
        guard format != nil else {
            let prefix = Hex.encode(bytes.prefix(16))
            return .failure(
                DarkroomError(
                    .notAnImage,
                    "\(source.key): \(bytes.count) bytes that are not JPEG, PNG, WebP or GIF (starts \(prefix))"))
        }
        return .success(bytes)
    }
}
