import CDispatch  // `stat()`, the zero initializer of the C struct, is attributed to this module (MemberImportVisibility)
import DarkroomImage

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The directory local sources are served from (`--root`), and the only way to turn a client's `src` into a
/// file path.
///
/// ``resolve(_:)`` refuses lexically bad paths first (`..`, absolute, NUL, backslash), answers hidden entries
/// (a component starting with `.`, before or after resolving) as missing, then resolves symlinks with `realpath`
/// and refuses anything that lands outside the root. Limit: the answer is checked when `resolve`
/// returns; a process that can write inside the root could still swap a directory for a symlink before the
/// caller opens the file (open the returned path promptly; it contains no symlinks).
struct RootDirectory: Sendable {
    /// The root's canonical absolute path (`realpath`: no symlinks, no trailing `/` except for `/` itself).
    let path: String
    /// The root opened as a directory, for `fstatat` relative to it; `-1` if it could not be opened.
    var descriptor: Int32 { handle.fd }
    private let handle: Handle

    /// Owns the root's descriptor and closes it with the last copy of the `RootDirectory`.
    private final class Handle: Sendable {
        let fd: Int32
        init(_ path: String) { fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
        deinit { if fd >= 0 { close(fd) } }
    }

    /// Canonicalises `path`. Throws ``ServerError/Code/notFound`` if it does not exist or is not a directory.
    /// Cost: one `realpath` and one `stat`.
    init(_ path: String) throws(ServerError) {
        guard !path.isEmpty, !path.contains("\0"), let real = Self.realPath(path) else {
            throw ServerError(.notFound, "root directory \(path) does not exist")
        }
        guard Self.fileType(real, followSymlinks: true) == S_IFDIR else {
            throw ServerError(.notFound, "root \(path) is not a directory")
        }
        self.path = real
        handle = Handle(real)
    }

    /// The canonical absolute path of the regular file `relative` (percent-decoded) names inside the root.
    ///
    /// Throws ``ServerError/Code/pathOutsideRoot`` for an empty or absolute path, a `..` component, a NUL byte,
    /// a backslash, or a path whose symlinks lead outside the root; ``ServerError/Code/notFound`` when the file
    /// is missing, is not a regular file, or is hidden (a component of the path, or of the path it resolves to,
    /// starts with `.`: `.git/config`, `.env`, a link to either). The lexical rules are checked first, so their answer never depends
    /// on what exists on disk. Cost: one `realpath` (a few `lstat`s per component) and one `stat`.
    func resolve(_ relative: String) throws(ServerError) -> String {
        guard !relative.isEmpty else { throw ServerError(.pathOutsideRoot, "empty source path") }
        guard !relative.hasPrefix("/") else { throw ServerError(.pathOutsideRoot, "absolute source path") }
        guard !relative.utf8.contains(0) else { throw ServerError(.pathOutsideRoot, "NUL byte in source path") }
        guard !relative.contains("\\") else { throw ServerError(.pathOutsideRoot, "backslash in source path") }
        guard !relative.split(separator: "/", omittingEmptySubsequences: true).contains("..") else {
            throw ServerError(.pathOutsideRoot, "'..' in source path")
        }
        // Hidden entries (`.git`, `.env`, `.ssh`…) are never served, as if absent
        guard !Self.hasHiddenComponent(relative.utf8) else { throw ServerError(.notFound, "no such file: \(relative)") }
        guard let real = Self.realPath(joined(relative)) else {
            throw ServerError(.notFound, "no such file: \(relative)")
        }
        guard real != path else { throw ServerError(.notFound, "not a regular file: \(relative)") }
        guard contains(real) else {
            throw ServerError(.pathOutsideRoot, "source path \(relative) leads outside the root")
        }
        guard !Self.hasHiddenComponent(real.utf8.dropFirst(path == "/" ? 1 : path.utf8.count + 1)) else {
            throw ServerError(.notFound, "no such file: \(relative)")  // a symlink to a hidden entry
        }
        guard Self.fileType(real, followSymlinks: false) == S_IFREG else {
            throw ServerError(.notFound, "not a regular file: \(relative)")
        }
        return real
    }

