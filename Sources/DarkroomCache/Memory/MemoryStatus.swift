/// A reading of how much memory this process may still use: the cgroup's limit and usage (v2 `memory.max` and
/// `memory.current`, or v1 `memory.limit_in_bytes` and `memory.usage_in_bytes`) and the machine's
/// `/proc/meminfo` MemTotal and MemAvailable. Any of them may be unknown.
public struct MemoryStatus: Sendable, Equatable {
    /// The cgroup memory limit in bytes; `nil` when there is none (v2 `max`, v1's huge sentinel) or no cgroup.
    public var cgroupLimitBytes: Int?
    /// The cgroup's current usage in bytes.
    public var cgroupUsageBytes: Int?
    /// `/proc/meminfo` MemTotal in bytes.
    public var totalBytes: Int?
    /// `/proc/meminfo` MemAvailable in bytes.
    public var memAvailableBytes: Int?

    /// Creates a reading.
    public init(
        cgroupLimitBytes: Int? = nil, cgroupUsageBytes: Int? = nil, totalBytes: Int? = nil,
        memAvailableBytes: Int? = nil
    ) {
        self.cgroupLimitBytes = cgroupLimitBytes
        self.cgroupUsageBytes = cgroupUsageBytes
        self.totalBytes = totalBytes
        self.memAvailableBytes = memAvailableBytes
    }

    /// The memory this process may still take: the smaller of MemAvailable and the cgroup headroom
    /// (limit − usage, never negative); `nil` when neither is known.
    public var availableBytes: Int? {
        var candidates: [Int] = []
        if let m = memAvailableBytes { candidates.append(m) }
        if let l = cgroupLimitBytes, let u = cgroupUsageBytes { candidates.append(max(0, l - u)) }
        return candidates.min()
    }

    /// The ceiling ``availableBytes`` is measured against: the cgroup limit when there is one below MemTotal,
    /// else MemTotal.
    public var ceilingBytes: Int? {
        switch (cgroupLimitBytes, totalBytes) {
        case (let l?, let t?): return min(l, t)
        case (let l?, nil): return l
        case (nil, let t): return t
        }
    }

    /// ``availableBytes`` as a fraction of ``ceilingBytes`` (0…1); `nil` when either is unknown.
    public var availableFraction: Double? {
        guard let a = availableBytes, let c = ceilingBytes, c > 0 else { return nil }
        return min(1, Double(a) / Double(c))
    }
}

/// Something that reads a ``MemoryStatus``. Inject a fake in tests; ``SystemMemoryStatusReader`` reads Linux's.
public protocol MemoryStatusReading: Sendable {
    /// A fresh reading, or `nil` when nothing could be read. Called from a background thread.
    func read() -> MemoryStatus?
}

/// Reads Linux's cgroup (v2, else v1) memory files for this process's cgroup and `/proc/meminfo`: four small
/// file reads, tens of microseconds. On other systems it reads nothing and returns `nil`.
public struct SystemMemoryStatusReader: MemoryStatusReading {
    /// The file-system root the `/proc` and `/sys/fs/cgroup` paths are resolved under (`"/"`; tests pass a fake tree).
    public let root: String

    /// Creates a reader for the file system under `root`.
    public init(root: String = "/") {
        self.root = root.hasSuffix("/") ? root : root + "/"
    }

    /// Reads MemTotal and MemAvailable, then this process's cgroup (v2 path from `/proc/self/cgroup`, else the
    /// root; then v1). `nil` when none of the files exist.
    public func read() -> MemoryStatus? {
        var status = MemoryStatus()
        if let meminfo = SmallFile.text(root + "proc/meminfo") {
            status.totalBytes = Self.meminfoField("MemTotal", in: meminfo)
            status.memAvailableBytes = Self.meminfoField("MemAvailable", in: meminfo)
        }
        let (limit, usage) = cgroup()
        status.cgroupLimitBytes = limit
        status.cgroupUsageBytes = usage
        // v1 reports "no limit" as a number near Int64.max: anything above the machine's memory is no limit.
        if let l = status.cgroupLimitBytes, let t = status.totalBytes, l >= t { status.cgroupLimitBytes = nil }
        if status == MemoryStatus() { return nil }
        return status
    }

    /// (limit, usage) of this process's memory cgroup, v2 first, then v1.
    private func cgroup() -> (Int?, Int?) {
        let membership = SmallFile.text(root + "proc/self/cgroup") ?? ""
        var v2Path = "/"
        var v1Path = "/"
        for line in membership.split(separator: "\n") {
            let parts = line.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
            guard parts.count == 3 else { continue }
            if parts[0] == "0" && parts[1].isEmpty { v2Path = String(parts[2]) }
            if parts[1].split(separator: ",").contains("memory") { v1Path = String(parts[2]) }
        }
        let cg = root + "sys/fs/cgroup"
        for dir in [cg + v2Path, cg] {
            if let max = SmallFile.text(dir + "/memory.max") {
                let limit = max.hasPrefix("max") ? nil : Self.integer(max)
                return (limit, SmallFile.text(dir + "/memory.current").flatMap(Self.integer))
            }
        }
        for dir in [cg + "/memory" + v1Path, cg + "/memory"] {
            if let limit = SmallFile.text(dir + "/memory.limit_in_bytes").flatMap(Self.integer) {
                return (limit, SmallFile.text(dir + "/memory.usage_in_bytes").flatMap(Self.integer))
            }
        }
        return (nil, nil)
    }

    static func meminfoField(_ name: String, in text: String) -> Int? {
        for line in text.split(separator: "\n") where line.hasPrefix(name + ":") {
            let fields = line.split(separator: " ")
            guard fields.count >= 2, let value = Int(fields[1]) else { return nil }
            return fields.count >= 3 && fields[2] == "kB" ? value * 1024 : value
        }
        return nil
    }

    static func integer(_ text: String) -> Int? {
        text.split(whereSeparator: \.isWhitespace).first.flatMap { Int($0) }
    }
}
