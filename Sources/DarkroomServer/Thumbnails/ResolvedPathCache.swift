import CDispatch  // `lstat()`, the zero initializer of the C struct, is attributed to this module (MemberImportVisibility)
import DarkroomCache
import DarkroomSupport
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Remembers, for a short time, which canonical file inside the root a `src` path resolved to, so a repeated
/// request skips `realpath`'s walk of the root's own path and its `readlink`s.
///
/// A remembered answer is re-checked on every use, component by component below the root: each must still be a
/// directory and not a symlink, and the last a regular file (one `lstat` each). The canonical path has no
/// symlinks by construction, so anything else means the tree changed — a directory swapped for a symlink that
/// leaves the root, say — and the path is resolved afresh, which refuses what now leads outside. The cache thus
/// never lets a request follow a link the full check would refuse, even within ``ttl``; it saves work, never
/// checks. Bounded: cleared when it reaches ``capacity`` entries. Thread-safe (one lock).
final class ResolvedPathCache: Sendable {
    /// Seconds an entry is kept before it is resolved afresh. Default 2.
    let ttl: Double
    /// Most entries kept.
    let capacity: Int
    private let entries = Locked<[String: (path: String, checked: Double)]>([:])

    init(ttl: Double = 2, capacity: Int = 4096) {
        self.ttl = ttl
        self.capacity = capacity
    }

    /// The canonical path of `relative` and the file's `lstat`, resolving (and remembering) it when not known,
    /// too old, or no longer a symlink-free path to a regular file.
    /// - Throws: what ``RootDirectory/resolve(_:)`` throws; ``ServerError/Code/notFound`` when the file vanished
    ///   between resolving and the `lstat`.
    func resolve(_ relative: String, in root: RootDirectory) throws(ServerError) -> (path: String, info: stat) {
        let now = ProcessInfo.processInfo.systemUptime
        if let hit = entries.withLock({ $0[relative] }), now - hit.checked < ttl {
            if let info = Self.plainFile(hit.path, below: root.path) { return (hit.path, info) }
            forget(relative)
        }
        let path = try root.resolve(relative)
        guard let info = Self.plainFile(path, below: root.path) else {
            throw ServerError(.notFound, "\(relative) does not exist")
        }
        entries.withLock { e in
            if e.count >= capacity { e.removeAll(keepingCapacity: true) }
            e[relative] = (path, now)
        }
        return (path, info)
    }

    /// Forgets `relative` (its file vanished).
    func forget(_ relative: String) {
        _ = entries.withLock { $0.removeValue(forKey: relative) }
    }

    /// The `lstat` of `path` when every component of it below `rootPath` is a real directory (no symlink) and
    /// the last a regular file; `nil` otherwise. `path` is a canonical path inside `rootPath`.
    static func plainFile(_ path: String, below rootPath: String) -> stat? {
        let start = rootPath == "/" ? 1 : rootPath.utf8.count + 1
        let bytes = Array(path.utf8)
        guard bytes.count > start else { return nil }
        var info = stat()
        var index = start
        while let slash = bytes[index...].firstIndex(of: UInt8(ascii: "/")) {
            let prefix = String(decoding: bytes[..<slash], as: UTF8.self)
            guard lstat(prefix, &info) == 0, info.st_mode & S_IFMT == S_IFDIR else { return nil }
            index = slash + 1
        }
        guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return nil }
        return info
    }
}
