import Foundation
import Synchronization

/// A FIFO of jobs run by a fixed number of worker threads (a serial-per-thread background queue). Records which
/// threads ran jobs. `stop()` drops what is still queued and ends the workers.
public final class BackgroundQueue: Sendable {
    private struct State {
        var jobs: [@Sendable () -> Void] = []
        var head = 0
        var stopped = false
        var threads: Set<UInt> = []
    }
    private let state = Mutex(State())
    private let available = DispatchSemaphore(value: 0)
    private let workers: Int

    /// Starts `workers` threads.
    public init(workers: Int) {
        self.workers = max(1, workers)
        for _ in 0..<self.workers {
            let t = Thread { [self] in loop() }
            t.stackSize = 1 << 20
            t.start()
        }
    }

    /// Queues `job`.
    public func async(_ job: @escaping @Sendable () -> Void) {
        let accepted = state.withLock { s -> Bool in
            guard !s.stopped else { return false }
            s.jobs.append(job)
            return true
        }
        if accepted { available.signal() }
    }

    /// Jobs queued and not started.
    public var backlog: Int { state.withLock { $0.jobs.count - $0.head } }

    /// Distinct threads that ran a job.
    public var threadsUsed: Int { state.withLock { $0.threads.count } }

    /// Drops queued jobs and lets the workers exit after their current job.
    public func stop() {
        state.withLock { $0.stopped = true; $0.jobs = []; $0.head = 0 }
        for _ in 0..<workers { available.signal() }
    }

    private func loop() {
        let tid = currentThreadID()
        while true {
            available.wait()
            let job = state.withLock { s -> (@Sendable () -> Void)?? in
                if s.stopped { return .none }
                guard s.head < s.jobs.count else { return .some(nil) }
                let j = s.jobs[s.head]
                s.head += 1
                if s.head > 1024, s.head * 2 > s.jobs.count { s.jobs.removeFirst(s.head); s.head = 0 }
                s.threads.insert(tid)
                return .some(j)
            }
            guard let job else { return }
            job?()
        }
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
    private let ids = Mutex<Set<UInt>>([])
    /// Notes the calling thread.
    func record() { let id = currentThreadID(); ids.withLock { _ = $0.insert(id) } }
    /// Threads noted so far.
    var count: Int { ids.withLock { $0.count } }
}
