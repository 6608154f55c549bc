import Foundation
import Testing

@testable import DarkroomSupport

/// `Locked`'s two ways in, from two threads (run under ThreadSanitizer with the other thread-safety suites).
@Suite("Locked", .timeLimit(.minutes(5)))
struct LockedThreadSafetyTests {
    @Test("withLockIfAvailable returns nil at once while another thread holds the lock, and runs when it is free")
    func ifAvailableNeverWaits() {
        // Given a lock held by another thread until it is told to let go
        let locked = Locked(0)
        let holding = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let released = DispatchSemaphore(value: 0)
        Thread {
            locked.withLock { value in
                value = 1
                holding.signal()
                release.wait()
            }
            released.signal()
        }.start()
        holding.wait()
        // When this thread asks for it without waiting
        let whileHeld = locked.withLockIfAvailable { value -> Int in
            value += 10
            return value
        }
        release.signal()
        released.wait()
        let afterwards = locked.withLockIfAvailable { value -> Int in
            value += 10
            return value
        }
        // Then it got nothing and changed nothing while the lock was held (had it waited for the holder, which lets go
        // only after this call returns, the test would never end), and ran once the lock was free, seeing the
        // holder's write
        #expect(whileHeld == nil)
        #expect(afterwards == 11)
        #expect(locked.withLock { $0 } == 11)
    }
}
