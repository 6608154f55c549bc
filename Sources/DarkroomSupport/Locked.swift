import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A `Mutex` (Synchronization) that ThreadSanitizer can see through.
///
/// On Linux, Swift 6.3's `Mutex` locks with a futex from the uninstrumented standard library, so TSan sees no
/// happens-before edge between two critical sections and reports every guarded access as a race (checked with a
/// two-thread counter: correct total, hundreds of reports). When the TSan runtime is loaded (`--sanitize=thread`),
/// `withLock` also calls `__tsan_acquire`/`__tsan_release` on this object's address inside the critical section;
/// otherwise the hooks are `nil` and the cost is one predictable branch.
/// `package` so the pipeline (module Darkroom) shares this one implementation; not part of the public API.
@usableFromInline
package final class Locked<Value: ~Copyable>: Sendable {
    @usableFromInline let mutex: Mutex<Value>

    @inlinable
    package init(_ value: consuming sending Value) {
        mutex = Mutex(value)
    }

    /// Runs `body` with exclusive access to the value.
    @inlinable
    package func withLock<R: ~Copyable, E: Error>(_ body: (inout sending Value) throws(E) -> sending R) throws(E)
        -> sending R
    {
        guard let hooks = ThreadSanitizerHooks.shared else { return try mutex.withLock(body) }
        let token = Unmanaged.passUnretained(self).toOpaque()
        return try mutex.withLock { (value: inout sending Value) throws(E) -> sending R in
            hooks.acquire(token)
            defer { hooks.release(token) }
            return try body(&value)
        }
    }

    /// Runs `body` with exclusive access if no other thread holds the lock, else returns nil at once without
    /// running it. For a thread with a frame budget: a holder at a higher nice value that is preempted inside its
    /// critical section can wait a scheduler tick for a core, and a plain ``withLock(_:)`` would wait with it.
    @inlinable
    package func withLockIfAvailable<R, E: Error>(_ body: (inout sending Value) throws(E) -> sending R) throws(E)
        -> sending R?
    {
        guard let hooks = ThreadSanitizerHooks.shared else { return try mutex.withLockIfAvailable(body) }
        let token = Unmanaged.passUnretained(self).toOpaque()
        return try mutex.withLockIfAvailable { (value: inout sending Value) throws(E) -> sending R in
            hooks.acquire(token)
            defer { hooks.release(token) }
            return try body(&value)
        }
    }
}

/// `__tsan_acquire` and `__tsan_release` when the ThreadSanitizer runtime is in the process, else `nil`.
@usableFromInline
struct ThreadSanitizerHooks: Sendable {
    @usableFromInline typealias Hook = @convention(c) (UnsafeMutableRawPointer?) -> Void
    @usableFromInline let acquire: Hook
    @usableFromInline let release: Hook

    @usableFromInline static let shared: ThreadSanitizerHooks? = {
        let process = dlopen(nil, RTLD_NOW)
        guard let a = dlsym(process, "__tsan_acquire"), let r = dlsym(process, "__tsan_release") else { return nil }
        return ThreadSanitizerHooks(acquire: unsafeBitCast(a, to: Hook.self), release: unsafeBitCast(r, to: Hook.self))
    }()
}
