import DarkroomCache
import DarkroomSupport
import Foundation

/// Bounds the renders running at once, the memory they may use together, and the renders waiting; beyond that
/// it refuses at once, so overload turns into `429 Too Many Requests` instead of queues that grow memory and
/// latency without bound.
///
/// Each render states its estimated working memory (`cost`); a render starts only when a slot is free *and* its
/// cost fits in what the running ones left of ``memoryBudget`` — except that a render alone may always start
/// (so one larger than the whole budget still runs, by itself). Waiters start in arrival order (no overtaking,
/// so a large render is not starved by small ones). A waiter whose task is cancelled leaves the queue at once.
/// Cost: one lock per acquire and release; a waiter holds one continuation. Thread-safe.
final class AdmissionController: Sendable {
    /// Most renders running at once.
    let maxRunning: Int
    /// Most renders waiting for a slot; a request that finds the queue full is refused.
    let maxQueued: Int
    /// Bytes of working memory the running renders may hold together.
    let memoryBudget: Int

    private struct Waiter {
        let id: UInt64
        let cost: Int
        let continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var running = 0
        var reserved = 0
        var queue: [Waiter] = []
        var head = 0
        var nextID: UInt64 = 0
        /// Exponentially weighted mean of render seconds, for `Retry-After`.
        var meanSeconds = 0.1
        var refused: UInt64 = 0
        var queuedCount: Int { queue.count - head }
    }

    private let state = Locked(State())

    /// Creates a controller. `maxRunning` ≥ 1, `maxQueued` ≥ 0; `memoryBudget` defaults to unbounded.
    init(maxRunning: Int, maxQueued: Int, memoryBudget: Int = .max) {
        self.maxRunning = max(1, maxRunning)
        self.maxQueued = max(0, maxQueued)
        self.memoryBudget = max(1, memoryBudget)
    }

    /// Bytes reserved by the running renders now.
    var reservedBytes: Int { state.withLock { $0.reserved } }

    /// Renders running now.
    var running: Int { state.withLock { $0.running } }
    /// Renders waiting now.
    var queued: Int { state.withLock { $0.queuedCount } }
    /// Requests refused so far.
    var refusedCount: UInt64 { state.withLock { $0.refused } }

    /// Seconds a client refused now should wait before retrying: the time to drain what is queued and running
    /// at the mean render time, at least 1.
    var retryAfterSeconds: Int {
        state.withLock { s in
            let backlog = Double(s.running + s.queuedCount) / Double(maxRunning)
            return max(1, Int((backlog * s.meanSeconds).rounded(.up)))
        }
    }

    /// Runs `operation` in a slot with `cost` bytes of the memory budget reserved: at once if both are free,
    /// after waiting in the queue otherwise.
    /// - Throws: ``ServerError`` `overloaded` when every slot is taken and the queue is full; `CancellationError`
    ///   when the calling task is cancelled while waiting; whatever `operation` throws.
    func run<T: Sendable>(cost: Int = 0, _ operation: () async throws -> T) async throws -> T {
        let cost = max(0, cost)
        try await acquire(cost: cost)
        let started = ContinuousClock.now
        defer { release(cost: cost, seconds: (ContinuousClock.now - started).seconds) }
        return try await operation()
    }

    private func fits(_ cost: Int, _ s: State) -> Bool {
        s.running < maxRunning && (s.running == 0 || s.reserved + cost <= memoryBudget)
    }

    private func acquire(cost: Int) async throws {
        enum Decision {
            case run
            case wait(UInt64)
            case refuse
        }
        let id: UInt64 = state.withLock { s in
            s.nextID += 1
            return s.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let decision: Decision = state.withLock { s in
                    if Task.isCancelled { return .refuse }
                    if s.queuedCount == 0 && fits(cost, s) {
                        s.running += 1
                        s.reserved += cost
                        return .run
                    }
                    if s.queuedCount < maxQueued {
                        s.queue.append(Waiter(id: id, cost: cost, continuation: continuation))
                        return .wait(id)
                    }
                    s.refused += 1
                    return .refuse
                }
                switch decision {
                case .run: continuation.resume()
                case .wait: break
                case .refuse:
                    if Task.isCancelled {
                        continuation.resume(throwing: CancellationError())
                    } else {
                        continuation.resume(
                            throwing: ServerError(
                                .overloaded,
                                "the server is busy: \(maxRunning) renders running and \(maxQueued) waiting; retry later"
                            ))
                    }
                }
            }
        } onCancel: {
            let (waiter, started): (Waiter?, [Waiter]) = state.withLock { s in
                guard let index = s.queue[s.head...].firstIndex(where: { $0.id == id }) else { return (nil, []) }
                let waiter = s.queue.remove(at: index)
                return (waiter, admitWaiting(&s))  // it may have been the large one holding the line
            }
            waiter?.continuation.resume(throwing: CancellationError())
            for w in started { w.continuation.resume() }
        }
    }

    private func release(cost: Int, seconds: Double) {
        let started: [Waiter] = state.withLock { s in
            s.meanSeconds = s.meanSeconds * 0.9 + seconds * 0.1
            s.running -= 1
            s.reserved -= cost
            return admitWaiting(&s)
        }
        for waiter in started { waiter.continuation.resume() }
    }

    /// Starts waiters from the head, in order, while the next one fits; the caller resumes them after unlocking.
    private func admitWaiting(_ s: inout State) -> [Waiter] {
        var started: [Waiter] = []
        while s.head < s.queue.count, fits(s.queue[s.head].cost, s) {
            let waiter = s.queue[s.head]
            s.head += 1
            s.running += 1
            s.reserved += waiter.cost
            started.append(waiter)
        }
        if s.head > 64 && s.head * 2 > s.queue.count {
            s.queue.removeFirst(s.head)
            s.head = 0
        }
        return started
    }
}

extension Duration {
    /// This duration in seconds.
    var seconds: Double {
        let (s, a) = components
        return Double(s) + Double(a) * 1e-18
    }
}
