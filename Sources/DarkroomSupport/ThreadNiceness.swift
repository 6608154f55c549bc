#if canImport(Glibc)
    import Glibc
#endif

/// The Linux nice value of the calling thread: background threads of an interactive process set a higher one so
/// the scheduler gives its interactive thread the core first whenever both want one.
package enum ThreadNiceness {
    /// Sets the calling thread's nice value (0…19; higher is nicer). On Linux the nice value is a thread's own and
    /// `PRIO_PROCESS` with 0 names the calling thread, so the process's other threads keep theirs. No effect for 0.
    package static func setForCurrentThread(_ niceness: Int32) {
        #if canImport(Glibc)
            guard niceness > 0 else { return }
            setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, min(19, niceness))
        #endif
    }
}
