import DarkroomCache
import DarkroomSupport

/// Runs one render per key at a time: requests for a thumbnail already being rendered wait for that render
/// instead of starting their own ("do each piece of work once").
///
/// The shared render is an unstructured task counted by its waiters. A waiter whose task is cancelled (its
/// deadline passed, its client disconnected) leaves at once with `CancellationError`; when the last one leaves,
/// the render is cancelled — its admission wait, fetch, retries and decode stop, so the slot it held or waited
/// for frees at once — and forgotten, so a later request starts afresh. Cost: one lock per call and per leave.
/// Thread-safe.
final class RenderCoalescer<Value: Sendable>: Sendable {
    private struct Entry {
        let id: UInt64
        var task: Task<Void, Never>?
        var waiters: [UInt64: CheckedContinuation<Value, any Error>] = [:]
    }
    private struct State {
        var inFlight: [String: Entry] = [:]
        var nextID: UInt64 = 0
        var started: UInt64 = 0
        var joined: UInt64 = 0
        var abandoned: UInt64 = 0
    }
    private let state = Locked(State())
    private enum Join {
        case joined
        case start(UInt64)
        case cancelled
    }

    /// Renders started, requests that joined one already running, and renders cancelled because every waiter
    /// left.
    var counts: (started: UInt64, joined: UInt64, abandoned: UInt64) {
        state.withLock { ($0.started, $0.joined, $0.abandoned) }
    }

    /// Renders in flight now.
    var inFlight: Int { state.withLock { $0.inFlight.count } }

    /// The value for `key`: joins the render in flight, or starts `render` as a new one.
    /// - Throws: what `render` throws; `CancellationError` when the calling task is cancelled first.
    func value(forKey key: String, _ render: @escaping @Sendable () async throws -> Value) async throws -> Value {
        let waiter: UInt64 = state.withLock { s in
            s.nextID += 1
            return s.nextID
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Value, any Error>) in
                let join: Join = state.withLock { s in
                    if Task.isCancelled { return .cancelled }
                    if s.inFlight[key] != nil {
                        s.inFlight[key]!.waiters[waiter] = continuation
                        s.joined += 1
                        return .joined
                    }
                    s.started += 1
                    s.nextID += 1
                    var entry = Entry(id: s.nextID)
                    entry.waiters[waiter] = continuation
                    s.inFlight[key] = entry
                    return .start(entry.id)
                }
                switch join {
                case .joined: break
                case .cancelled: continuation.resume(throwing: CancellationError())
                case .start(let id):
                    let task = Task {
                        let result: Result<Value, any Error>
                        do { result = .success(try await render()) } catch { result = .failure(error) }
                        finish(key: key, id: id, result)
                    }
                    // Gone already: every waiter left before the task existed (or it finished, and cancelling a
                    // finished task does nothing)
                    let gone: Bool = state.withLock { s in
                        guard s.inFlight[key]?.id == id else { return true }
                        s.inFlight[key]!.task = task
                        return false
                    }
                    if gone { task.cancel() }
                }
            }
        } onCancel: {
            leave(key: key, waiter: waiter)
        }
    }

    /// Hands the render's result to its waiters and forgets it.
    private func finish(key: String, id: UInt64, _ result: Result<Value, any Error>) {
        let waiters: [CheckedContinuation<Value, any Error>] = state.withLock { s in
            guard let entry = s.inFlight[key], entry.id == id else { return [] }
            s.inFlight.removeValue(forKey: key)
            return Array(entry.waiters.values)
        }
        for waiter in waiters { waiter.resume(with: result) }
    }

    /// One waiter leaves; the last one to leave cancels the render.
    private func leave(key: String, waiter: UInt64) {
        let (continuation, task, last): (CheckedContinuation<Value, any Error>?, Task<Void, Never>?, Bool) =
            state.withLock { s in
                guard var entry = s.inFlight[key], let continuation = entry.waiters.removeValue(forKey: waiter) else {
                    return (nil, nil, false)
                }
                if entry.waiters.isEmpty {
                    s.inFlight.removeValue(forKey: key)
                    s.abandoned += 1
                    return (continuation, entry.task, true)
                }
                s.inFlight[key] = entry
                return (continuation, nil, false)
            }
        continuation?.resume(throwing: CancellationError())
        if last { task?.cancel() }
    }
}
