import DarkroomCache
import DarkroomSupport

/// Warms the caches for images about to be needed: a list of requests at low priority, a few at a time.
///
/// Prefetched images go into the caches only (nothing is delivered). A real request for the same image while its
/// prefetch is in flight joins it, and the shared work's priority rises to the real request's. Stopping a
/// prefetch cancels it unless a real request still waits on the shared work.
public final class ImagePrefetcher: Sendable {
    private struct State {
        var queue: [ImageRequest] = []
        var queued: Set<ImageCacheKey> = []
        /// In flight: a ticket per key, and the task once `start` returned it.
        var running: [ImageCacheKey: (ticket: UInt64, task: ImageTask?)] = [:]
        var nextTicket: UInt64 = 0
        var completed = 0
    }

    /// The pipeline whose caches are warmed.
    public let pipeline: ImagePipeline
    /// Most prefetches in flight. Default 2.
    public let maxConcurrent: Int
    /// Priority given to every prefetch. Default `.low`.
    public let priority: ImageRequest.Priority
    private let state = Locked(State())

    /// Creates a prefetcher.
    public init(pipeline: ImagePipeline, maxConcurrent: Int = 2, priority: ImageRequest.Priority = .low) {
        self.pipeline = pipeline
        self.maxConcurrent = max(1, maxConcurrent)
        self.priority = priority
    }

    /// Queues requests not already cached, queued or in flight. Cost: one memory-cache lookup each.
    public func startPrefetching(with requests: [ImageRequest]) {
        for var request in requests where pipeline.cachedImage(for: request) == nil {
            request.priority = priority
            let key = request.cacheKey
            state.withLock { s in
                guard !s.queued.contains(key), s.running[key] == nil else { return }
                s.queued.insert(key)
                s.queue.append(request)
            }
        }
        pump()
    }

    /// Drops queued prefetches for these requests and cancels those in flight.
    public func stopPrefetching(with requests: [ImageRequest]) {
        let keys = Set(requests.map(\.cacheKey))
        let tasks: [ImageTask] = state.withLock { s in
            s.queue.removeAll { keys.contains($0.cacheKey) }
            s.queued.subtract(keys)
            return keys.compactMap { s.running.removeValue(forKey: $0)?.task }
        }
        for t in tasks { t.cancel() }
        pump()
    }

    /// Drops every queued prefetch and cancels those in flight.
    public func stopPrefetching() {
        let tasks: [ImageTask] = state.withLock { s in
            s.queue = []
            s.queued = []
            defer { s.running = [:] }
            return s.running.values.compactMap(\.task)
        }
        for t in tasks { t.cancel() }
    }

    /// Prefetches queued and in flight.
    public var pendingCount: Int { state.withLock { $0.queue.count + $0.running.count } }

    /// Prefetches that finished (successfully or not).
    public var completedCount: Int { state.withLock { $0.completed } }

    private func pump() {
        while true {
            let next: (ImageRequest, UInt64)? = state.withLock { s in
                guard s.running.count < maxConcurrent, !s.queue.isEmpty else { return nil }
                let request = s.queue.removeFirst()
                s.queued.remove(request.cacheKey)
                s.nextTicket += 1
                s.running[request.cacheKey] = (s.nextTicket, nil)
                return (request, s.nextTicket)
            }
            guard let (request, ticket) = next else { return }
            let key = request.cacheKey
            let task = pipeline.start(request) { [weak self] event in
                guard case .finished = event, let self else { return }
                self.finished(key, ticket)
            }
            state.withLock { s in if s.running[key]?.ticket == ticket { s.running[key]!.task = task } }
        }
    }

    private func finished(_ key: ImageCacheKey, _ ticket: UInt64) {
        state.withLock { s in
            if s.running[key]?.ticket == ticket { s.running[key] = nil }
            s.completed += 1
        }
        pump()
    }
}
