import DarkroomCache
import Foundation
import NIOCore

/// Encoded thumbnails in two layers: an LRU in memory (by byte cost) and, when a directory is given, a
/// ``DiskCache`` (SQLite manifest; small thumbnails inline, large ones as files; crash-safe).
///
/// Keys name the source's identity (file inode, size and mtime, or the URL), every render parameter and the
/// output variant, so a changed file is a different key and stale entries simply age out.
/// Cost: a memory hit is one lock and a hash; a disk hit one SQLite read (inline) or one file read, then a
/// memory store. Thread-safe.
final class ThumbnailCache: Sendable {
    /// Where a thumbnail came from.
    enum Layer: String, Sendable { case memory, disk }

    let memory: MemoryCache<String, EncodedThumbnail>
    let disk: DiskCache?
    /// Seconds a disk entry for a remote source stays fresh (local sources change key when the file changes).
    let remoteMaxAge: Double

    /// A cache in memory only (no I/O, cannot fail).
    init(memoryBytes: Int, remoteMaxAge: Double) {
        memory = MemoryCache(limits: MemoryCacheLimits(costLimit: max(1 << 20, memoryBytes)))
        self.remoteMaxAge = remoteMaxAge
        disk = nil
    }

    /// A cache in memory and in a ``DiskCache`` at `directory`.
    /// - Throws: ``ServerError/Code/internalError`` when the disk cache cannot be opened.
    init(
        memoryBytes: Int, directory: String, disk configuration: DiskCacheConfiguration, remoteMaxAge: Double
    ) throws(ServerError) {
        memory = MemoryCache(limits: MemoryCacheLimits(costLimit: max(1 << 20, memoryBytes)))
        self.remoteMaxAge = remoteMaxAge
        do {
            disk = try DiskCache(directory: directory, configuration: configuration)
        } catch {
            throw ServerError(
                .internalError, "cannot open the thumbnail cache in \(directory): \(error)", underlying: error)
        }
    }

    /// The memory layer only: the synchronous fast path.
    func memoryValue(forKey key: String) -> EncodedThumbnail? {
        memory.value(forKey: key)
    }

    /// The disk layer; a hit is promoted to memory. `isRemote` applies ``remoteMaxAge``.
    func diskValue(forKey key: String, isRemote: Bool) -> EncodedThumbnail? {
        guard let disk, let entry = disk.entry(forKey: key) else { return nil }
        if isRemote, Date().timeIntervalSince1970 - entry.modified > remoteMaxAge { return nil }
        guard let thumbnail = EncodedThumbnail(bytes: entry.data, metadata: entry.extendedData) else { return nil }
        memory.set(thumbnail, forKey: key, cost: thumbnail.body.readableBytes)
        return thumbnail
    }

    /// Stores in both layers. A disk write failure is logged by the caller, never fatal.
    @discardableResult
    func store(_ thumbnail: EncodedThumbnail, forKey key: String) -> Bool {
        storeInMemory(thumbnail, forKey: key)
        return storeOnDisk(thumbnail, forKey: key)
    }

    /// The memory layer: one lock, no I/O.
    func storeInMemory(_ thumbnail: EncodedThumbnail, forKey key: String) {
        memory.set(thumbnail, forKey: key, cost: thumbnail.body.readableBytes)
    }

    /// The disk layer (blocking: a SQLite write or a file write); false when it failed. True without a disk layer.
    @discardableResult
    func storeOnDisk(_ thumbnail: EncodedThumbnail, forKey key: String) -> Bool {
        guard let disk else { return true }
        do {
            try thumbnail.body.withUnsafeReadableBytes { raw throws(DarkroomCacheError) in
                try disk.set(bytes: raw, forKey: key, extendedData: thumbnail.metadata)
            }
            return true
        } catch {
            return false
        }
    }
}
