import DarkroomSupport
import Logging

/// What every stage of one pipeline shares: its configuration, its pools of threads, the network scheduler,
/// its counters and its logger. Built once by ``ImagePipeline`` and handed to each stage; its only mutable state is
/// the count of cache writes in flight, behind a lock (the queues, the scheduler and the counters are thread-safe).
final class PipelineContext: Sendable {
    let configuration: ImagePipeline.Configuration
    let counters: PipelineCounters
    let logger: Logger
    /// Decoding, processing and encoding: at most ``ImagePipeline/Configuration/processingLimit`` threads.
    let decodeQueue: WorkQueue
    /// A file's embedded thumbnail, decoded as a preview (``ImageRequest/Options/embeddedThumbnailPreview``): one
    /// thread of its own, so a preview (a small decode a cell shows while its photo decodes) never waits for a
    /// decoding thread busy with a full decode. No thread starts until a request asks for such a preview.
    let previewQueue: WorkQueue
    /// Disk and file reads and writes: at most ``ImagePipeline/Configuration/ioLimit`` threads.
    let ioQueue: WorkQueue
    /// Network transfers: at most ``ImagePipeline/Configuration/networkLimit`` at once, and
    /// ``ImagePipeline/Configuration/perHostLimit`` per host.
    let network: NetworkScheduler
    /// Task cancellations, priority changes and job starts, in order, when
    /// ``ImagePipeline/Configuration/defersTaskControl`` is set: one thread at nice 0.
    private let controlQueue: WorkQueue?
    /// Cache writes queued and not yet run (image tables, processed disk bytes), for
    /// ``ImagePipeline/waitForCacheWrites(timeout:)``.
    let pendingCacheWrites = PendingCount()

    /// Cost: no threads start until work arrives.
    init(configuration: ImagePipeline.Configuration, networkActivity: NetworkActivity) {
        self.configuration = configuration
        logger = configuration.logger
        counters = PipelineCounters(prefix: configuration.metricsPrefix)
        decodeQueue = WorkQueue(
            name: "darkroom.decode", maxConcurrent: configuration.processingLimit,
            niceness: configuration.threadNiceness)
        previewQueue = WorkQueue(
            name: "darkroom.preview", maxConcurrent: 1, idleTimeout: 5, niceness: configuration.threadNiceness)
        ioQueue = WorkQueue(
            name: "darkroom.io", maxConcurrent: configuration.ioLimit, niceness: configuration.threadNiceness)
        controlQueue =
            configuration.defersTaskControl
            ? WorkQueue(name: "darkroom.control", maxConcurrent: 1, idleTimeout: 5, niceness: 0) : nil
        network = NetworkScheduler(
            totalLimit: configuration.networkLimit, perHostLimit: configuration.perHostLimit,
            activity: networkActivity)
    }

    /// Queues a cache write on `queue`, counted in ``pendingCacheWrites`` until it has run.
    func enqueueCacheWrite(
        on queue: WorkQueue, priority: WorkQueue.Priority, _ write: @escaping @Sendable () -> Void
    ) {
        pendingCacheWrites.increment()
        queue.enqueue(priority: priority) { [pendingCacheWrites] _ in
            write()
            pendingCacheWrites.decrement()
        }
    }

    /// Runs an update of a shared job (a task's cancellation or priority change, a job's start): on the control thread, in the order given, when
    /// ``ImagePipeline/Configuration/defersTaskControl`` is set; otherwise now, on the caller's thread.
    func control(_ update: @escaping @Sendable () -> Void) {
        guard let controlQueue else { return update() }
        controlQueue.enqueue(priority: .veryHigh) { _ in update() }
    }

    /// Whether nothing given to ``control(_:)`` is queued or running (always true when it runs work at once).
    var controlIsIdle: Bool {
        guard let stats = controlQueue?.statistics else { return true }
        return stats.pending == 0 && stats.running == 0
    }

    /// The key a stage shares its jobs under, or `nil` (never shared) when sharing is switched off.
    func sharingKey<Key>(_ key: @autoclosure () -> Key) -> Key? {
        configuration.isSharingEnabled ? key() : nil
    }
}

extension SharedJob {
    /// Ties an upstream subscription to this job: left when the job is cancelled, re-prioritised with it.
    func link(_ subscription: JobSubscription) {
        onCancel { subscription.cancel() }
        onPriorityChange { subscription.setPriority($0) }
    }

    /// Ties queued work to this job: dropped from the queue when the job is cancelled, re-prioritised with it.
    func link(_ item: WorkQueue.Item) {
        onCancel { item.cancel() }
        onPriorityChange { item.setPriority($0.queueLevel) }
    }
}
