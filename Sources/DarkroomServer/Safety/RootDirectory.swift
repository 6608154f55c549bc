import CDispatch  // `stat()`, the zero initializer of the C struct, is attributed to this module (MemberImportVisibility)

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The directory local sources are served from (`--root`), and the only way to turn a client's `src` into a
/// file path.
///
/// ``resolve(_:)`` refuses lexically bad paths first (`..`, absolute, NUL, backslash), then resolves symlinks with
/// `realpath` and refuses anything that lands outside the root. Limit: the answer is checked when `resolve`
/// returns; a process that can write inside the root could still swap a directory for a symlink before the
/// caller opens the file (open the returned path promptly; it contains no symlinks).
struct RootDirectory: Sendable {
    /// The root's canonical absolute path (`realpath`: no symlinks, no trailing `/` except for `/` itself).
    let path: String

    /// The image extensions ``listImages(limit:)`` reports, lower-cased.
    static let imageExtensions: Set<String> = ["jpg", "jpeg", "png", "webp", "gif", "heic", "heif", "avif"]

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
    }

    /// The canonical absolute path of the regular file `relative` (percent-decoded) names inside the root.
    ///
    /// Throws ``ServerError/Code/pathOutsideRoot`` for an empty or absolute path, a `..` component, a NUL byte,
    /// a backslash, or a path whose symlinks lead outside the root; ``ServerError/Code/notFound`` when the file
    /// is missing or is not a regular file. The lexical rules are checked first, so their answer never depends
    /// on what exists on disk. Cost: one `realpath` (a few `lstat`s per component) and one `stat`.
    func resolve(_ relative: String) throws(ServerError) -> String {
        guard !relative.isEmpty else { throw ServerError(.pathOutsideRoot, "empty source path") }
        guard !relative.hasPrefix("/") else { throw ServerError(.pathOutsideRoot, "absolute source path") }
        guard !relative.utf8.contains(0) else { throw ServerError(.pathOutsideRoot, "NUL byte in source path") }
        guard !relative.contains("\\") else { throw ServerError(.pathOutsideRoot, "backslash in source path") }
        guard !relative.split(separator: "/", omittingEmptySubsequences: true).contains("..") else {
            throw ServerError(.pathOutsideRoot, "'..' in source path")
        }
        guard let real = Self.realPath(joined(relative)) else {
            throw ServerError(.notFound, "no such file: \(relative)")
        }
        guard real != path else { throw ServerError(.notFound, "not a regular file: \(relative)") }
        guard contains(real) else {
            throw ServerError(.pathOutsideRoot, "source path \(relative) leads outside the root")
        }
        guard Self.fileType(real, followSymlinks: false) == S_IFREG else {
            throw ServerError(.notFound, "not a regular file: \(relative)")
        }
        return real
    }

    /// Relative paths of the images (`.jpg`, `.jpeg`, `.png`, `.webp`, `.gif`, `.heic`, `.heif`,
    /// `.avif`, any case) under the root, in
    /// UTF-8 byte order, at most `limit`.
    ///
    /// Skips hidden entries (names starting with `.`); does not descend into symlinked directories; a symlinked
    /// file is listed only if ``resolve(_:)`` accepts it. Stops as soon as `limit` paths are found, so the cost
    /// is bounded by `limit` plus the directories read on the way (each read and sorted whole); depth ≤ 64.
    func listImages(limit: Int) -> [String] {
        var found: [String] = []
        guard limit > 0 else { return found }
        walk(prefix: "", depth: 0, limit: limit, into: &found)
        return found
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

    private func walk(prefix: String, depth: Int, limit: Int, into found: inout [String]) {
        guard depth < 64, found.count < limit else { return }
        let directory = prefix.isEmpty ? path : joined(prefix)
        // Sort key: a directory sorts as "name/", so a depth-first walk yields paths in global byte order.
        var entries: [(key: String, name: String, isDirectory: Bool)] = []
        for name in Self.entries(of: directory) where !name.hasPrefix(".") {
            let relative = prefix.isEmpty ? name : prefix + "/" + name
            switch Self.fileType(joined(relative), followSymlinks: false) {
            case S_IFDIR: entries.append((name + "/", name, true))
            case S_IFREG, S_IFLNK: entries.append((name, name, false))
            default: break
            }
        }
        entries.sort { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
        for entry in entries {
            guard found.count < limit else { return }
            let relative = prefix.isEmpty ? entry.name : prefix + "/" + entry.name
            if entry.isDirectory {
                walk(prefix: relative, depth: depth + 1, limit: limit, into: &found)
            } else if let dot = entry.name.lastIndex(of: "."),
                Self.imageExtensions.contains(entry.name[entry.name.index(after: dot)...].lowercased()),
                (try? resolve(relative)) != nil
            {
                found.append(relative)
            }
        }
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
