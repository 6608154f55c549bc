import DarkroomSupport

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// One `mmap(MAP_SHARED)` of a table file range, unmapped when the last reference goes away.
///
/// Readers share read-only mappings of whole chunks (a handed-out bitmap cannot scribble on the table: a store
/// through it faults); a writer maps just the entry it writes, read-write, for the length of one `set`.
// @unchecked Sendable: every stored property is an immutable `let` set in init. The mapping is created in init
// and unmapped only in deinit, when no other reference (hence no `Bitmap` pointing into it) can exist.
final class MappedRegion: @unchecked Sendable {
    let base: UnsafeMutableRawPointer
    let length: Int

    /// Maps `length` bytes of `fd` at `offset` (a multiple of the page size).
    /// - Throws: `.io` when `mmap` fails (address space, descriptor limits, a file shorter than the range is fine:
    ///   pages past the end fault only if touched).
    init(fd: Int32, offset: Int, length: Int, writable: Bool) throws(ImageTableError) {
        let protection = writable ? PROT_READ | PROT_WRITE : PROT_READ
        let p = mmap(nil, length, protection, MAP_SHARED, fd, off_t(offset))
        guard let p, p != MAP_FAILED else {
            throw ImageTableError.ioError("cannot map \(length) bytes of the table at offset \(offset)")
        }
        base = p
        self.length = length
    }

    deinit {
        munmap(base, length)
    }
}
