import DarkroomCache
import DarkroomSupport
import Dispatch

/// The number of network transfers running, published after a short debounce (the seeds' network-activity
/// indicator): a burst of transfers that start and end within the debounce interval publishes once, with the
/// count at the end of the burst.
public final class NetworkActivity: Sendable {
    private struct State {
        var current = 0
        var published = 0
        var generation: UInt64 = 0
        var lastSequence: UInt64 = 0
        var observers: [@Sendable (Int) -> Void] = []
    }

    /// How long the count must stay unchanged before it is published.
    public let debounce: Double
    private let state = Locked(State())
    private let queue = DispatchQueue(label: "darkroom.network-activity")

    /// Creates a counter publishing after `debounce` seconds of quiet (default 0.1 s).
    public init(debounce: Double = 0.1) { self.debounce = debounce }

    /// The transfers running now (not debounced).
    public var current: Int { state.withLock { $0.current } }

    /// The last published count.
    public var published: Int { state.withLock { $0.published } }

    /// Calls `observer` with each published count, on a private serial queue.
    public func observe(_ observer: @escaping @Sendable (Int) -> Void) {
        state.withLock { $0.observers.append(observer) }
    }

    /// Records `count` as of `sequence` (numbered under the scheduler's lock, so updates that race here out of
    /// order cannot leave an older count standing).
    func update(_ count: Int, sequence: UInt64) {
        let generation: UInt64? = state.withLock { s in
            guard sequence > s.lastSequence else { return nil }
            s.lastSequence = sequence
            s.current = count
            s.generation &+= 1
            return s.generation
        }
        guard let generation else { return }
        queue.asyncAfter(deadline: .now() + debounce) { [self] in
            let publish: (Int, [@Sendable (Int) -> Void])? = state.withLock { s in
                guard s.generation == generation, s.published != s.current else { return nil }
                s.published = s.current
                return (s.current, s.observers)
            }
            if let (count, observers) = publish { for o in observers { o(count) } }
        }
    }
}
