import DarkroomImage
import DarkroomSupport
import Foundation

/// Measuring helpers for `darkroom bench table`: page-cache control, residency, touching pixels, raw files.
enum TableBench {
    /// Sums every 8-byte word of `bytes` (wrapping): reads all the pixels, as drawing them would.
    @inline(never)
    static func touch(_ base: UnsafeRawPointer, count: Int) -> UInt64 {
        var sum: UInt64 = 0
        let words = base.assumingMemoryBound(to: UInt64.self)
        for i in 0..<(count / 8) { sum &+= words[i] }
        return sum
    }

    /// Reads every pixel of `bitmap` (rows × bytesPerRow).
    static func touch(_ bitmap: Bitmap) -> UInt64 {
        bitmap.withUnsafeBytes { touch($0.baseAddress!, count: $0.count) }
    }

    /// Evicts `path` from the page cache: `fdatasync` (only clean pages can go), then
    /// `posix_fadvise(POSIX_FADV_DONTNEED)`. Pages mapped by a process stay; callers unmap first.
    static func dropFromPageCache(_ path: String) {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return }
        fdatasync(fd)
        _ = posix_fadvise(fd, 0, 0, Int32(POSIX_FADV_DONTNEED))
        close(fd)
    }

    /// The fraction of `path`'s pages in the page cache now (`mincore` over a throwaway read-only mapping).
    static func residentFraction(_ path: String) -> Double {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return -1 }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0, st.st_size > 0 else { return -1 }
        let length = Int(st.st_size)
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        guard let map = mmap(nil, length, PROT_READ, MAP_SHARED, fd, 0), map != MAP_FAILED else { return -1 }
        defer { munmap(map, length) }
        let pages = (length + page - 1) / page
        var vector = [UInt8](repeating: 0, count: pages)
        guard mincore(map, length, &vector) == 0 else { return -1 }
        return Double(vector.reduce(0) { $0 + Int($1 & 1) }) / Double(pages)
    }

    /// `open` + `read` of a whole file into a fresh 64-byte-aligned buffer + `close`: what a cache of one raw
    /// pixel file per thumbnail costs per hit. Returns a word of the data so the read cannot be skipped.
    static func readCopy(_ path: String, bytes: Int) -> UInt64 {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return 0 }
        defer { close(fd) }
        var raw: UnsafeMutableRawPointer?
        guard posix_memalign(&raw, 64, bytes) == 0, let raw else { return 0 }
        defer { free(raw) }
        var done = 0
        while done < bytes {
            let n = read(fd, raw + done, bytes - done)
            if n <= 0 { break }
            done += n
        }
        return raw.load(as: UInt64.self) &+ UInt64(done)
    }

    /// Nanoseconds per call of `body` over `count` calls.
    static func nanosecondsPerCall(_ count: Int, _ body: () throws -> Void) rethrows -> Double {
        let t0 = MonotonicClock.seconds()
        for _ in 0..<count { try body() }
        return (MonotonicClock.seconds() - t0) * 1e9 / Double(count)
    }
}

/// Keeps a value observable so the optimizer cannot drop the work that made it.
@inline(never)
func blackHole<T>(_ value: T) {
    withExtendedLifetime(value) {}
}
