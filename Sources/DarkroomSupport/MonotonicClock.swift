#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The one monotonic clock every module reads: queue waits, timings, cache ages.
///
/// A thin wrapper over `clock_gettime` (a vDSO call on Linux, tens of nanoseconds, no allocation), so the hot paths
/// that time each stage need no Foundation and no `Duration` arithmetic.
package enum MonotonicClock {
    /// Seconds since an arbitrary fixed point (`CLOCK_MONOTONIC`), with nanosecond resolution.
    @inline(__always)
    package static func seconds() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }

    /// Nanoseconds for cache ages. Linux's `CLOCK_MONOTONIC_COARSE` is read from the vDSO in a few nanoseconds
    /// (resolution 1–4 ms, plenty for time-to-live); elsewhere `CLOCK_MONOTONIC`.
    @inline(__always)
    package static func coarseNanoseconds() -> UInt64 {
        var ts = timespec()
        #if os(Linux)
            clock_gettime(CLOCK_MONOTONIC_COARSE, &ts)
        #else
            clock_gettime(CLOCK_MONOTONIC, &ts)
        #endif
        return UInt64(ts.tv_sec) &* 1_000_000_000 &+ UInt64(ts.tv_nsec)
    }

    /// CPU time the calling thread has used, seconds (`CLOCK_THREAD_CPUTIME_ID`): beside a wall-clock duration it
    /// tells work from waiting (a thread preempted or blocked keeps the wall clock running, not this one).
    @inline(__always)
    package static func threadCPUSeconds() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }

    /// Wall-clock seconds since 1970 (`CLOCK_REALTIME`): timestamps shared between processes, never durations.
    package static func wallSeconds() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }
}
