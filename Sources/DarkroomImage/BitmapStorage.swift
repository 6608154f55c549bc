#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Memory that holds a ``Bitmap``'s pixels.
///
/// Storage is pluggable so that a bitmap can point at owned heap memory or, for image tables, straight into a
/// memory mapping (no copy). Conformers keep `baseAddress` valid and unchanged for their whole lifetime.
public protocol BitmapStorage: AnyObject, Sendable {
    /// The first byte of the pixels. Aligned to at least 64 bytes.
    var baseAddress: UnsafeMutableRawPointer { get }
    /// How many bytes starting at `baseAddress` belong to this storage.
    var byteCount: Int { get }
}

/// Owned heap memory aligned to 64 bytes (a cache line), freed when the last reference goes away.
///
/// Every allocation is counted by ``PixelMemory`` so tests and benchmarks can see the peak of decoded bytes.
// @unchecked Sendable: both stored properties are immutable `let`s set once in init; the pointer is owned by
// this object and freed only in deinit, when no other reference can exist. Pixel writes happen only while a
// decoder exclusively owns a not-yet-published bitmap.
public final class HeapBitmapStorage: BitmapStorage, @unchecked Sendable {
    public let baseAddress: UnsafeMutableRawPointer
    public let byteCount: Int
    private let meter: PixelMemoryMeter?

    /// Allocates `byteCount` bytes aligned to 64. When `zeroed` is false the memory is left uninitialized,
    /// which is cheaper for decoders that write every byte.
    /// - Throws: ``DarkroomImageError`` with code `.outOfMemory` when the allocation fails.
    public init(byteCount: Int, zeroed: Bool = true) throws(DarkroomImageError) {
        var raw: UnsafeMutableRawPointer?
        let size = max(byteCount, 1)
        guard posix_memalign(&raw, 64, size) == 0, let raw else {
            throw DarkroomImageError(.outOfMemory, "could not allocate \(byteCount) bytes of pixels")
        }
        if zeroed { memset(raw, 0, size) }
        self.baseAddress = raw
        self.byteCount = byteCount
        self.meter = PixelMemory.allocated(byteCount)
    }

    deinit {
        free(baseAddress)
        PixelMemory.released(byteCount, meter: meter)
    }
}
