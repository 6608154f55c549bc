import Synchronization

// TEMPORARY until DarkroomCache (issue 3) merges: DarkroomCache's `Locked` adds ThreadSanitizer annotations
// to `Mutex`; this file is replaced by that type once it is exported. Same API, so the swap is this file only.

/// Shared mutable state behind a `Mutex`: the only way pipeline machinery shares mutable state between threads.
final class Locked<Value: ~Copyable>: Sendable {
    let mutex: Mutex<Value>

    init(_ value: consuming sending Value) {
        mutex = Mutex(value)
    }

    /// Runs `body` with exclusive access to the value. Never call back into user code while holding it.
    @inline(__always)
    func withLock<R: ~Copyable, E: Error>(_ body: (inout sending Value) throws(E) -> sending R) throws(E) -> sending R {
        try mutex.withLock(body)
    }
}
