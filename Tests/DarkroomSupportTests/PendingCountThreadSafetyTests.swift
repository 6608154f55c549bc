import Foundation
import Testing

@testable import DarkroomSupport

/// `PendingCount` from many threads (run under ThreadSanitizer with the other thread-safety suites): a waiter wakes
/// when the last piece of work is done, and gives up at its timeout when work is left.
@Suite("PendingCount")
struct PendingCountThreadSafetyTests {
    @Test("a waiter wakes when four threads have finished the work in flight")
    func waiterWakesAtZero() {
        // Given 400 pieces of work in flight
        let pending = PendingCount()
        for _ in 0..<400 { pending.increment() }
        let waiting = Locked<Bool?>(nil)
        let waiter = Thread {
            let reached = pending.waitForZero(timeout: 60)
            waiting.withLock { $0 = reached }
        }
        waiter.start()
        // When four threads finish them, each adding and finishing more work as it goes
        let group = DispatchGroup()
        for _ in 0..<4 {
            group.enter()
            Thread {
                for i in 0..<100 {
                    if i % 10 == 0 {
                        pending.increment()
                        pending.decrement()
                    }
                    pending.decrement()
                }
                group.leave()
            }.start()
        }
        group.wait()
        // Then the waiter wakes having seen zero, and the count is zero
        while waiting.withLock({ $0 }) == nil { usleep(1_000) }
        #expect(waiting.withLock { $0 } == true)
        #expect(pending.value == 0)
    }

    @Test("a waiter gives up at its timeout while work is left, and returns at once when none is")
    func waiterTimesOut() {
        // Given one piece of work that never finishes
        let pending = PendingCount()
        pending.increment()
        // When waited on for 50 ms, Then the wait reports that work is left
        #expect(pending.waitForZero(timeout: 0.05) == false)
        #expect(pending.value == 1)
        // When it finishes, Then a wait returns true at once
        pending.decrement()
        #expect(pending.waitForZero(timeout: 0) == true)
    }
}
