import DarkroomSupport

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A read buffer kept from one file to the next by a worker that reads many (the `thumb` command's threads).
///
/// ``FileBytes/read(_:limit:)`` gives every file fresh memory, which the kernel must map and fault in page by page
/// as the read fills it (for a large camera RAW, a large share of the thumbnail's time). This buffer grows to the largest
/// file read so far and keeps its pages, so later reads only copy. Memory: that largest file, until released.
/// Not thread-safe: one worker at a time. `@unchecked Sendable` so that a pool can hand buffers between threads:
/// safe as long as the pool gives each buffer to one thread at a time (through a lock, as `thumb`'s pool does), since
/// all state is touched only inside ``read(_:limit:)`` by its current holder.
package final class FileReadBuffer: @unchecked Sendable {
    private var storage: UnsafeMutableRawPointer?
    private var capacity = 0

    package init() {}

    deinit { free(storage) }

    /// Reads `path` whole (at most `limit` bytes) and returns its bytes, valid until the next ``read(_:limit:)``.
    /// - Throws: as ``FileBytes/read(_:limit:)``; `.outOfMemory` when the buffer cannot grow.
    package func read(_ path: String, limit: Int) throws(DarkroomImageError) -> UnsafeRawBufferPointer {
        let (fd, size) = try FileBytes.openRegularFile(path, limit: limit)
        defer { close(fd) }
        if size > capacity {
            free(storage)
            storage = nil
            capacity = 0
            guard let grown = malloc(max(size, 1)) else {
                throw DarkroomImageError(.outOfMemory, "cannot allocate \(size) bytes to read \(path)")
            }
            storage = grown
            capacity = size
        }
        guard let storage else { return UnsafeRawBufferPointer(start: nil, count: 0) }
        guard let done = POSIXIO.read(fd, into: UnsafeMutableRawBufferPointer(start: storage, count: size)) else {
            throw DarkroomImageError.ioError("cannot read \(path)")
        }
        return UnsafeRawBufferPointer(start: storage, count: done)
    }
}
