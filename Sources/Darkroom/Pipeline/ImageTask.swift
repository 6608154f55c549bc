import DarkroomCache
import DarkroomSupport

/// One caller's handle on a request in flight: cancel it, or change its priority.
///
/// Cancelling leaves the shared work; the work itself stops only when its last waiter leaves. After
/// ``cancel()`` the task delivers `.failure(cancelled)` once and nothing else, ever.
public final class ImageTask: Sendable {
    /// What a task reports, in order: any number of progress and preview events, then one `finished`.
    public enum Event: Sendable {
        /// Bytes received so far and the total when known.
        case progress(completed: Int64, total: Int64?)
        /// A low-quality image decoded from part of the bytes (``ImageRequest/Options/progressivePreviews``).
        case preview(ImageResponse)
        /// The final result.
        case finished(Result<ImageResponse, DarkroomError>)
    }

    private enum Phase { case running, finished, cancelled }

    private struct State {
        var phase = Phase.running
        var priority: ImageRequest.Priority
        var subscription: JobSubscription?
        var handler: (@Sendable (Event) -> Void)?
    }

    /// The request, as given.
    public let request: ImageRequest
    private let state: Locked<State>
    private weak let pipeline: ImagePipeline?

    init(request: ImageRequest, pipeline: ImagePipeline, handler: @escaping @Sendable (Event) -> Void) {
        self.request = request
        self.pipeline = pipeline
        state = Locked(State(priority: request.priority, handler: handler))
    }

    /// The task's priority; setting it re-prioritises the shared work (its priority is the highest of its waiters').
    public var priority: ImageRequest.Priority {
        get { state.withLock { $0.priority } }
        set {
            let subscription: JobSubscription? = state.withLock { s in
                guard s.phase == .running, s.priority != newValue else { return nil }
                s.priority = newValue
                return s.subscription
            }
            if let subscription { control { subscription.setPriority(newValue) } }
        }
    }

    /// Whether the task finished (successfully or not) or was cancelled.
    public var isDone: Bool { state.withLock { $0.phase != .running } }

    /// Whether ``cancel()`` was called before the task finished.
    public var isCancelled: Bool { state.withLock { $0.phase == .cancelled } }

    /// Stops waiting: delivers `.failure(cancelled)` now (synchronously) and never anything else. Idempotent; no
    /// effect on a finished task.
    public func cancel() {
        let taken: (JobSubscription?, (@Sendable (Event) -> Void)?)? = state.withLock { s in
            guard s.phase == .running else { return nil }
            s.phase = .cancelled
            defer {
                s.subscription = nil
                s.handler = nil
            }
            return (s.subscription, s.handler)
        }
        guard let (subscription, handler) = taken else { return }
        if let subscription { control { subscription.cancel() } }
        pipeline?.context.counters.add(.cancellations)
        handler?(.finished(.failure(.cancelled)))
    }

    /// Passes an update of the shared work to the pipeline's ``PipelineContext/control(_:)``; at once when the
    /// pipeline is gone.
    private func control(_ update: @escaping @Sendable () -> Void) {
        guard let pipeline else { return update() }
        pipeline.context.control(update)
    }

    func attach(_ subscription: JobSubscription) {
        let cancelled: Bool = state.withLock { s in
            guard s.phase == .running else { return s.phase == .cancelled }
            s.subscription = subscription
            return false
        }
        if cancelled { subscription.cancel() }
    }

    func deliver(_ event: Event) {
        let handler: (@Sendable (Event) -> Void)? = state.withLock { s in
            guard s.phase == .running else { return nil }
            if case .finished = event {
                s.phase = .finished
                defer {
                    s.handler = nil
                    s.subscription = nil
                }
                return s.handler
            }
            return s.handler
        }
        if case .finished(.failure(let e)) = event, handler != nil, e.code != .cancelled {
            pipeline?.context.counters.add(.failures)
        }
        handler?(event)
    }
}
