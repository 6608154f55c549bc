import DarkroomImage
import DarkroomSupport

#if canImport(Glibc)
    import Glibc
#endif

/// Keeping the cache in step with the files (the Thumbnail Management D-Bus Specification's `Cache1`): file managers
/// report what they moved, copied and deleted so thumbnails follow their files instead of being made again.
///
/// A file's thumbnails are found by name (the MD5 of its URI) in each size folder and in this program's failure
/// folder; a folder's, by reading every thumbnail's `Thumb::URI` (one header read each). Each change is written
/// through a temporary file and a rename, never torn.
extension DesktopThumbnailCache {
    /// The folders thumbnails of a file can be in: each size's, and this program's failures.
    var folders: [String] {
        Size.allCases.map { root + "/" + $0.rawValue } + [root + "/fail/" + failureName]
    }

    /// Removes every thumbnail (each size, and the failure record) of each URI; returns how many were removed.
    @discardableResult
    public func delete(uris: [String]) -> Int {
        var removed = 0
        for uri in uris {
            for folder in folders where unlink(folder + "/" + Self.md5(uri) + ".png") == 0 { removed += 1 }
        }
        return removed
    }

    /// Moves the thumbnails of each `from[i]` to `to[i]` (each `Thumb::URI`, and its `Thumb::MTime` from the file
    /// now at `to[i]`, rewritten), the thumbnails of the files under a moved folder too. A thumbnail whose source
    /// has none is left alone; one that cannot be rewritten is removed (it would never be valid again). Returns how
    /// many moved.
    /// - Throws: `.invalidArgument` when the lists differ in length.
    @discardableResult
    public func move(from: [String], to: [String]) throws(DarkroomImageError) -> Int {
        try relocate(from: from, to: to, keepingSource: false)
    }

    /// Copies the thumbnails of each `from[i]` to `to[i]` as ``move(from:to:)`` does, keeping the originals.
    /// - Throws: `.invalidArgument` when the lists differ in length.
    @discardableResult
    public func copy(from: [String], to: [String]) throws(DarkroomImageError) -> Int {
        try relocate(from: from, to: to, keepingSource: true)
    }

    /// Removes the thumbnails whose file no longer exists, among those whose `Thumb::URI` lies under one of
    /// `baseURIs` (every thumbnail when empty) and, when `since` is not 0, that were written at or before `since`
    /// (seconds since 1970). Returns how many were removed. Cost: a header read and a `stat` per thumbnail.
    @discardableResult
    public func cleanup(under baseURIs: [String], since: UInt32) -> Int {
        var removed = 0
        for folder in folders {
            for thumbnail in Self.pngFiles(in: folder) {
                if since != 0 {
                    var status = stat()
                    guard stat(thumbnail, &status) == 0, status.st_mtim.tv_sec <= Int(since) else { continue }
                }
                guard let uri = Self.texts(of: thumbnail)?["Thumb::URI"],
                    baseURIs.isEmpty || baseURIs.contains(where: { Self.isURI(uri, under: $0) })
                else { continue }
                var status = stat()
                if let path = FileURI.path(of: uri), lstat(path, &status) == 0 { continue }
                if unlink(thumbnail) == 0 { removed += 1 }
            }
        }
        return removed
    }

    // MARK: - Moving and copying

    private func relocate(from: [String], to: [String], keepingSource: Bool) throws(DarkroomImageError) -> Int {
        guard from.count == to.count else {
            throw DarkroomImageError(
                .invalidArgument, "\(from.count) source URIs and \(to.count) destination URIs: the lists must pair up")
        }
        var moved = 0
        for (source, destination) in zip(from, to) where source != destination {
            for folder in folders {
                let thumbnail = folder + "/" + Self.md5(source) + ".png"
                if relocate(thumbnail, to: destination, keepingSource: keepingSource) { moved += 1 }
            }
            // A folder: the thumbnails of everything under it
            var status = stat()
            guard let path = FileURI.path(of: destination), stat(path, &status) == 0,
                status.st_mode & S_IFMT == S_IFDIR
            else { continue }
            let prefix = source.hasSuffix("/") ? source : source + "/"
            for folder in folders {
                for thumbnail in Self.pngFiles(in: folder) {
                    guard let uri = Self.texts(of: thumbnail)?["Thumb::URI"], uri.hasPrefix(prefix) else { continue }
                    let target =
                        (destination.hasSuffix("/") ? destination : destination + "/")
                        + uri.dropFirst(
                            prefix.count)
                    if relocate(thumbnail, to: target, keepingSource: keepingSource) { moved += 1 }
                }
            }
        }
        return moved
    }

    /// Rewrites the thumbnail at `thumbnail` as the thumbnail of `uri` in the same folder; whether it did.
    private func relocate(_ thumbnail: String, to uri: String, keepingSource: Bool) -> Bool {
        guard let bytes = try? FileBytes.read(thumbnail, limit: 64 << 20) else { return false }
        let folder = String(thumbnail[..<(thumbnail.lastIndex(of: "/") ?? thumbnail.startIndex)])
        var texts: [(keyword: String, text: String)] = [("Thumb::URI", uri)]
        var status = stat()
        if let path = FileURI.path(of: uri), stat(path, &status) == 0 {
            texts.append(("Thumb::MTime", String(status.st_mtim.tv_sec)))
        }
        guard let rewritten = PNGTextChunks.replacing(texts, in: bytes),
            (try? Self.writePrivately(rewritten, to: folder + "/" + Self.md5(uri) + ".png")) != nil
        else {
            if !keepingSource { unlink(thumbnail) }
            return false
        }
        if !keepingSource { unlink(thumbnail) }
        return true
    }

    /// Whether `uri` is `base` or lies under it.
    static func isURI(_ uri: String, under base: String) -> Bool {
        uri == base || uri.hasPrefix(base.hasSuffix("/") ? base : base + "/")
    }

    /// The `.png` files directly in `folder` (none when it cannot be read).
    static func pngFiles(in folder: String) -> [String] {
        guard let directory = opendir(folder) else { return [] }
        defer { closedir(directory) }
        var files: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            if name.hasSuffix(".png"), !name.hasPrefix(".") { files.append(folder + "/" + name) }
        }
        return files
    }
}
