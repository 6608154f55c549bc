import Dispatch
import Foundation

/// A thread of the service's own that runs one closure and can be waited for (Foundation's `Thread` cannot be
/// joined). Cost: one thread with a 4 MiB stack, for the service's life.
final class WorkerThread: Sendable {
    private let done = DispatchSemaphore(value: 0)

    init(name: String, _ body: @escaping @Sendable () -> Void) {
        let done = done
        let thread = Thread {
            body()
            done.signal()
        }
        thread.name = name
        thread.stackSize = 4 << 20
        thread.start()
    }

    /// Blocks until the closure has returned.
    func wait() { done.wait() }
}
