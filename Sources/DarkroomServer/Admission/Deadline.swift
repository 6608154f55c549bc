import DarkroomCache
import DarkroomSupport
import Foundation

/// Runs `operation` in a new task and returns its result, or throws `timeout()`'s error after `seconds`, or
/// ``ServerError/Code/clientClosed`` as soon as `client` leaves — whichever comes first. Otherwise the operation's
/// task is cancelled and left to wind down on its own: the caller does not wait for it (a task group would).
///
/// Cost: two tasks and one lock (plus a registration on `client`).
func withDeadline<T: Sendable>(
    seconds: Double, timeout: @autoclosure @escaping @Sendable () -> ServerError, client: ClientConnection? = nil,
    _ operation: @escaping @Sendable () async throws -> T
) async throws -> T {
    let gate = ResumeOnce<T>()
    return try await withTaskCancellationHandler {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            gate.install(continuation)
            let work = Task {
                do { gate.resume(.success(try await operation())) } catch { gate.resume(.failure(error)) }
            }
            let timer = Task {
                try? await Task.sleep(nanoseconds: UInt64(max(0, seconds) * 1e9))
                if !Task.isCancelled, gate.resume(.failure(timeout())) { work.cancel() }
            }
            let left = client?.whenGone {
                if gate.resume(.failure(ServerError(.clientClosed, "the client closed the connection"))) {
                    work.cancel()
                }
            }
            gate.onFinish {
                work.cancel()
                timer.cancel()
                if let left { client?.removeHandler(left) }
            }
        }
    } onCancel: {
        gate.resume(.failure(CancellationError()))
    }
}

/// Resumes one continuation exactly once, from whichever of several racers gets there first.
private final class ResumeOnce<T: Sendable>: Sendable {
    private struct State {
        var continuation: CheckedContinuation<T, any Error>?
        var pending: Result<T, any Error>?
        var done = false
        var finish: (@Sendable () -> Void)?
    }
    private let state = Locked(State())

    func install(_ continuation: CheckedContinuation<T, any Error>) {
        let early: Result<T, any Error>? = state.withLock { s in
            if let p = s.pending {
                s.pending = nil
                return p
            }
            s.continuation = continuation
            return nil
        }
        if let early { continuation.resume(with: early) }
    }

    /// Hands over `result` if nothing has yet; returns whether this call won.
    @discardableResult
    func resume(_ result: Result<T, any Error>) -> Bool {
        let (won, continuation, finish): (Bool, CheckedContinuation<T, any Error>?, (@Sendable () -> Void)?) =
            state.withLock { s in
                guard !s.done else { return (false, nil, nil) }
                s.done = true
                let c = s.continuation
                s.continuation = nil
                if c == nil { s.pending = result }
                let f = s.finish
                s.finish = nil
                return (true, c, f)
            }
        continuation?.resume(with: result)
        finish?()
        return won
    }

    /// Runs `body` when a result has been handed over (at once if one already has).
    func onFinish(_ body: @escaping @Sendable () -> Void) {
        let now = state.withLock { s in
            if s.done { return true }
            s.finish = body
            return false
        }
        if now { body() }
    }
}
