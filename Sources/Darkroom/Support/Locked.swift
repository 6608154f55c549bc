import Synchronization
#if canImport(Glibc)
import Glibc
#endif

// TEMPORARY until DarkroomCache (issue 3) exports its `Locked` (same API, same ThreadSanitizer technique): this
// file is deleted in favour of that type once it is public. Nothing else in the module needs to change.

/// Shared mutable state behind a `Mutex`: the only way pipeline machinery shares mutable state between threads.
///
/// On Linux, `Synchronization.Mutex` locks with a futex from the uninstrumented standard library, so
/// ThreadSanitizer sees no happens-before edge between critical sections and reports every guarded access as a
/// race. When the TSan runtime is loaded, `withLock` also tells it about the acquire and release; otherwise
/// the hooks are `nil` and the cost is one predictable branch.
final class Locked<Value: ~Copyable>: Sendable {
    let mutex: Mutex<Value>

    init(_ value: consuming sending Value) {
        mutex = Mutex(value)
    }

    /// Runs `body` with exclusive access to the value. Never call back into user code while holding it.
    @inline(__always)
    func withLock<R: ~Copyable, E: Error>(_ body: (inout sending Value) throws(E) -> sending R) throws(E) -> sending R {
        guard let hooks = SanitizerHooks.shared else { return try mutex.withLock(body) }
        let token = Unmanaged.passUnretained(self).toOpaque()
        return try mutex.withLock { (value: inout sending Value) throws(E) -> sending R in
            hooks.acquire(token)
            defer { hooks.release(token) }
            return try body(&value)
        }
    }
}

/// `__tsan_acquire`/`__tsan_release` when the ThreadSanitizer runtime is in the process, else `nil`.
private struct SanitizerHooks: Sendable {
    typealias Hook = @convention(c) (UnsafeMutableRawPointer?) -> Void
    let acquire: Hook
    let release: Hook

    static let shared: SanitizerHooks? = {
        let process = dlopen(nil, RTLD_NOW)
        guard let a = dlsym(process, "__tsan_acquire"), let r = dlsym(process, "__tsan_release") else { return nil }
        return SanitizerHooks(acquire: unsafeBitCast(a, to: Hook.self), release: unsafeBitCast(r, to: Hook.self))
    }()
}
