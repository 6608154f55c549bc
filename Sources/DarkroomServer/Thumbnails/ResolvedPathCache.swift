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
/// directory and not a symlink, and the last a regular file (one `fstatat` each, relative to the root). The canonical path has no
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
            if let info = Self.plainFile(hit.path, below: root) { return (hit.path, info) }
            forget(relative)
        }
        let path = try root.resolve(relative)
        guard let info = Self.plainFile(path, below: root) else {
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

    /// The `lstat` of `path` when every component of it below the root is a real directory (no symlink) and
    /// the last a regular file; `nil` otherwise. `path` is a canonical path inside `root`. Each component is
    /// `fstatat`ed relative to the root's descriptor (no walk of the root's own path, no allocation but one).
    static func plainFile(_ path: String, below root: RootDirectory) -> stat? {
        let start = root.path == "/" ? 1 : root.path.utf8.count + 1
        var bytes = Array(path.utf8CString)  // NUL-terminated
        guard bytes.count - 1 > start else { return nil }
        let base = root.descriptor >= 0 ? root.descriptor : AT_FDCWD
        let offset = root.descriptor >= 0 ? start : 0
        var info = stat()
        return bytes.withUnsafeMutableBufferPointer { buffer -> stat? in
            let relative = buffer.baseAddress! + offset
            for index in start..<(buffer.count - 1) where buffer[index] == CChar(UInt8(ascii: "/")) {
                buffer[index] = 0
                defer { buffer[index] = CChar(UInt8(ascii: "/")) }
                guard fstatat(base, relative, &info, AT_SYMLINK_NOFOLLOW) == 0, info.st_mode & S_IFMT == S_IFDIR else {
                    return nil
                }
            }
            guard fstatat(base, relative, &info, AT_SYMLINK_NOFOLLOW) == 0, info.st_mode & S_IFMT == S_IFREG else {
                return nil
            }
            return info
        }
    }
}
