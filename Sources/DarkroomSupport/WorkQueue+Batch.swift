import Dispatch
import Synchronization

extension WorkQueue {
    /// Runs `job(0) … job(count - 1)` on at most `workers` threads of a queue named `name`, and blocks until all
    /// have finished.
    ///
    /// Each thread takes the next index from one atomic counter until none remain (one enqueue per thread, not per
    /// job), so a batch of small jobs pays no per-job queueing. For command-line batches and benchmarks; never call
    /// it from an async context, since it blocks the calling thread.
    package static func run(
        count: Int, workers: Int, name: String = "darkroom.batch",
        _ job: @escaping @Sendable (Int) -> Void
    ) {
        guard count > 0 else { return }
        let threads = max(1, min(workers, count))
        let queue = WorkQueue(name: name, maxConcurrent: threads, idleTimeout: 0.5)
        let next = BatchCounter()
        let done = DispatchGroup()
        for _ in 0..<threads {
            done.enter()
            queue.enqueue { _ in
                while true {
                    let i = next.value.add(1, ordering: .relaxed).oldValue
                    if i >= count { break }
                    job(i)
                }
                done.leave()
            }
        }
        done.wait()
    }
}

/// The shared next-index counter of a batch (an `Atomic`, which needs a class to be shared between closures).
private final class BatchCounter: Sendable {
    let value = Atomic<Int>(0)
}
