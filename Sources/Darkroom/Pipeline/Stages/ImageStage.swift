import CoreMetrics
import DarkroomImage
import DarkroomSupport
import Logging

/// The image stage: what one request's waiters receive — the image at its geometry after its processors, from the
/// first layer below memory that holds it.
///
/// The image table (when one holds the request's geometry) and the disk cache of processed images are read on an
/// I/O thread; a miss joins the decode stage and runs the processors on a processing thread. The result is stored
/// in memory at once and in the table and the processed disk cache in the background. `returnData` requests skip
/// the decode and hand on the fetch stage's bytes.
final class ImageStage: Sendable {
    let context: PipelineContext
    let fetch: FetchStage
    let decode: DecodeStage
    /// Image jobs in flight, one per cache key and cache-relevant options.
    let jobs = JobPool<ImageJobKey, ImageResult>()

    init(context: PipelineContext, fetch: FetchStage, decode: DecodeStage) {
        self.context = context
        self.fetch = fetch
        self.decode = decode
    }

    private var configuration: ImagePipeline.Configuration { context.configuration }
    private var counters: PipelineCounters { context.counters }
    private var logger: Logger { context.logger }

    /// Joins or starts the image job of `request`; returns the subscription and whether a job in flight was joined.
    /// What the job sets off (its start, a joined job's new priority) runs where ``PipelineContext/control(_:)``
    /// puts it, so with ``ImagePipeline/Configuration/defersTaskControl`` the caller never takes a lock a decoding
    /// thread holds.
    func subscribe(
        _ request: ImageRequest, priority: ImageRequest.Priority,
        handler: @escaping SharedJob<ImageResult>.Handler
    ) -> (JobSubscription, joined: Bool) {
        let key = ImageJobKey(key: request.cacheKey, options: request.options.sharingBits)
        return jobs.subscribe(
            key: context.sharingKey(key), priority: priority, handler: handler,
            notify: { context.control($0) },
            start: { job in context.control { self.start(job, request: request) } })
    }

    /// The image job: table → processed disk → (shared) decode → processors → store → deliver.
    private func start(_ job: SharedJob<ImageResult>, request: ImageRequest) {
        if request.options.contains(.returnData) {
            return job.link(
                fetch.subscribe(request, priority: job.priority) { [self] event in
                    switch event {
                    case .progress(let c, let t): job.send(.progress(completed: c, total: t))
                    case .preview: break
                    case .finished(.success(let fetched)) where fetched.ranges != nil:
                        // A remote video read by ranges: the data asked for is the whole file, read on an I/O thread
                        let limit = configuration.maxResponseBytes
                        job.link(
                            context.ioQueue.enqueue(priority: job.priority.queueLevel) { _ in
                                guard !job.isCancelled, let ranges = fetched.ranges else { return }
                                job.finish(
                                    Result { () throws(DarkroomImageError) in try ranges.readAll(limit: limit) }
                                        .mapError { DarkroomError(.fileIO, $0.message, underlying: $0) }
                                        .map {
                                            ImageResult(
                                                container: nil, data: $0, origin: fetched.origin,
                                                timings: fetched.timings)
                                        })
                            })
                    case .finished(let result):
                        job.finish(
                            result.map {
                                ImageResult(container: nil, data: $0.bytes, origin: $0.origin, timings: $0.timings)
                            })
                    }
                })
        }
        let key = request.cacheKey
        let table = imageTables(for: request)
        let readTable = table != nil && !request.options.contains(.disableTableReads)
        let processedCache = processedDataCache(for: request)
        let readProcessed = processedCache != nil && !request.options.contains(.disableDiskCacheReads)
        guard readTable || readProcessed else { return startDecodeStage(job, request: request, timings: .init()) }

        job.link(
            context.ioQueue.enqueue(priority: job.priority.queueLevel) { [self] _ in
                guard !job.isCancelled else { return }
                var timings = ImageResponse.Timings()
                let t0 = MonotonicClock.seconds()
                if readTable, let table, let bitmap = table.image(forEntity: key.tableEntity, geometry: key.geometry) {
                    timings.cacheRead = MonotonicClock.seconds() - t0
                    counters.add(.tableHits)
                    return finishImage(
                        job, request: request,
                        ImageResult(container: ImageContainer(bitmap: bitmap), origin: .table, timings: timings))
                }
                guard readProcessed, let processedCache,
                    let entry = processedCache.cachedData(forKey: key.processedDiskKey)
                else {
                    timings.cacheRead = MonotonicClock.seconds() - t0
                    return startDecodeStage(job, request: request, timings: timings)
                }
                timings.cacheRead = MonotonicClock.seconds() - t0
                let readTimings = timings
                job.link(
                    context.decodeQueue.enqueue(priority: job.priority.queueLevel) { [self] wait in
                        guard !job.isCancelled else { return }
                        var t = readTimings
                        t.queueWait += wait
                        // The processed entry is the finished image: decoded as it is, no crop, no resize
                        var stored = ImageRequest(source: request.source, pixelFormat: request.geometry.pixelFormat)
                        stored.options = request.options.subtracting(.animated)
                        switch decode.decode(entry.data, for: stored, timings: &t) {
                        case .success(let container):
                            counters.add(.diskProcessedHits)
                            finishImage(
                                job, request: request,
                                ImageResult(container: container, origin: .diskProcessed, timings: t))
                        case .failure(let error):
                            logger.warning(
                                "dropping unreadable processed disk entry",
                                metadata: ["key": "\(key)", "error": "\(error)"])
                            processedCache.removeData(forKey: key.processedDiskKey)
                            startDecodeStage(job, request: request, timings: t)
                        }
                    })
            })
    }

