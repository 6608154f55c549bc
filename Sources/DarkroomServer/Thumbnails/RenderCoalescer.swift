import DarkroomCache
import DarkroomSupport

/// Runs one render per key at a time: requests for a thumbnail already being rendered wait for that render
/// instead of starting their own ("do each piece of work once").
///
/// The shared render is an unstructured task, so a waiter that leaves (timeout, disconnect) does not cancel it
/// for the others; it ends on its own (and fills the cache). Cost: one lock per call. Thread-safe.
final class RenderCoalescer<Value: Sendable>: Sendable {
    private struct State {
        var inFlight: [String: Task<Value, any Error>] = [:]
        var started: UInt64 = 0
        var joined: UInt64 = 0
    }
    private let state = Locked(State())

    /// Renders started and requests that joined one already running.
    var counts: (started: UInt64, joined: UInt64) { state.withLock { ($0.started, $0.joined) } }

    /// The value for `key`: joins the render in flight, or starts `render` as a new one.
    func value(forKey key: String, _ render: @escaping @Sendable () async throws -> Value) async throws -> Value {
        let task: Task<Value, any Error> = state.withLock { s in
            if let running = s.inFlight[key] {
                s.joined += 1
                return running
            }
            s.started += 1
            let task = Task<Value, any Error> {
                defer { _ = self.state.withLock { $0.inFlight.removeValue(forKey: key) } }
                return try await render()
            }
            s.inFlight[key] = task
            return task
        }
        return try await task.value
    }
}
