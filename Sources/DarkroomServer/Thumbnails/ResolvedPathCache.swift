import DarkroomCache
import DarkroomSupport
import Foundation

/// Remembers, for a short time, which canonical file inside the root a `src` path resolved to, so a cache hit
/// costs one `stat` instead of `realpath`'s walk of every component.
///
/// Safe by construction: only paths ``RootDirectory/resolve(_:)`` accepted are stored, and the server then reads
/// the stored canonical path, never the link — so replacing a file by a symlink that leaves the root cannot make
/// the server read outside it; at worst it keeps serving the old target for ``ttl`` seconds. Bounded: cleared
/// when it reaches ``capacity`` entries. Thread-safe (one lock).
final class ResolvedPathCache: Sendable {
    /// Seconds an entry is trusted. Default 2.
    let ttl: Double
    /// Most entries kept.
    let capacity: Int
    private let entries = Locked<[String: (path: String, checked: Double)]>([:])

    init(ttl: Double = 2, capacity: Int = 4096) {
        self.ttl = ttl
        self.capacity = capacity
    }

    /// The canonical path for `relative`, resolving (and remembering) it when not known or too old.
    func resolve(_ relative: String, in root: RootDirectory) throws(ServerError) -> String {
        let now = ProcessInfo.processInfo.systemUptime
        if let hit = entries.withLock({ $0[relative] }), now - hit.checked < ttl { return hit.path }
        let path = try root.resolve(relative)
        entries.withLock { e in
            if e.count >= capacity { e.removeAll(keepingCapacity: true) }
            e[relative] = (path, now)
        }
        return path
    }

    /// Forgets `relative` (its file vanished).
    func forget(_ relative: String) {
        _ = entries.withLock { $0.removeValue(forKey: relative) }
    }
}
