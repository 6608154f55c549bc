import DarkroomSupport
import DarkroomCache
import Dispatch
import Foundation

/// A fixed pool of threads the pipeline owns, pulling closures from a five-level priority queue.
///
/// At most `maxConcurrent` closures run at once and at most `maxConcurrent` threads exist; idle threads exit
/// after ``idleTimeout`` and are started again on demand. Decoding and processing run here so Swift's cooperative
/// pool is never blocked by CPU-bound work. Within a level, work starts in FIFO order; a queued item's priority
/// can change (it moves to the new level's tail) and a queued item can be cancelled (it never runs).
final class WorkQueue: Sendable {
    typealias Priority = ImageRequest.Priority

    /// A queued closure's handle.
    final class Item: Sendable {
        fileprivate let work: @Sendable (_ queueWait: Double) -> Void
        fileprivate let enqueuedAt: Double
        fileprivate weak let queue: WorkQueue?

        fileprivate init(queue: WorkQueue, work: @escaping @Sendable (Double) -> Void) {
            self.queue = queue
            self.work = work
            self.enqueuedAt = monotonicSeconds()
        }

        /// Removes the item if it has not started; returns whether it was removed.
        @discardableResult
        func cancel() -> Bool { queue?.remove(self) ?? false }

        /// Moves a queued item to another level; no effect once it has started.
        func setPriority(_ priority: Priority) { queue?.move(self, to: priority) }
    }

    /// Counters for tests and the CLI.
    struct Statistics: Sendable {
        var running = 0
        var maxRunning = 0
        var threads = 0
        var maxThreads = 0
        var threadsStarted = 0
        var executed = 0
        var pending = 0
    }

    private struct State {
        var levels = [[Item]](repeating: [], count: Priority.allCases.count)
        var heads = [Int](repeating: 0, count: Priority.allCases.count)
        /// Queued items and their current level; an item in a level array but not here (or at another level) is
        /// a tombstone skipped when popped.
        var pending: [ObjectIdentifier: Priority] = [:]
        var stats = Statistics()

        mutating func pop() -> Item? {
            for level in Priority.allCases.reversed() {
                let l = level.rawValue
                while heads[l] < levels[l].count {
                    let item = levels[l][heads[l]]
                    heads[l] += 1
                    if pending[ObjectIdentifier(item)] == level {
                        pending[ObjectIdentifier(item)] = nil
                        compact(l)
                        return item
                    }
                }
                compact(l)
            }
            return nil
        }

        mutating func compact(_ l: Int) {
            if heads[l] == levels[l].count { levels[l].removeAll(keepingCapacity: true); heads[l] = 0 }
            else if heads[l] > 256 && heads[l] * 2 > levels[l].count {
                levels[l].removeFirst(heads[l]); heads[l] = 0
            }
        }
    }

    /// Name prefix of the threads (visible in debuggers and `top -H`).
    let name: String
    /// Most closures running at once, and most threads alive.
    let maxConcurrent: Int
    /// How long an idle thread waits for work before exiting.
    let idleTimeout: Double
    private let state = Locked(State())
    private let wakeups = DispatchSemaphore(value: 0)

    init(name: String, maxConcurrent: Int, idleTimeout: Double = 2) {
        self.name = name
        self.maxConcurrent = max(1, maxConcurrent)
        self.idleTimeout = idleTimeout
    }

    /// Queues `work` at `priority`; it receives the seconds it waited in the queue.
    @discardableResult
    func enqueue(priority: Priority, _ work: @escaping @Sendable (_ queueWait: Double) -> Void) -> Item {
        let item = Item(queue: self, work: work)
        let spawn: Bool = state.withLock { s in
            s.levels[priority.rawValue].append(item)
            s.pending[ObjectIdentifier(item)] = priority
            s.stats.pending = s.pending.count
            guard s.stats.threads < maxConcurrent, s.stats.threads - s.stats.running < s.pending.count else { return false }
            s.stats.threads += 1
            s.stats.threadsStarted += 1
            s.stats.maxThreads = max(s.stats.maxThreads, s.stats.threads)
            return true
        }
        if spawn { startThread() }
        wakeups.signal()
        return item
    }

    /// Running, queued and thread counts, with high-water marks.
    var statistics: Statistics { state.withLock { $0.stats } }

    fileprivate func remove(_ item: Item) -> Bool {
        state.withLock { s in
            let removed = s.pending.removeValue(forKey: ObjectIdentifier(item)) != nil
            s.stats.pending = s.pending.count
            return removed
        }
    }

    fileprivate func move(_ item: Item, to priority: Priority) {
        state.withLock { s in
            guard let current = s.pending[ObjectIdentifier(item)], current != priority else { return }
            s.pending[ObjectIdentifier(item)] = priority
            s.levels[priority.rawValue].append(item)
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
    static var currentName: String? { Thread.current.threadDictionary[threadKey] as? String }
    private static let threadKey = "darkroom.work-queue"

    private func workerLoop() {
        Thread.current.threadDictionary[Self.threadKey] = name
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
            let item: Item? = state.withLock { s in
                guard let item = s.pop() else { return nil }
                s.stats.pending = s.pending.count
                s.stats.running += 1
                s.stats.maxRunning = max(s.stats.maxRunning, s.stats.running)
                return item
            }
            guard let item else { continue }
            item.work(monotonicSeconds() - item.enqueuedAt)
            state.withLock { s in
                s.stats.running -= 1
                s.stats.executed += 1
            }
        }
    }
}

/// Monotonic time in seconds (CLOCK_MONOTONIC).
func monotonicSeconds() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}