    /// The disk cache, when this request's processed image belongs in it.
    private func processedDataCache(for request: ImageRequest) -> (any DataCaching)? {
        guard let cache = configuration.dataCache, !request.processors.isEmpty, !request.options.contains(.animated)
        else { return nil }
        switch configuration.diskCachePolicy {
        case .automatic, .storeEncodedImages, .storeAll: return cache
        case .storeOriginalData: return nil
        }
    }

    private func startDecodeStage(_ job: SharedJob<ImageResult>, request: ImageRequest, timings: ImageResponse.Timings)
    {
        job.link(
            decode.subscribe(request, priority: job.priority) { [self] event in
                switch event {
                case .progress(let c, let t):
                    job.send(.progress(completed: c, total: t))
                case .preview(let output):
                    job.send(
                        .preview(
                            ImageResult(container: output.container, origin: output.origin, timings: output.timings)))
                case .finished(.failure(let error)):
                    job.finish(.failure(error))
                case .finished(.success(let output)):
                    var decoded = output.timings
                    decoded.cacheRead += timings.cacheRead
                    guard !request.processors.isEmpty else {
                        return finishImage(
                            job, request: request,
                            ImageResult(container: output.container, origin: output.origin, timings: decoded))
                    }
                    guard !job.isCancelled else { return }
                    job.link(
                        context.decodeQueue.enqueue(priority: job.priority.queueLevel) { [self, decoded] wait in
                            guard !job.isCancelled else { return }
                            var t = decoded
                            t.queueWait += wait
                            job.finish(
                                process(output.container, request: request, timings: &t).map { container in
                                    let result = ImageResult(container: container, origin: output.origin, timings: t)
                                    store(result, request: request)
                                    return result
                                })
                        })
                }
            })
    }

    /// Runs the request's processors in order on the calling (pipeline-owned) thread.
    private func process(
        _ input: ImageContainer, request: ImageRequest,
        timings: inout ImageResponse.Timings
    ) -> Result<ImageContainer, DarkroomError> {
        let t0 = MonotonicClock.seconds()
        counters.add(.processings)
        defer {
            timings.process += MonotonicClock.seconds() - t0
            counters.processTimer.recordSeconds(MonotonicClock.seconds() - t0)
        }
        var bitmap = input.bitmap
        for processor in request.processors {
            do {
                bitmap = try processor.process(bitmap)
            } catch let error as DarkroomError {
                return .failure(error)
            } catch {
                return .failure(
                    DarkroomError(.processingFailed, "\(processor.identifier) failed: \(error)", underlying: error))
            }
        }
        return .success(ImageContainer(bitmap: bitmap, probe: input.probe))
    }

    /// Stores and delivers a result from any layer below memory.
    private func finishImage(_ job: SharedJob<ImageResult>, request: ImageRequest, _ result: ImageResult) {
        store(result, request: request)
        job.finish(.success(result))
    }

    /// The image tables that hold `request`'s geometry, unless it is animated (a table holds one frame).
    private func imageTables(for request: ImageRequest) -> (any ImageTableCaching)? {
        guard !request.options.contains(.animated), let tables = configuration.imageTables,
            tables.holds(request.geometry)
        else { return nil }
        return tables
    }

    /// Memory (now, synchronously), table and processed disk bytes (later, on the I/O threads).
    private func store(_ result: ImageResult, request: ImageRequest) {
        guard let container = result.container, !container.isPreview else { return }
        let key = request.cacheKey
        if !request.options.contains(.disableMemoryCacheWrites) { configuration.imageCache?.store(container, for: key) }
        if result.origin != .table, let tables = imageTables(for: request) {
            counters.add(.tableWrites)
            context.enqueueCacheWrite(on: context.ioQueue, priority: .low) {
                tables.store(container.bitmap, forEntity: key.tableEntity, geometry: key.geometry)
            }
        }
        if result.origin != .diskProcessed, !request.options.contains(.disableDiskCacheWrites),
            let cache = processedDataCache(for: request)
        {
            let quality = configuration.encodeQuality
            context.enqueueCacheWrite(on: context.decodeQueue, priority: .veryLow) { [logger] in
                let bitmap = container.bitmap
                do throws(DarkroomImageError) {
                    let bytes = try ImageEncoder.encode(
                        bitmap, as: bitmap.isOpaque ? .jpeg : .png,
                        options: EncodeOptions(quality: quality))
                    cache.storeData(bytes, metadata: nil, forKey: key.processedDiskKey)
                } catch {
                    logger.warning(
                        "could not encode processed image for the disk cache", metadata: ["error": "\(error)"])
                }
            }
        }
    }
}

/// Keys the image-level job: identical requests (same cache key, same cache-relevant options, same table).
struct ImageJobKey: Hashable, Sendable {
    let key: ImageCacheKey
    let options: UInt16
}
