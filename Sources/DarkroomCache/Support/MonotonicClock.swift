#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Monotonic time for cache ages. Linux's `CLOCK_MONOTONIC_COARSE` is read from the vDSO in a few nanoseconds
/// (resolution 1–4 ms, plenty for time-to-live); elsewhere `CLOCK_MONOTONIC`.
enum MonotonicClock {
    static func nanoseconds() -> UInt64 {
        var ts = timespec()
        #if os(Linux)
        clock_gettime(CLOCK_MONOTONIC_COARSE, &ts)
        #else
        clock_gettime(CLOCK_MONOTONIC, &ts)
        #endif
        return UInt64(ts.tv_sec) &* 1_000_000_000 &+ UInt64(ts.tv_nsec)
    }
}
