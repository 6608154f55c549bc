import DarkroomSupport

/// Polls `condition` every 5 ms for up to `seconds` (generous: the whole suite shares 2 cores with the other test
/// targets); returns whether it became true. For state another thread changes, where no event can be awaited.
package func eventually(_ seconds: Double = 20, _ condition: () -> Bool) async -> Bool {
    let deadline = MonotonicClock.seconds() + seconds
    while MonotonicClock.seconds() < deadline {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(5))
    }
    return condition()
}

/// A one-shot gate: tasks that ``wait()`` are suspended until ``open()`` (and pass at once afterwards). Lets a
/// test hold work in place and release it at a chosen moment instead of sleeping and hoping.
package final class AsyncGate: Sendable {
    private struct State {
        var isOpen = false
        var waiters: [CheckedContinuation<Void, Never>] = []
    }
    private let state = Locked(State())

    package init() {}

    /// Suspends until the gate is open.
    package func wait() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let passes = state.withLock { s -> Bool in
                if s.isOpen { return true }
                s.waiters.append(continuation)
                return false
            }
            if passes { continuation.resume() }
        }
    }

    /// Opens the gate: every waiter resumes, and later waits pass at once.
    package func open() {
        let waiters = state.withLock { s -> [CheckedContinuation<Void, Never>] in
            s.isOpen = true
            defer { s.waiters = [] }
            return s.waiters
        }
        for waiter in waiters { waiter.resume() }
    }
}
