import DarkroomCache
import DarkroomSupport
import Synchronization

/// One client connection as the request handlers see it: whether the client is still there, and a way to be told
/// when it leaves, so the work done for it can stop (a render nobody will receive frees its slot).
///
/// "Gone" means the socket closed, or its input closed while a request was being answered (the client closed or
/// shut down its side after sending, which nginx also treats as an abandoned request). Cost: one lock per
/// registration. Thread-safe.
final class ClientConnection: Sendable {
    /// The client's IP address as text; empty when unknown.
    let address: String

    private struct State {
        var gone = false
        var nextToken: UInt64 = 0
        var handlers: [UInt64: @Sendable () -> Void] = [:]
    }
    private let state = Locked(State())
    /// Between a request head and the end of its response (the connection guard never evicts it then).
    private let busyFlag = Atomic<Bool>(false)
    /// `MonotonicClock` nanoseconds when it last became idle (opened, or a response ended).
    private let idleSince = Atomic<UInt64>(MonotonicClock.coarseNanoseconds())

    init(address: String) {
        self.address = address
    }

    /// Whether a request is being answered.
    var isBusy: Bool { busyFlag.load(ordering: .relaxed) }
    /// When it last became idle, in `MonotonicClock` nanoseconds.
    var idleSinceNanoseconds: UInt64 { idleSince.load(ordering: .relaxed) }

    /// Marks a request begun (`true`) or answered (`false`, noting the time). Atomic stores, no lock.
    func setBusy(_ busy: Bool) {
        if !busy { idleSince.store(MonotonicClock.coarseNanoseconds(), ordering: .relaxed) }
        busyFlag.store(busy, ordering: .relaxed)
    }

    /// Whether the client has left.
    var isGone: Bool { state.withLock { $0.gone } }

    /// Runs `body` once when the client leaves — at once, on this thread, if it already has (then returns `nil`).
    /// Returns a token for ``removeHandler(_:)``.
    @discardableResult
    func whenGone(_ body: @escaping @Sendable () -> Void) -> UInt64? {
        let token: UInt64? = state.withLock { s in
            guard !s.gone else { return nil }
            s.nextToken += 1
            s.handlers[s.nextToken] = body
            return s.nextToken
        }
        if token == nil { body() }
        return token
    }

    /// Forgets a ``whenGone(_:)`` handler (its request finished).
    func removeHandler(_ token: UInt64) {
        _ = state.withLock { $0.handlers.removeValue(forKey: token) }
    }

    /// Marks the client gone and runs the handlers registered so far, outside the lock.
    func markGone() {
        let handlers: [@Sendable () -> Void] = state.withLock { s in
            guard !s.gone else { return [] }
            s.gone = true
            defer { s.handlers = [:] }
            return Array(s.handlers.values)
        }
        for handler in handlers { handler() }
    }
}
