import Foundation

/// Process-level measurements for summaries and benchmarks.
package enum ProcessStats {
    /// Peak resident set size of this process so far, in bytes (getrusage ru_maxrss).
    package static var peakRSSBytes: Int {
        var usage = rusage()
        getrusage(Int32(RUSAGE_SELF.rawValue), &usage)
        return usage.ru_maxrss * 1024
    }

    /// Peak resident set size of the process `pid` so far, in bytes (`VmHWM` of `/proc/PID/status`: another
    /// process's, such as a child's); nil when it cannot be read. One small file read.
    package static func peakRSSBytes(ofProcess pid: Int32) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
            let kib = Int(line.split(separator: " ").dropFirst().first ?? "")
        else { return nil }
        return kib * 1024
    }

    /// Current resident set size in bytes, from /proc/self/statm.
    package static var currentRSSBytes: Int {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
        let fields = text.split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }

    /// CPUs this process may use (Foundation honours the affinity mask and cgroup CPU quota), at least 1.
    package static var activeCores: Int { max(1, ProcessInfo.processInfo.activeProcessorCount) }
}
