import DarkroomCache
import DarkroomSupport

/// Admits network transfers under a total limit and a per-host limit, highest priority first (FIFO within a
/// level), and reports the number running to a ``NetworkActivity``.
///
/// A transfer is a closure started with a `done` callback it must call exactly once. While queued, its priority
/// can change and it can be cancelled (it never starts).
final class NetworkScheduler: Sendable {
    typealias Priority = ImageRequest.Priority
    typealias Start = @Sendable (_ done: @escaping @Sendable () -> Void) -> Void

    private struct Entry {
        let id: UInt64
        let host: String
        var priority: Priority
        let start: Start
    }

    private struct State {
        var pending: [Entry] = []
        var runningByHost: [String: Int] = [:]
        var running = 0
        var nextID: UInt64 = 0
        var maxRunning = 0
        var maxRunningByHost: [String: Int] = [:]
        /// Numbers each change of `running` for the activity counter.
        var changes: UInt64 = 0
    }

    /// Most transfers at once in total.
    let totalLimit: Int
    /// Most transfers at once to one host.
    let perHostLimit: Int
    private let state = Locked(State())
    private let activity: NetworkActivity?

    init(totalLimit: Int, perHostLimit: Int, activity: NetworkActivity?) {
        self.totalLimit = max(1, totalLimit)
        self.perHostLimit = max(1, perHostLimit)
        self.activity = activity
    }

    /// A queued transfer's handle.
    struct Ticket: Sendable {
        fileprivate let id: UInt64
        fileprivate let scheduler: NetworkScheduler

        /// Removes the transfer if it has not started; returns whether it was removed.
        @discardableResult
        func cancel() -> Bool { scheduler.remove(id) }
        /// Changes a queued transfer's priority.
        func setPriority(_ p: Priority) { scheduler.update(id, p) }
    }

    /// Queues a transfer to `host`.
    func schedule(host: String, priority: Priority, _ start: @escaping Start) -> Ticket {
        let id: UInt64 = state.withLock { s in
            s.nextID += 1
            s.pending.append(Entry(id: s.nextID, host: host, priority: priority, start: start))
            return s.nextID
        }
        pump()
        return Ticket(id: id, scheduler: self)
    }

    /// The highest number of transfers that ran at once, in total and to `host`.
    func highWater(host: String? = nil) -> Int {
        state.withLock { s in host.map { s.maxRunningByHost[$0] ?? 0 } ?? s.maxRunning }
    }

    /// Transfers running now.
    var running: Int { state.withLock { $0.running } }

    private func remove(_ id: UInt64) -> Bool {
        state.withLock { s in
            guard let i = s.pending.firstIndex(where: { $0.id == id }) else { return false }
            s.pending.remove(at: i)
            return true
        }
    }

    private func update(_ id: UInt64, _ p: Priority) {
        state.withLock { s in
            if let i = s.pending.firstIndex(where: { $0.id == id }) { s.pending[i].priority = p }
        }
    }

    private func pump() {
        let (starts, running, sequence): ([Entry], Int, UInt64) = state.withLock { s in
            var starts: [Entry] = []
            while s.running < totalLimit {
                // Highest priority first; `pending` is in arrival order, so the first maximum is the oldest.
                var best: Int?
                for (i, e) in s.pending.enumerated() where (s.runningByHost[e.host] ?? 0) < perHostLimit {
                    if best == nil || e.priority > s.pending[best!].priority { best = i }
                }
                guard let b = best else { break }
                let e = s.pending.remove(at: b)
                s.running += 1
                s.runningByHost[e.host, default: 0] += 1
                s.maxRunning = max(s.maxRunning, s.running)
                s.maxRunningByHost[e.host] = max(s.maxRunningByHost[e.host] ?? 0, s.runningByHost[e.host]!)
                starts.append(e)
            }
            if !starts.isEmpty { s.changes += 1 }
            return (starts, s.running, s.changes)
        }
        if !starts.isEmpty { activity?.update(running, sequence: sequence) }
        for e in starts {
            let host = e.host
            e.start { [self] in self.finished(host: host) }
        }
    }

    private func finished(host: String) {
        let (running, sequence): (Int, UInt64) = state.withLock { s in
            s.running -= 1
            s.runningByHost[host]! -= 1
            if s.runningByHost[host] == 0 { s.runningByHost[host] = nil }
            s.changes += 1
            return (s.running, s.changes)
        }
        activity?.update(running, sequence: sequence)
        pump()
    }
}
