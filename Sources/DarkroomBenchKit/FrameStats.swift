import DarkroomSupport

/// Frame accounting for one run: how long the render thread worked per frame against the budget, which vsyncs
/// went by without a frame, and how long cells waited for their image.
public struct FrameStats: Sendable {
    /// The frame budget in seconds (1/fps).
    public let budget: Double
    /// Render-thread time per frame, seconds.
    public private(set) var frameTimes: [Double] = []
    /// Frames whose render-thread time exceeded the budget.
    public private(set) var overBudget = 0
    /// Vsync intervals that passed with no frame presented (a frame taking 2.5 budgets drops 2).
    public private(set) var droppedVsyncs = 0
    /// Visible → shown latencies, seconds.
    public private(set) var latencies: [Double] = []
    /// Cells that got a cell (bound) during the run.
    public private(set) var cellsBound = 0
    /// Bound cells drawn blank on at least one frame.
    public private(set) var cellsShownBlank = 0
    /// Bound cells that left the screen (or the run ended) without their image ever shown.
    public private(set) var cellsNeverShown = 0

    /// Starts accounting for frames of `budget` seconds.
    public init(budget: Double) { self.budget = budget }

    /// Records one frame that kept the render thread busy for `duration` seconds.
    public mutating func recordFrame(_ duration: Double) {
        frameTimes.append(duration)
        if duration > budget {
            overBudget += 1
            droppedVsyncs += Int((duration / budget).rounded(.down))
        }
    }

    /// Records a cell's image shown `latency` seconds after it became visible.
    public mutating func recordShown(latency: Double) { latencies.append(latency) }

    /// Records cells that were bound.
    public mutating func recordBound(_ n: Int) { cellsBound += n }

    /// Records a cell leaving the screen (or still on it at the end).
    public mutating func recordLeft(_ cell: Unbound) {
        if cell.wasBlank { cellsShownBlank += 1 }
        if !cell.wasShown { cellsNeverShown += 1 }
    }

    /// Frames rendered.
    public var frames: Int { frameTimes.count }
    /// Share of frames over budget, in percent.
    public var overBudgetPercent: Double { frames == 0 ? 0 : Double(overBudget) * 100 / Double(frames) }
}

/// The numbers reported per strategy.
public struct ScrollResult: Sendable {
    /// Strategy name.
    public var name: String
    /// Frame accounting.
    public var stats: FrameStats
    /// Wall-clock seconds of the scroll.
    public var seconds: Double
    /// Rows scrolled.
    public var rowsScrolled: Double
    /// Cells taken from the reuse queue.
    public var reuses: Int
    /// Results refused by the tag/generation check.
    public var staleDeliveries: Int
    /// Cell objects made (the pool's size).
    public var cellsMade: Int
    /// Peak decoded pixel bytes during the run (PixelMemory), over the level at its start.
    public var peakDecodedBytes: Int = 0
    /// Most threads seen in the process during the run.
    public var peakThreads: Int = 0
    /// Threads that did image work (render thread included).
    public var workThreads: Int = 0
    /// Extra per-strategy facts (e.g. the table build time).
    public var extra: [String: Double] = [:]

    /// Creates a result; the process-level numbers are filled in afterwards.
    public init(
        name: String, stats: FrameStats, seconds: Double, rowsScrolled: Double, reuses: Int,
        staleDeliveries: Int, cellsMade: Int, workThreads: Int = 0
    ) {
        self.name = name
        self.stats = stats
        self.seconds = seconds
        self.rowsScrolled = rowsScrolled
        self.reuses = reuses
        self.staleDeliveries = staleDeliveries
        self.cellsMade = cellsMade
        self.workThreads = workThreads
    }

    /// The result as a JSON-ready dictionary (times in milliseconds).
    public func dictionary() -> [String: Any] {
        var d: [String: Any] = [
            "name": name, "frames": stats.frames, "frames_over_budget": stats.overBudget,
            "frames_over_budget_percent": stats.overBudgetPercent, "dropped_vsyncs": stats.droppedVsyncs,
            "frame_ms_p50": percentile(stats.frameTimes, 50) * 1e3,
            "frame_ms_p99": percentile(stats.frameTimes, 99) * 1e3,
            "frame_ms_max": (stats.frameTimes.max() ?? 0) * 1e3,
            "visible_to_shown_ms_p50": percentile(stats.latencies, 50) * 1e3,
            "visible_to_shown_ms_p99": percentile(stats.latencies, 99) * 1e3,
            "cells_bound": stats.cellsBound, "cells_shown": stats.latencies.count,
            "cells_shown_blank": stats.cellsShownBlank, "cells_never_shown": stats.cellsNeverShown,
            "seconds": seconds, "rows_scrolled": rowsScrolled, "reuses": reuses, "cells_made": cellsMade,
            "stale_deliveries": staleDeliveries, "peak_decoded_bytes": peakDecodedBytes,
            "peak_threads": peakThreads, "work_threads": workThreads,
        ]
        for (k, v) in extra { d[k] = v }
        return d
    }
}
