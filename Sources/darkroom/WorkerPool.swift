import Foundation
import Synchronization

/// Runs `count` jobs on a fixed number of threads this pool starts, never one thread per job.
///
/// Each worker takes the next index from a shared atomic counter until none remain, so the pool size bounds
/// both concurrency and threads. `run` blocks until every job has finished.
enum WorkerPool {
    private final class Counter: Sendable {
        let next = Atomic<Int>(0)
    }

    static func run(count: Int, workers: Int, _ job: @escaping @Sendable (Int) -> Void) {
        let counter = Counter()
        let threads = max(1, min(workers, count))
        let done = DispatchGroup()
        for _ in 0..<threads {
            done.enter()
            let thread = Thread {
                while true {
                    let i = counter.next.add(1, ordering: .relaxed).oldValue
                    if i >= count { break }
                    job(i)
                }
                done.leave()
            }
            thread.stackSize = 1 << 20
            thread.start()
        }
        done.wait()
    }
}
