import DarkroomSupport

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Thin, `errno`-checking wrappers over the POSIX calls the disk cache makes.
enum POSIX {
    /// `mkdir -p`: creates `path` and any missing parents (mode 0755).
    static func makeDirectories(_ path: String) throws(DarkroomCacheError) {
        do {
            try POSIXIO.makeFolders(path, mode: 0o755)
        } catch {
            throw DarkroomCacheError(.io, error.what, systemMessage: error.systemMessage)
        }
        guard isDirectory(path) else { throw DarkroomCacheError(.io, "\(path) is not a directory") }
    }

    static func isDirectory(_ path: String) -> Bool {
        var st = stat()
        return stat(path, &st) == 0 && (st.st_mode & S_IFMT) == S_IFDIR
    }

    /// (device, inode) of `path`, or `nil` if it does not exist.
    static func identity(_ path: String) -> FileIdentity? {
        var st = stat()
        guard stat(path, &st) == 0 else { return nil }
        return FileIdentity(device: UInt64(st.st_dev), inode: UInt64(st.st_ino))
    }

    /// Size in bytes of `path`, or 0.
    static func fileSize(_ path: String) -> Int {
        var st = stat()
        return stat(path, &st) == 0 ? Int(st.st_size) : 0
    }

    /// Names (and modification times, seconds since 1970) of the entries of `directory` other than `.`/`..`.
    static func list(_ directory: String) -> [(name: String, modified: Double)] {
        guard let dir = opendir(directory) else { return [] }
        defer { closedir(dir) }
        var result: [(String, Double)] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name == "." || name == ".." { continue }
            var st = stat()
            let modified = fstatat(dirfd(dir), name, &st, 0) == 0 ? Double(st.st_mtim.tv_sec) : 0
            result.append((name, modified))
        }
        return result
    }

    /// Removes `path`, ignoring a missing file.
    static func unlinkIfPresent(_ path: String) {
        _ = unlink(path)
    }

    /// Recursively deletes `path` (a file or a directory tree); best effort.
    static func removeTree(_ path: String) {
        if isDirectory(path) {
            for entry in list(path) { removeTree(path + "/" + entry.name) }
            _ = rmdir(path)
        } else {
            _ = unlink(path)
        }
    }

    /// Bytes available to unprivileged users on the file system holding `path`, or `nil`.
    static func freeSpace(_ path: String) -> Int? {
        var s = statvfs()
        guard statvfs(path, &s) == 0 else { return nil }
        return Int(s.f_bavail) * Int(s.f_frsize)
    }
}

/// A file's (device, inode): tells whether a path still names the file that was opened.
struct FileIdentity: Equatable, Sendable {
    let device: UInt64
    let inode: UInt64
}

extension POSIX {
    /// Renames `from` to `to` (replacing it); false on failure.
    @discardableResult
    static func rename(_ from: String, to: String) -> Bool {
        #if canImport(Glibc)
            Glibc.rename(from, to) == 0
        #else
            Darwin.rename(from, to) == 0
        #endif
    }
}
