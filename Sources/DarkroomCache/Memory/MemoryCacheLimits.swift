/// Limits on a ``MemoryCache``: total cost, entry count, age, and the largest share of the cost limit one entry may
/// take. Checking them costs nothing extra per operation: eviction runs only when a `set` pushes past a limit, and
/// age is checked on the entry being read.
public struct MemoryCacheLimits: Sendable, Equatable {
    /// Most total cost (bytes, for bitmaps `Bitmap.cost`) the cache holds; least recently used entries go first.
    public var costLimit: Int
    /// Most entries the cache holds.
    public var countLimit: Int
    /// Time-to-live from the last `set`; a stale entry reads as absent and is dropped. `nil`: no age limit.
    public var maxAge: Duration?
    /// An entry costing more than this fraction of ``costLimit`` is not cached at all (one huge value would
    /// otherwise flush everything else). Default 0.25.
    public var maxEntryCostFraction: Double

    /// Creates limits. Negative limits are treated as zero.
    public init(costLimit: Int, countLimit: Int = .max, maxAge: Duration? = nil, maxEntryCostFraction: Double = 0.25) {
        self.costLimit = max(0, costLimit)
        self.countLimit = max(0, countLimit)
        self.maxAge = maxAge
        self.maxEntryCostFraction = min(1, max(0, maxEntryCostFraction))
    }

    /// The fraction of available memory the default cost limit takes: 1/8.
    public static let defaultAvailableMemoryFraction = 0.125
    /// The default cost limit is never below 16 MiB nor above 1 GiB, whatever memory reports.
    public static let defaultCostLimitRange: ClosedRange<Int> = (16 << 20)...(1 << 30)

    /// ``defaultAvailableMemoryFraction`` (1/8) of the memory available now — the smaller of `/proc/meminfo`
    /// MemAvailable and the cgroup's headroom (limit − usage, cgroup v2 or v1) — clamped to
    /// ``defaultCostLimitRange``; no count or age limit. Reads a few small files under `/proc` and `/sys` (tens of
    /// microseconds); evaluate once, not per cache operation.
    public static var `default`: MemoryCacheLimits {
        defaultLimits(status: SystemMemoryStatusReader().read())
    }

    /// The default limits for a given memory status (``default`` with an injected reading).
    public static func defaultLimits(status: MemoryStatus?) -> MemoryCacheLimits {
        let available = status?.availableBytes ?? defaultCostLimitRange.lowerBound * 8
        let cost = Int(Double(available) * defaultAvailableMemoryFraction)
        return MemoryCacheLimits(
            costLimit: min(max(cost, defaultCostLimitRange.lowerBound), defaultCostLimitRange.upperBound))
    }

    /// The largest cost one entry may have.
    @usableFromInline
    var maxEntryCost: Int {
        maxEntryCostFraction >= 1 ? costLimit : Int(Double(costLimit) * maxEntryCostFraction)
    }
}

extension Duration {
    /// Whole nanoseconds (saturating at `UInt64.max`; negative durations are zero).
    @usableFromInline
    var nanoseconds: UInt64 {
        let (seconds, attoseconds) = components
        guard seconds >= 0 else { return 0 }
        let (ns, overflow) = UInt64(seconds).multipliedReportingOverflow(by: 1_000_000_000)
        return overflow ? .max : ns &+ UInt64(attoseconds / 1_000_000_000)
    }
}
