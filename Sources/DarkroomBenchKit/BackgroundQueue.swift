import DarkroomSupport
import Foundation

/// A FIFO of jobs run by a fixed number of worker threads (the scroll strategies' background decoder), built on
/// the pipeline's ``WorkQueue`` at one level. Records which threads ran jobs. `stop()` drops what is still queued;
/// the idle workers exit 30 s later (no thread churn while a benchmark runs).
public final class BackgroundQueue: Sendable {
    private struct State {
        var stopped = false
        var threads: Set<UInt> = []
    }
    private let state = Locked(State())
    private let queue: WorkQueue

    /// A queue of at most `workers` threads (started on demand).
    public init(workers: Int) {
        queue = WorkQueue(name: "darkroom.bench.background", maxConcurrent: max(1, workers), idleTimeout: 30)
    }

    /// Queues `job`; ignored after ``stop()``.
    public func async(_ job: @escaping @Sendable () -> Void) {
        guard !state.withLock({ $0.stopped }) else { return }
        queue.enqueue { [state] _ in
            let tid = currentThreadID()
            state.withLock { _ = $0.threads.insert(tid) }
            job()
        }
    }

    /// Jobs queued and not started.
    public var backlog: Int { queue.statistics.pending }

    /// Distinct threads that ran a job.
    public var threadsUsed: Int { state.withLock { $0.threads.count } }

    /// Drops queued jobs; running ones finish.
    public func stop() {
        state.withLock { $0.stopped = true }
        queue.cancelAll()
    }
}

/// An id for the calling thread (its pthread handle), for counting distinct threads.
func currentThreadID() -> UInt {
    #if os(Linux)
        UInt(pthread_self())
    #else
        UInt(bitPattern: pthread_self())
    #endif
}

/// Distinct threads seen calling ``record()``.
final class ThreadRecorder: Sendable {
    private let ids = Locked<Set<UInt>>([])
    /// Notes the calling thread.
    func record() {
        let id = currentThreadID()
        ids.withLock { _ = $0.insert(id) }
    }
    /// Threads noted so far.
    var count: Int { ids.withLock { $0.count } }
}
