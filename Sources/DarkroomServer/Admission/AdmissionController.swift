import Foundation
import Synchronization

/// Bounds the renders running at once and the renders waiting for a slot; beyond both it refuses at once, so
/// overload turns into `429 Too Many Requests` instead of queues that grow memory and latency without bound.
///
/// Cost: one lock per acquire and release; a waiter holds one continuation. Waiters start in arrival order.
/// A waiter whose task is cancelled leaves the queue at once. Thread-safe.
public final class AdmissionController: Sendable {
    /// Most renders running at once.
    public let maxRunning: Int
    /// Most renders waiting for a slot; a request that finds the queue full is refused.
    public let maxQueued: Int

    private struct Waiter {
        let id: UInt64
        let continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var running = 0
        var queue: [Waiter] = []
        var head = 0
        var nextID: UInt64 = 0
        /// Exponentially weighted mean of render seconds, for `Retry-After`.
        var meanSeconds = 0.1
        var refused: UInt64 = 0
        var queuedCount: Int { queue.count - head }
    }

    private let state = Mutex(State())

    /// Creates a controller. `maxRunning` ≥ 1, `maxQueued` ≥ 0.
    public init(maxRunning: Int, maxQueued: Int) {
        self.maxRunning = max(1, maxRunning)
        self.maxQueued = max(0, maxQueued)
    }

    /// Renders running now.
    public var running: Int { state.withLock { $0.running } }
    /// Renders waiting now.
    public var queued: Int { state.withLock { $0.queuedCount } }
    /// Requests refused so far.
    public var refusedCount: UInt64 { state.withLock { $0.refused } }

    /// Seconds a client refused now should wait before retrying: the time to drain what is queued and running
    /// at the mean render time, at least 1.
    public var retryAfterSeconds: Int {
        state.withLock { s in
            let backlog = Double(s.running + s.queuedCount) / Double(maxRunning)
            return max(1, Int((backlog * s.meanSeconds).rounded(.up)))
        }
    }

    /// Runs `operation` in a slot: at once if one is free, after waiting in the queue otherwise.
    /// - Throws: ``ServerError`` `overloaded` when every slot is taken and the queue is full; `CancellationError`
    ///   when the calling task is cancelled while waiting; whatever `operation` throws.
    public func run<T: Sendable>(_ operation: () async throws -> T) async throws -> T {
        try await acquire()
        let started = ContinuousClock.now
        defer { release(seconds: (ContinuousClock.now - started).seconds) }
        return try await operation()
    }

    private func acquire() async throws {
        enum Decision { case run, wait(UInt64), refuse }
        let id: UInt64 = state.withLock { s in
            s.nextID += 1
            return s.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let decision: Decision = state.withLock { s in
                    if Task.isCancelled { return .refuse }
                    if s.running < maxRunning && s.queuedCount == 0 {
                        s.running += 1
                        return .run
                    }
                    if s.queuedCount < maxQueued {
                        s.queue.append(Waiter(id: id, continuation: continuation))
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
                        continuation.resume(throwing: ServerError(.overloaded,
                            "the server is busy: \(maxRunning) renders running and \(maxQueued) waiting; retry later"))
                    }
                }
            }
        } onCancel: {
            let waiter: Waiter? = state.withLock { s in
                guard let index = s.queue[s.head...].firstIndex(where: { $0.id == id }) else { return nil }
                return s.queue.remove(at: index)
            }
            waiter?.continuation.resume(throwing: CancellationError())
        }
    }

    private func release(seconds: Double) {
        let next: Waiter? = state.withLock { s in
            s.meanSeconds = s.meanSeconds * 0.9 + seconds * 0.1
            if s.head < s.queue.count {
                let waiter = s.queue[s.head]
                s.head += 1
                if s.head > 64 && s.head * 2 > s.queue.count {
                    s.queue.removeFirst(s.head)
                    s.head = 0
                }
                return waiter   // the slot passes straight to the waiter; `running` stays the same
            }
            s.running -= 1
            return nil
        }
        next?.continuation.resume()
    }
}

extension Duration {
    /// This duration in seconds.
    var seconds: Double {
        let (s, a) = components
        return Double(s) + Double(a) * 1e-18
    }
}
