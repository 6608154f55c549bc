import DarkroomSupport
import Dispatch
import Synchronization

/// How short of memory the process is, judged from a ``MemoryStatus``.
public enum MemoryPressureLevel: Int, Sendable, Comparable, CaseIterable {
    /// Enough memory: nothing to do.
    case normal
    /// Available memory below the warning fraction: caches should shed about half their cost.
    case warning
    /// Available memory below the critical fraction: caches should empty.
    case critical

    /// Orders levels from `.normal` to `.critical`.
    public static func < (a: Self, b: Self) -> Bool { a.rawValue < b.rawValue }
}

/// Something that gives memory back when asked. ``MemoryCache`` conforms: warning halves its cost, critical empties it.
public protocol MemoryPressureResponding: AnyObject, Sendable {
    /// Sheds memory for `level` (never called with `.normal`). Called on the monitor's background queue.
    func respond(to level: MemoryPressureLevel)
}

extension MemoryCache: MemoryPressureResponding {
    /// `.warning` trims to half the current cost; `.critical` removes everything.
    public func respond(to level: MemoryPressureLevel) {
        switch level {
        case .normal: break
        case .warning: trim(toCost: totalCost / 2)
        case .critical: removeAll()
        }
    }
}

/// Polls a ``MemoryStatusReading`` on a timer and asks registered caches to shed memory when the available fraction
/// falls below the thresholds. One reading per interval (four small file reads on Linux), on a private serial queue;
/// responders are held weakly, so a cache that goes away simply stops being asked.
///
/// ```swift
/// let monitor = MemoryPressureMonitor()
/// monitor.add(thumbnails)
/// monitor.start()
/// ```
public final class MemoryPressureMonitor: Sendable {
    /// The fraction of available memory (of the cgroup limit, else MemTotal) below which the level is `.warning`.
    public let warningFraction: Double
    /// The fraction below which the level is `.critical`.
    public let criticalFraction: Double
    /// Time between readings once started.
    public let interval: Duration

    private let reader: any MemoryStatusReading
    private let queue = DispatchQueue(label: "darkroom.memory-pressure")
    private let state = Locked(State())

    private struct State {
        var responders: [WeakResponder] = []
        var timer: (any DispatchSourceTimer)?
        var lastLevel: MemoryPressureLevel = .normal
    }

    private struct WeakResponder {
        weak var target: (any MemoryPressureResponding)?
    }

    /// Creates a stopped monitor. Defaults: read Linux's memory status every second; warning below 10 % available,
    /// critical below 5 %.
    public init(
        reader: any MemoryStatusReading = SystemMemoryStatusReader(), interval: Duration = .seconds(1),
        warningFraction: Double = 0.10, criticalFraction: Double = 0.05
    ) {
        self.reader = reader
        self.interval = interval
        self.warningFraction = warningFraction
        self.criticalFraction = min(criticalFraction, warningFraction)
    }

    deinit { stop() }

    /// Registers `responder` (held weakly) to be asked to shed memory under pressure.
    public func add(_ responder: any MemoryPressureResponding) {
        state.withLock { s in
            s.responders.removeAll { $0.target == nil }
            s.responders.append(WeakResponder(target: responder))
        }
    }

    /// The level a reading indicates (`.normal` when nothing could be read).
    public func level(for status: MemoryStatus?) -> MemoryPressureLevel {
        guard let fraction = status?.availableFraction else { return .normal }
        if fraction < criticalFraction { return .critical }
        if fraction < warningFraction { return .warning }
        return .normal
    }

    /// Takes one reading now on the calling thread and, under pressure, asks every live responder to shed memory.
    /// Returns the level. The timer calls this; tests call it directly.
    @discardableResult
    public func poll() -> MemoryPressureLevel {
        let level = level(for: reader.read())
        let targets = state.withLock { s -> [any MemoryPressureResponding] in
            s.lastLevel = level
            s.responders.removeAll { $0.target == nil }
            return level == .normal ? [] : s.responders.compactMap(\.target)
        }
        for target in targets { target.respond(to: level) }
        return level
    }

    /// The level found by the latest poll.
    public var lastLevel: MemoryPressureLevel { state.withLock { $0.lastLevel } }

    /// Starts polling every ``interval`` on a background queue (does nothing if already started).
    public func start() {
        state.withLock { s in
            guard s.timer == nil else { return }
            let timer = DispatchSource.makeTimerSource(queue: queue)
            let ns = Int(min(interval.nanoseconds, UInt64(Int.max)))
            timer.schedule(
                deadline: .now() + .nanoseconds(ns), repeating: .nanoseconds(ns), leeway: .nanoseconds(ns / 10))
            timer.setEventHandler { [weak self] in self?.poll() }
            timer.resume()
            s.timer = timer
        }
    }

    /// Stops polling.
    public func stop() {
        let timer = state.withLock { s -> (any DispatchSourceTimer)? in
            defer { s.timer = nil }
            return s.timer
        }
        timer?.cancel()
    }
}
