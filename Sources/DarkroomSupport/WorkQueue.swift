import Dispatch
import Foundation

/// A bounded pool of threads pulling closures from a five-level priority queue: where every blocking job runs.
///
/// At most `maxConcurrent` closures run at once and at most `maxConcurrent` threads exist; idle threads exit
/// after ``idleTimeout`` and are started again on demand. Decoding, encoding, processing and file or SQLite I/O
/// run here so Swift's cooperative pool is never blocked. Within a level, work starts in FIFO order; a queued
/// item's priority can change (it moves to the new level's tail) and a queued item can be cancelled (it never
/// runs). Enqueueing costs one lock and, when a thread must start, one `Thread` spawn.
package final class WorkQueue: Sendable {
    /// Five urgency levels, lowest first; the pipeline maps its request priorities onto them one to one.
    package enum Priority: Int, Sendable, Comparable, CaseIterable {
        case veryLow, low, normal, high, veryHigh

        /// Orders by urgency.
        package static func < (a: Priority, b: Priority) -> Bool { a.rawValue < b.rawValue }
    }

    /// A queued closure's handle. The closure itself is kept by the queue only while the item is pending, so a
    /// cancelled item releases what its closure captured (say the bytes of a file waiting for a decode) at once,
    /// even if the item itself is still referenced.
    ///
    /// The handle holds its queue strongly and the queue knows its items only by number, so there is no cycle and
    /// no weak reference (a weak reference gives the queue a side table that LeakSanitizer cannot trace, and
    /// reports as a leak at exit). A handle kept after its work ran keeps the queue's memory, not its threads.
    package final class Item: Sendable {
        fileprivate let id: UInt64
        fileprivate let queue: WorkQueue

        fileprivate init(queue: WorkQueue, id: UInt64) {
            self.queue = queue
            self.id = id
        }

        /// Removes the item if it has not started; returns whether it was removed.
        @discardableResult
        package func cancel() -> Bool { queue.remove(id) }

        /// Moves a queued item to another level; no effect once it has started.
        package func setPriority(_ priority: Priority) { queue.move(id, to: priority) }
    }

    /// Counters for tests and the CLI.
    package struct Statistics: Sendable {
        package var running = 0
        package var maxRunning = 0
        package var threads = 0
        package var maxThreads = 0
        package var threadsStarted = 0
        package var executed = 0
        package var pending = 0
    }

    private struct Pending {
        var level: Priority
        let enqueuedAt: Double
        let work: @Sendable (_ queueWait: Double) -> Void
    }

    private struct State {
        /// Item numbers by level, in arrival order; numbers are never reused.
        var levels = [[UInt64]](repeating: [], count: Priority.allCases.count)
        var heads = [Int](repeating: 0, count: Priority.allCases.count)
        var nextID: UInt64 = 0
        /// Queued items, their current level and their closure; a number in a level array but not here (or at
        /// another level) is a tombstone skipped when popped.
        var pending: [UInt64: Pending] = [:]
        /// Tombstones in the level arrays; past the number pending (and 64) the arrays are swept.
        var tombstones = 0
        var stats = Statistics()

        mutating func pop() -> Pending? {
            for level in Priority.allCases.reversed() {
                let l = level.rawValue
                while heads[l] < levels[l].count {
                    let id = levels[l][heads[l]]
                    heads[l] += 1
                    if let entry = pending[id], entry.level == level {
                        pending[id] = nil
                        compact(l)
                        return entry
                    }
                    tombstones = max(0, tombstones - 1)
                }
                compact(l)
            }
            return nil
        }

        /// Drops every tombstone once they outnumber the live entries: work that keeps arriving at a higher level
        /// would otherwise leave cancelled or moved items of the lower levels in their arrays indefinitely.
        mutating func sweepIfNeeded() {
            guard tombstones > max(64, pending.count) else { return }
            for level in Priority.allCases {
                let l = level.rawValue
                levels[l] = levels[l][heads[l]...].filter { pending[$0]?.level == level }
                heads[l] = 0
            }
            tombstones = 0
        }

        mutating func compact(_ l: Int) {
            if heads[l] == levels[l].count {
                levels[l].removeAll(keepingCapacity: true)
                heads[l] = 0
            } else if heads[l] > 256 && heads[l] * 2 > levels[l].count {
                levels[l].removeFirst(heads[l])
                heads[l] = 0
            }
        }
    }

    /// Name prefix of the threads (visible in debuggers and `top -H`).
    package let name: String
    /// Most closures running at once, and most threads alive.
    package let maxConcurrent: Int
    /// How long an idle thread waits for work before exiting.
    package let idleTimeout: Double
    private let state = Locked(State())
    private let wakeups = DispatchSemaphore(value: 0)

    /// The Linux nice value each worker thread sets for itself when it starts (0: the process's own). A queue
    /// doing background work for an interactive thread runs at a higher value, so the scheduler gives that
    /// thread the CPU first whenever both want it.
    package let niceness: Int32

    package init(name: String, maxConcurrent: Int, idleTimeout: Double = 2, niceness: Int32 = 0) {
        self.niceness = min(19, max(0, niceness))
        self.name = name
        self.maxConcurrent = max(1, maxConcurrent)
        self.idleTimeout = idleTimeout
    }

    /// Queues `work` at `priority`; it receives the seconds it waited in the queue.
    @discardableResult
    package func enqueue(priority: Priority = .normal, _ work: @escaping @Sendable (_ queueWait: Double) -> Void)
        -> Item
    {
        let now = MonotonicClock.seconds()
        let (id, spawn): (UInt64, Bool) = state.withLock { s in
            let id = s.nextID
            s.nextID += 1
            s.levels[priority.rawValue].append(id)
            s.pending[id] = Pending(level: priority, enqueuedAt: now, work: work)
            s.stats.pending = s.pending.count
            guard s.stats.threads < maxConcurrent, s.stats.threads - s.stats.running < s.pending.count else {
                return (id, false)
            }
            s.stats.threads += 1
            s.stats.threadsStarted += 1
            s.stats.maxThreads = max(s.stats.maxThreads, s.stats.threads)
            return (id, true)
        }
        if spawn { startThread() }
        wakeups.signal()
        return Item(queue: self, id: id)
    }

    /// Running, queued and thread counts, with high-water marks.
    package var statistics: Statistics { state.withLock { $0.stats } }

    /// Drops every queued item (none of them will run); running ones finish. Returns how many were dropped.
    @discardableResult
    package func cancelAll() -> Int {
        state.withLock { s in
            let dropped = s.pending.count
            s.pending.removeAll()
            for l in s.levels.indices {
                s.levels[l].removeAll()
                s.heads[l] = 0
            }
            s.tombstones = 0
            s.stats.pending = 0
            return dropped
        }
    }

    fileprivate func remove(_ id: UInt64) -> Bool {
        state.withLock { s in
            let removed = s.pending.removeValue(forKey: id) != nil
            s.stats.pending = s.pending.count
            if removed {
                s.tombstones += 1
                s.sweepIfNeeded()
            }
            return removed
        }
    }

    fileprivate func move(_ id: UInt64, to priority: Priority) {
        state.withLock { s in
            guard let current = s.pending[id]?.level, current != priority else { return }
            s.pending[id]?.level = priority
            s.levels[priority.rawValue].append(id)
            s.tombstones += 1
            s.sweepIfNeeded()
        }
    }

    private func startThread() {
        let thread = Thread { [self] in self.workerLoop() }
        thread.name = name
        thread.stackSize = 4 << 20
        thread.start()
    }

    /// The name of the queue whose worker is the current thread, or `nil` on any other thread (Linux thread names
    /// are inherited from the creating thread and Foundation does not apply `Thread.name`, so this is the
    /// reliable way to tell).
    package static var currentName: String? { Thread.current.threadDictionary[threadKey] as? String }
    private static let threadKey = "darkroom.work-queue"

    private func workerLoop() {
        Thread.current.threadDictionary[Self.threadKey] = name
        ThreadNiceness.setForCurrentThread(niceness)
        while true {
            if wakeups.wait(timeout: .now() + idleTimeout) == .timedOut {
                let exit: Bool = state.withLock { s in
                    guard s.pending.isEmpty else { return false }
                    s.stats.threads -= 1
                    return true
                }
                if exit { return }
                continue
            }
            let next: Pending? = state.withLock { s in
                guard let entry = s.pop() else { return nil }
                s.stats.pending = s.pending.count
                s.stats.running += 1
                s.stats.maxRunning = max(s.stats.maxRunning, s.stats.running)
                return entry
            }
            guard let entry = next else { continue }
            entry.work(MonotonicClock.seconds() - entry.enqueuedAt)
            state.withLock { s in
                s.stats.running -= 1
                s.stats.executed += 1
            }
        }
    }
}
