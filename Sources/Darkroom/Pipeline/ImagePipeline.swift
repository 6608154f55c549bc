import DarkroomCache
import DarkroomImage
import DarkroomSupport
import Foundation
import Logging

/// Loads images: one object an app asks for images, which does each piece of work once, in the right order, on
/// the right threads.
///
/// A request flows memory cache (synchronous, on the caller's thread) → image table (when one holds the request's
/// geometry) → disk cache of processed bytes → disk cache of original bytes (revalidated when stale) → network or
/// file → decode/downsample → process → store → deliver. Identical requests in flight share one task; requests
/// that differ only in processors share the decode; requests for one source share the fetch. Shared work runs at
/// the highest priority of its waiters and is cancelled when the last one leaves.
///
/// Threads: decoding and processing run on at most ``Configuration/processingLimit`` threads the pipeline owns;
/// disk and file reads on ``Configuration/ioLimit`` more; network transfers are async (AsyncHTTPClient on NIO's
/// event loops), at most ``Configuration/networkLimit`` at once and ``Configuration/perHostLimit`` per host.
/// Callbacks run on whichever of these threads finished the work, or synchronously for memory-cache hits.
public final class ImagePipeline: Sendable {
    /// The configuration this pipeline was built with.
    public let configuration: Configuration
    /// The number of network transfers running, debounced (a network-activity indicator).
    public let networkActivity: NetworkActivity

    /// What the stages share: the configuration, the two pools of threads, the network scheduler, the counters.
    let context: PipelineContext
    /// A source's bytes (files, the disk cache of originals, the network), once per source.
    let fetches: FetchStage
    /// The image at a geometry, once per source and geometry.
    let decodes: DecodeStage
    /// What a request's waiters receive: tables, processed disk, decode, processors, stores.
    let images: ImageStage

