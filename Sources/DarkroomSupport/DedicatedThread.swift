import Dispatch
import Foundation

/// A thread of its own for one long-running loop (a service's rendering loop, a folder scan, a lookup loop that
/// sleeps until woken), which can be waited for: Foundation's `Thread` cannot be joined. Work that comes in items
/// belongs on a ``WorkQueue`` instead, whose threads are bounded and exit when idle.
///
/// Cost: one thread (a 4 MiB stack by default) for as long as `body` runs. `niceness` (0…19) is set on the thread
/// before `body` starts (``ThreadNiceness``), so a background loop never competes with an interactive thread.
package final class DedicatedThread: Sendable {
    private let done = DispatchSemaphore(value: 0)

    /// Starts `body` at once on a new thread named `name`.
    package init(
        name: String, niceness: Int32 = 0, stackSize: Int = 4 << 20, _ body: @escaping @Sendable () -> Void
    ) {
        let done = done
        let thread = Thread {
            ThreadNiceness.setForCurrentThread(niceness)
            body()
            done.signal()
        }
        thread.name = name
        thread.stackSize = stackSize
        thread.start()
    }

    /// Blocks until `body` has returned.
    package func wait() { done.wait() }
}
