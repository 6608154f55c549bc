import DarkroomImage
import DarkroomSupport
import Foundation

/// One image file found under the folder.
struct LibraryItem: Sendable, Hashable {
    /// Absolute (or as given) path.
    var path: String
    /// Names the file's current contents in every cache: the path with its modification time and size, so an
    /// edited file is a new image and its old thumbnails are never shown.
    var imageID: String
}

/// Finds the images under a folder on a thread of its own and hands them to the drawing thread in batches, so a
/// folder of 100,000 files shows its first screen as soon as the first directory is listed.
///
/// Order: each directory's files by name, then its subdirectories by name (depth first). Hidden files and
/// directories are skipped, symbolic links to directories are not followed (no loops), and files are recognised by
/// extension here (the decoder checks their bytes). Cost on the scanning thread: one `readdir` pass and one
/// `stat` per file.
final class PhotoLibrary: Sendable {
    private struct State {
        var items: [LibraryItem] = []
        var finished = false
        var cancelled = false
    }

    private let state = Locked(State())
    /// The folder scanned.
    let root: String

    /// Starts scanning `root` at once on a new thread (`root` may also be a single file).
    init(root: String) {
        // Absolute and without `.`/`..`: the path is the file's identity in the caches and in its desktop URI
        self.root = URL(fileURLWithPath: root).standardizedFileURL.path
        _ = DedicatedThread(name: "darkroom.view.scan", niceness: 10) { [self] in scan() }
    }

    /// Items found after the first `known`, and whether the scan has ended. Never waits: while the scan thread
    /// (nice 10) holds the lock to publish a batch, this answers nothing new and not finished, and the caller, the
    /// drawing thread, asks again on its next frame.
    func items(after known: Int) -> (items: ArraySlice<LibraryItem>, finished: Bool) {
        state.withLockIfAvailable { s in (s.items[min(known, s.items.count)...], s.finished) } ?? ([], false)
    }

    /// Stops the scan at the next directory entry.
    func cancel() { state.withLock { $0.cancelled = true } }

    private var isCancelled: Bool { state.withLock { $0.cancelled } }

    private func scan() {
        var pending: [LibraryItem] = []
        var lastPublish = ContinuousClock.now
        func publish(force: Bool) {
            let now = ContinuousClock.now
            guard !pending.isEmpty, force || now - lastPublish > .milliseconds(30) || pending.count >= 4096 else {
                return
            }
            let batch = pending
            pending.removeAll(keepingCapacity: true)
            lastPublish = now
            state.withLock { $0.items.append(contentsOf: batch) }
        }
        var info = stat()
        if stat(root, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG {
            if let item = Self.item(root, info) { pending.append(item) }
        } else {
            var directories = [root]
            while let directory = directories.popLast(), !isCancelled {
                let (files, subdirectories) = Self.list(directory)
                pending.append(contentsOf: files)
                publish(force: true)  // every directory's files as soon as they are known: the first screen
                directories.append(contentsOf: subdirectories.reversed())
            }
        }
        publish(force: true)
        state.withLock { $0.finished = true }
    }

    /// A directory's image files (sorted by name) and subdirectories (sorted).
    private static func list(_ directory: String) -> (files: [LibraryItem], directories: [String]) {
        guard let dir = opendir(directory) else { return ([], []) }
        defer { closedir(dir) }
        var names: [(name: String, isDirectory: Bool)] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            guard !name.hasPrefix(".") else { continue }
            names.append((name, entry.pointee.d_type == UInt8(DT_DIR)))
        }
        names.sort { $0.name < $1.name }
        var files: [LibraryItem] = []
        var directories: [String] = []
        let prefix = directory.hasSuffix("/") ? directory : directory + "/"
        for (name, isDirectory) in names {
            let path = prefix + name
            if isDirectory {
                directories.append(path)
                continue
            }
            guard FileExtensions.isListed(name) else { continue }
            var info = stat()
            guard stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, let item = item(path, info) else {
                continue
            }
            files.append(item)
        }
        return (files, directories)
    }

    private static func item(_ path: String, _ info: stat) -> LibraryItem? {
        guard info.st_size > 0 else { return nil }
        let mtime = Int(info.st_mtim.tv_sec) * 1_000_000_000 + Int(info.st_mtim.tv_nsec)
        return LibraryItem(path: path, imageID: "\(path)@\(mtime)-\(info.st_size)")
    }
}