    /// Creates a pipeline. Cost: no threads start until work arrives.
    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
        networkActivity = NetworkActivity(debounce: configuration.activityDebounce)
        context = PipelineContext(configuration: configuration, networkActivity: networkActivity)
        fetches = FetchStage(context: context)
        decodes = DecodeStage(context: context, fetch: fetches)
        images = ImageStage(context: context, fetch: fetches, decode: decodes)
    }

    /// What the pipeline has done so far (requests, hits per layer, fetches, decodes, sharing, failures).
    public var statistics: PipelineStatistics { context.counters.snapshot }

    /// Blocks the calling thread until the cache writes queued so far — image-table entries and processed disk
    /// bytes, written at low priority after delivery — have finished, or `timeout` seconds have passed. Returns
    /// whether they all finished. For quitting: a process that exits without it loses the writes still queued.
    /// Cost: the thread sleeps until the last write finishes and wakes it; never call it on a latency-critical
    /// thread.
    public func waitForCacheWrites(timeout: Double) -> Bool {
        context.pendingCacheWrites.waitForZero(timeout: timeout)
    }

    /// Cache writes queued and not yet finished (see ``waitForCacheWrites(timeout:)``).
    public var pendingCacheWrites: Int { context.pendingCacheWrites.value }

    // MARK: Memory fast path

    /// The memory cache's image for `request`, synchronously on the caller's thread (no hop, no allocation when
    /// the request has no processors). Cost: hashing the key plus one lock — well under a microsecond.
    /// `nil` for a miss, for ``ImageRequest/Options/returnData`` requests, and when memory reads are disabled.
    @inline(__always)
    public func cachedImage(for request: ImageRequest) -> ImageContainer? {
        guard let imageCache = configuration.imageCache,
            request.options.isDisjoint(with: [.disableMemoryCacheReads, .returnData])
        else {
            return nil
        }
        return imageCache.image(for: request.cacheKey)
    }

    /// Stores an image in the memory cache under `request`'s key (for images made elsewhere).
    public func storeCachedImage(_ image: ImageContainer, for request: ImageRequest) {
        configuration.imageCache?.store(image, for: request.cacheKey)
    }

    // MARK: Callback API

    /// Starts loading; `completion` gets the result exactly once — `.failure` with code `cancelled` if the task
    /// is cancelled first, in which case no image is ever delivered. A memory-cache hit completes synchronously,
    /// before this returns. Other callbacks run on a pipeline thread.
    @discardableResult
    public func loadImage(
        with request: ImageRequest,
        progress: (@Sendable (_ completed: Int64, _ total: Int64?) -> Void)? = nil,
        completion: @escaping @Sendable (Result<ImageResponse, DarkroomError>) -> Void
    ) -> ImageTask {
        start(request) { event in
            switch event {
            case .progress(let c, let t): progress?(c, t)
            case .preview: break
            case .finished(let result): completion(result)
            }
        }
    }

    // MARK: Async API

    /// Loads the image. A memory-cache hit returns without suspending; cancelling the calling task cancels the
    /// request (the shared work stops when its last waiter leaves).
    /// - Throws: ``DarkroomError``.
    public func image(for request: ImageRequest) async throws(DarkroomError) -> ImageResponse {
        context.counters.add(.requests)
        if let hit = memoryHit(request) { return hit }
        let holder = TaskHolder()
        let result: Result<ImageResponse, DarkroomError> = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                holder.set(
                    start(request, counted: false) { event in
                        if case .finished(let result) = event { continuation.resume(returning: result) }
                    })
            }
        } onCancel: {
            holder.cancel()
        }
        return try result.get()
    }

    /// Loads the image as a stream of events: progress, previews, then the final response (or a thrown
    /// ``DarkroomError``). Ending the iteration early cancels the request.
    public func imageEvents(for request: ImageRequest) -> AsyncThrowingStream<ImageTask.Event, any Error> {
        AsyncThrowingStream { continuation in
            let task = start(request) { event in
                switch event {
                case .finished(.success):
                    continuation.yield(event)
                    continuation.finish()
                case .finished(.failure(let error)): continuation.finish(throwing: error)
                default: continuation.yield(event)
                }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    // MARK: Core

    func memoryHit(_ request: ImageRequest) -> ImageResponse? {
        guard let container = cachedImage(for: request) else { return nil }
        context.counters.add(.memoryHits)
        return ImageResponse(request: request, container: container, data: nil, origin: .memory, timings: .init())
    }

    /// Starts a request and returns its task; `handler` receives events until a final one.
    func start(
        _ request: ImageRequest, counted: Bool = true,
        handler: @escaping @Sendable (ImageTask.Event) -> Void
    ) -> ImageTask {
        if counted { context.counters.add(.requests) }
        let task = ImageTask(request: request, pipeline: self, handler: handler)
        if let hit = memoryHit(request) {
            task.deliver(.finished(.success(hit)))
            return task
        }
        let started = MonotonicClock.seconds()
        let (subscription, joined) = images.subscribe(
            request, priority: request.priority,
            handler: { event in
                switch event {
                case .progress(let c, let t): task.deliver(.progress(completed: c, total: t))
                case .preview(let r): task.deliver(.preview(r.response(for: request, started: started)))
                case .finished(let r): task.deliver(.finished(r.map { $0.response(for: request, started: started) }))
                }
            })
        if joined { context.counters.add(.sharedRequests) }
        task.attach(subscription)
        return task
    }
}

/// Holds the task an async caller waits on, so its cancellation handler can reach it whichever comes first.
final class TaskHolder: Sendable {
    private let state = Locked<(task: ImageTask?, cancelled: Bool)>((nil, false))

    func set(_ task: ImageTask) {
        let cancelled = state.withLock { s in
            s.task = task
            return s.cancelled
        }
        if cancelled { task.cancel() }
    }

    func cancel() {
        let task = state.withLock { s in
            s.cancelled = true
            return s.task
        }
        task?.cancel()
    }
}