    /// One folder of a ``scan(maxImages:)``: its images' and subfolders' names, in UTF-8 byte order, and how
    /// many images it holds with its subfolders.
    struct Folder: Sendable {
        var images: [String] = []
        var folders: [String] = []
        var totalImages = 0
    }

    /// Every folder under the root (keyed by relative path, `""` for the root) that holds images, directly or
    /// below, skipping hidden entries (names starting with `.`), not descending into symlinked directories, listing a symlinked file only if ``resolve(_:)`` accepts it, depth ≤ 64; stops adding images after `maxImages`. Cost: one
    /// `readdir` per folder and one `lstat` per entry (a `realpath` more per symlinked file), so about a second
    /// for 100,000 files on a local disk — run it off the request path.
    func scan(maxImages: Int) -> [String: Folder] {
        var folders: [String: Folder] = [:]
        var budget = maxImages
        _ = scan(prefix: "", depth: 0, budget: &budget, into: &folders)
        return folders
    }

    /// Scans one folder; returns its total image count (0: the folder is left out).
    private func scan(prefix: String, depth: Int, budget: inout Int, into folders: inout [String: Folder]) -> Int {
        guard depth < 64 else { return 0 }
        let directory = prefix.isEmpty ? path : joined(prefix)
        var folder = Folder()
        var subfolders: [String] = []
        for name in Self.entries(of: directory) where !name.hasPrefix(".") {
            let relative = prefix.isEmpty ? name : prefix + "/" + name
            switch Self.fileType(joined(relative), followSymlinks: false) {
            case S_IFDIR: subfolders.append(name)
            case let type where type == S_IFREG || type == S_IFLNK:
                guard budget > 0, FileExtensions.isListed(name), type == S_IFREG || (try? resolve(relative)) != nil
                else { continue }
                folder.images.append(name)
                budget -= 1
            default: continue
            }
        }
        folder.images.sort { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        subfolders.sort { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        folder.totalImages = folder.images.count
        for name in subfolders {
            let count = scan(
                prefix: prefix.isEmpty ? name : prefix + "/" + name, depth: depth + 1, budget: &budget, into: &folders)
            if count > 0 {
                folder.folders.append(name)
                folder.totalImages += count
            }
        }
        if folder.totalImages > 0 || prefix.isEmpty { folders[prefix] = folder }
        return folder.totalImages
    }

    // MARK: - Helpers

    private func joined(_ relative: String) -> String {
        path == "/" ? "/" + relative : path + "/" + relative
    }

    /// Whether the canonical `real` is inside the root (never the root itself); compares with a trailing `/`, so
    /// `/srv/root2` is not inside `/srv/root`.
    private func contains(_ real: String) -> Bool {
        let prefix = path == "/" ? "/" : path + "/"
        return real.utf8.count > prefix.utf8.count && real.utf8.starts(with: prefix.utf8)
    }

    /// Whether any `/`-separated component of `path` is a hidden name: starts with `.` and is not `.` itself.
    static func hasHiddenComponent<S: Collection<UInt8>>(_ path: S) -> Bool {
        var length = 0  // of the component so far
        var dotted = false  // it starts with a dot
        for byte in path {
            if byte == UInt8(ascii: "/") {
                if dotted && length > 1 { return true }
                (length, dotted) = (0, false)
            } else {
                if length == 0 { dotted = byte == UInt8(ascii: ".") }
                length += 1
            }
        }
        return dotted && length > 1
    }

    private static func entries(of directory: String) -> [String] {
        guard let dir = opendir(directory) else { return [] }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != ".", name != ".." { names.append(name) }
        }
        return names
    }

    private static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// `S_IFMT` bits of `path`'s mode, or `nil` if it cannot be stat'ed.
    private static func fileType(_ path: String, followSymlinks: Bool) -> mode_t? {
        var info = stat()
        let status = followSymlinks ? stat(path, &info) : lstat(path, &info)
        guard status == 0 else { return nil }
        return info.st_mode & S_IFMT
    }
}
