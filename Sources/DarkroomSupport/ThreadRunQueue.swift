#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// How long one thread has waited for a core: runnable, but another thread on every CPU (Linux's
/// `/proc/thread-self/schedstat`, its second field). Beside a wall-clock duration and the thread's CPU time it tells
/// a thread that waited for a core from one that was blocked (on a lock, a pipe, another process).
///
/// Made on the thread it measures (the file names the thread that opened it) and used only there. Cost: one `pread`
/// of a small kernel file per reading, a few microseconds; nothing on systems without schedstat (the reading is nil).
package final class ThreadRunQueue {
    private let fd: Int32

    /// Opens the calling thread's scheduler statistics.
    package init() {
        #if os(Linux)
            fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC)
        #else
            fd = -1
        #endif
    }

    deinit { if fd >= 0 { close(fd) } }

    /// Seconds the thread has spent runnable but not running since it started; nil when the kernel does not say.
    package func waitedSeconds() -> Double? {
        guard fd >= 0 else { return nil }
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 128) { buffer -> Double? in
            let count = pread(fd, buffer.baseAddress, buffer.count, 0)
            guard count > 0 else { return nil }
            // "<cpu time ns> <run-queue wait ns> <timeslices>\n"
            var field = 0
            var value: UInt64 = 0
            for byte in buffer[..<count] {
                if byte == UInt8(ascii: " ") {
                    if field == 1 { return Double(value) / 1e9 }
                    field += 1
                    value = 0
                } else if byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") {
                    value = value &* 10 &+ UInt64(byte - UInt8(ascii: "0"))
                } else {
                    return nil
                }
            }
            return nil
        }
    }
}
