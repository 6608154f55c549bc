import DarkroomCache
import DarkroomSupport

/// What a shared job tells its waiters: progress, previews, then exactly one final result.
enum JobEvent<Value: Sendable>: Sendable {
    case progress(completed: Int64, total: Int64?)
    case preview(Value)
    case finished(Result<Value, DarkroomError>)
}

/// One unit of work that many waiters share (a fetch, a decode, a processed image).
///
/// The job runs at the highest priority of its waiters and is cancelled when its last waiter leaves before it
/// finishes. Whoever starts the work registers *handlers*: cancel handlers (stop the transfer, drop the queued
/// decode, leave upstream jobs) and priority handlers (re-prioritise queued work and upstream subscriptions).
/// Handlers and waiters' callbacks always run outside the lock.
final class SharedJob<Value: Sendable>: Sendable {
    typealias Handler = @Sendable (JobEvent<Value>) -> Void
    typealias Priority = ImageRequest.Priority

    private struct Subscriber {
        var priority: Priority
        let handler: Handler
    }

    private enum Phase { case running, finished, cancelled }

    private struct State {
        var subscribers: [Int: Subscriber] = [:]
        var nextID = 0
        var priority: Priority = .veryLow
        var phase = Phase.running
        var cancelHandlers: [@Sendable () -> Void] = []
        var priorityHandlers: [@Sendable (Priority) -> Void] = []
        /// The last preview sent, for waiters who join later (a cell bound while its prefetch still runs).
        var lastPreview: Value?

        mutating func recomputePriority() -> Bool {
            let p = subscribers.values.map(\.priority).max() ?? priority
            defer { priority = p }
            return p != priority
        }
    }

    private enum UnsubscribeOutcome {
        case none
        case cancel([@Sendable () -> Void])
        case reprioritize(Priority, [@Sendable (Priority) -> Void])
    }

    private let state = Locked(State())
    private let onDispose: @Sendable (SharedJob<Value>) -> Void

    init(onDispose: @escaping @Sendable (SharedJob<Value>) -> Void) {
        self.onDispose = onDispose
    }

    /// The highest priority among the waiters.
    var priority: Priority { state.withLock { $0.priority } }

    /// Whether every waiter left before the job finished.
    var isCancelled: Bool { state.withLock { $0.phase == .cancelled } }

    /// Adds a waiter; `nil` when the job already finished or was cancelled (the pool then starts a new one).
    /// `notify` raises the job's priority handlers and hands a joining waiter the last preview sent, and must be
    /// called once the caller holds no lock.
    func subscribe(priority: Priority, handler: @escaping Handler) -> (id: Int, notify: @Sendable () -> Void)? {
        typealias Joined = (id: Int, changed: (Priority, [@Sendable (Priority) -> Void])?, preview: Value?)
        let joined: Joined? = state.withLock { s in
            guard s.phase == .running else { return nil }
            let id = s.nextID
            s.nextID += 1
            s.subscribers[id] = Subscriber(priority: priority, handler: handler)
            if s.subscribers.count == 1 {
                s.priority = priority
                return (id, nil, s.lastPreview)
            }
            return (id, s.recomputePriority() ? (s.priority, s.priorityHandlers) : nil, s.lastPreview)
        }
        guard let joined else { return nil }
        let (changed, preview) = (joined.changed, joined.preview)
        if changed == nil && preview == nil { return (joined.id, {}) }
        return (
            joined.id,
            {
                if let (p, handlers) = changed { for h in handlers { h(p) } }
                if let preview { handler(.preview(preview)) }
            }
        )
    }

    /// Removes a waiter. The last one to leave an unfinished job cancels it.
    func unsubscribe(_ id: Int) {
        let outcome: UnsubscribeOutcome = state.withLock { s in
            guard s.phase == .running, s.subscribers.removeValue(forKey: id) != nil else { return .none }
            if s.subscribers.isEmpty {
                s.phase = .cancelled
                let handlers = s.cancelHandlers
                s.cancelHandlers = []
                s.priorityHandlers = []
                return .cancel(handlers)
            }
            return s.recomputePriority() ? .reprioritize(s.priority, s.priorityHandlers) : .none
        }
        switch outcome {
        case .none: break
        case .cancel(let handlers):
            onDispose(self)
            for h in handlers { h() }
        case .reprioritize(let p, let handlers):
            for h in handlers { h(p) }
        }
    }

