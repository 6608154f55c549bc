import Foundation

/// A count of work in flight that a thread can wait on until it reaches zero: the pipeline's queued cache writes,
/// which a quitting process waits for. The waiter sleeps on a condition variable and is woken by the decrement that
/// reaches zero, so waiting costs nothing while the work runs.
///
/// Cost: one lock per change; a broadcast only when the count reaches zero. Thread-safe.
package final class PendingCount: @unchecked Sendable {
    // @unchecked Sendable: `count` is read and written only while `condition` is locked, in every method below.
    private let condition = NSCondition()
    private var count = 0

    package init() {}

    /// The work in flight now.
    package var value: Int {
        condition.lock()
        defer { condition.unlock() }
        return count
    }

    /// One more piece of work in flight.
    package func increment() {
        condition.lock()
        count += 1
        condition.unlock()
    }

    /// One piece of work done; wakes every waiter when none is left.
    package func decrement() {
        condition.lock()
        count -= 1
        if count <= 0 { condition.broadcast() }
        condition.unlock()
    }

    /// Blocks the calling thread until the count is zero or `timeout` seconds have passed; returns whether it
    /// reached zero. Never call it on a latency-critical thread.
    package func waitForZero(timeout: Double) -> Bool {
        let deadline = Date(timeIntervalSinceNow: max(0, timeout))
        condition.lock()
        defer { condition.unlock() }
        while count > 0 {
            if !condition.wait(until: deadline) { return count <= 0 }
        }
        return true
    }
}
