import Dispatch

/// A task executor backed by its own concurrent dispatch queue rather than Swift's cooperative pool, so the tests'
/// loopback servers keep answering while synchronous tests occupy every cooperative thread.
package final class TestServerExecutor: TaskExecutor {
    /// The one executor all loopback servers share.
    package static let shared = TestServerExecutor()

    private let queue = DispatchQueue(label: "darkroom.test-server", attributes: .concurrent)

    package func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        queue.async { job.runSynchronously(on: executor) }
    }
}