    /// Changes one waiter's priority; the job's priority follows the maximum.
    func setPriority(_ priority: Priority, for id: Int) {
        let changed: (Priority, [@Sendable (Priority) -> Void])? = state.withLock { s in
            guard s.phase == .running, s.subscribers[id] != nil else { return nil }
            s.subscribers[id]!.priority = priority
            return s.recomputePriority() ? (s.priority, s.priorityHandlers) : nil
        }
        if let (p, handlers) = changed { for h in handlers { h(p) } }
    }

    /// Registers work to stop when the job is cancelled; runs it at once if it already was.
    func onCancel(_ handler: @escaping @Sendable () -> Void) {
        let runNow: Bool = state.withLock { s in
            switch s.phase {
            case .running:
                s.cancelHandlers.append(handler)
                return false
            case .cancelled: return true
            case .finished: return false
            }
        }
        if runNow { handler() }
    }

    /// Registers work to re-prioritise when the job's priority changes.
    func onPriorityChange(_ handler: @escaping @Sendable (Priority) -> Void) {
        state.withLock { s in if s.phase == .running { s.priorityHandlers.append(handler) } }
    }

    /// Sends progress or a preview to every current waiter.
    func send(_ event: JobEvent<Value>) {
        if case .finished(let result) = event { return finish(result) }
        let handlers = state.withLock { s in
            guard s.phase == .running else { return [Handler]() }
            if case .preview(let value) = event { s.lastPreview = value }
            return s.subscribers.values.map(\.handler)
        }
        for h in handlers { h(event) }
    }

    /// Delivers the result to every waiter, once; later calls and calls after cancellation are ignored.
    func finish(_ result: Result<Value, DarkroomError>) {
        let handlers: [Handler]? = state.withLock { s in
            guard s.phase == .running else { return nil }
            s.phase = .finished
            let handlers = s.subscribers.sorted { $0.key < $1.key }.map(\.value.handler)
            s.subscribers = [:]
            s.lastPreview = nil
            s.cancelHandlers = []
            s.priorityHandlers = []
            return handlers
        }
        guard let handlers else { return }
        onDispose(self)
        for h in handlers { h(.finished(result)) }
    }
}

/// A waiter's handle on a shared job: leave it, or change its priority.
struct JobSubscription: Sendable {
    let cancel: @Sendable () -> Void
    let setPriority: @Sendable (ImageRequest.Priority) -> Void
}

/// In-flight jobs by key: a request for a key already in flight joins the job instead of starting another.
final class JobPool<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    private let jobs = Locked<[Key: SharedJob<Value>]>([:])

    /// Jobs in flight.
    var count: Int { jobs.withLock { $0.count } }

    /// Joins the job for `key` or creates it (then calls `start` with it, outside the lock). A `nil` key never
    /// shares. Returns the subscription and whether an existing job was joined. `notify` runs what joining set off
    /// (the job's new priority passed upstream, the last preview handed over): at once unless it is given elsewhere.
    func subscribe(
        key: Key?, priority: ImageRequest.Priority,
        handler: @escaping SharedJob<Value>.Handler,
        notify: (@escaping @Sendable () -> Void) -> Void = { $0() },
        start: (SharedJob<Value>) -> Void
    ) -> (JobSubscription, joined: Bool) {
        guard let key else {
            let job = SharedJob<Value>(onDispose: { _ in })
            let id = job.subscribe(priority: priority, handler: handler)!.id
            start(job)
            return (Self.subscription(job, id), false)
        }
        let (job, id, created, notifyJoined): (SharedJob<Value>, Int, Bool, @Sendable () -> Void) = jobs.withLock {
            dict in
            if let existing = dict[key], let (id, notify) = existing.subscribe(priority: priority, handler: handler) {
                return (existing, id, false, notify)
            }
            let job = SharedJob<Value>(onDispose: { [weak self] job in self?.remove(key, job) })
            let id = job.subscribe(priority: priority, handler: handler)!.id
            dict[key] = job
            return (job, id, true, {})
        }
        notify(notifyJoined)
        if created { start(job) }
        return (Self.subscription(job, id), !created)
    }

    private func remove(_ key: Key, _ job: SharedJob<Value>) {
        jobs.withLock { dict in if dict[key] === job { dict[key] = nil } }
    }

    private static func subscription(_ job: SharedJob<Value>, _ id: Int) -> JobSubscription {
        JobSubscription(cancel: { job.unsubscribe(id) }, setPriority: { job.setPriority($0, for: id) })
    }
}
