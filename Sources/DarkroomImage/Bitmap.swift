/// A decoded image, ready to draw: `height` rows of `width` pixels in ``format``, each row starting on a
/// 64-byte boundary.
///
/// A bitmap is an immutable value once it has been handed out; copying it copies a reference to its
/// ``storage``, never the pixels. Its memory cost is ``cost`` = ``bytesPerRow`` × ``height``.
public struct Bitmap: Sendable {
    /// Width in pixels (≥ 1).
    public let width: Int
    /// Height in pixels (≥ 1).
    public let height: Int
    /// The layout of each pixel.
    public let format: PixelFormat
    /// Bytes from one row to the next: `width × bytesPerPixel` rounded up to a multiple of 64.
    public let bytesPerRow: Int
    /// Whether every pixel is known to be fully opaque (lets encoders skip alpha and flattening).
    public let isOpaque: Bool
    /// Where the pixels live: owned heap memory or a memory mapping.
    public let storage: any BitmapStorage

    /// Row alignment in bytes.
    public static let rowAlignment = 64

    /// The bytes per row a bitmap of `width` pixels in `format` uses.
    @inlinable
    public static func alignedBytesPerRow(width: Int, format: PixelFormat) -> Int {
        let raw = width * format.bytesPerPixel
        return (raw + rowAlignment - 1) / rowAlignment * rowAlignment
    }

    /// Memory held by the pixels, in bytes: ``bytesPerRow`` × ``height``.
    public var cost: Int { bytesPerRow * height }

    /// Allocates a zero-filled bitmap on the heap (transparent black, or black for opaque formats).
    /// Cost: one aligned allocation of `alignedBytesPerRow × height` bytes.
    /// - Throws: ``DarkroomImageError`` `.invalidArgument` for a non-positive size, `.outOfMemory` when allocation fails.
    public init(width: Int, height: Int, format: PixelFormat, isOpaque: Bool? = nil) throws(DarkroomImageError) {
        try self.init(uninitializedWidth: width, height: height, format: format, isOpaque: isOpaque, zeroed: true)
    }

    /// Allocates without clearing; for decoders that write every row.
    init(
        uninitializedWidth width: Int, height: Int, format: PixelFormat, isOpaque: Bool? = nil,
        zeroed: Bool = false
    ) throws(DarkroomImageError) {
        guard width > 0, height > 0 else {
            throw DarkroomImageError(.invalidArgument, "bitmap size must be positive, got \(width)×\(height)")
        }
        let bpr = Bitmap.alignedBytesPerRow(width: width, format: format)
        let (bytes, overflow) = bpr.multipliedReportingOverflow(by: height)
        guard !overflow else { throw DarkroomImageError(.limitExceeded, "bitmap \(width)×\(height) is too large") }
        let storage = try HeapBitmapStorage(byteCount: bytes, zeroed: zeroed)
        self.init(
            trusted: width, height: height, format: format, bytesPerRow: bpr,
            isOpaque: isOpaque ?? !format.hasAlpha, storage: storage)
    }

    /// Wraps existing storage without copying. `bytesPerRow` must be a multiple of 64 and the storage must hold
    /// `bytesPerRow × height` bytes.
    /// - Throws: ``DarkroomImageError`` `.invalidArgument` when the geometry does not fit the storage.
    public init(
        width: Int, height: Int, format: PixelFormat, bytesPerRow: Int, isOpaque: Bool,
        storage: any BitmapStorage
    ) throws(DarkroomImageError) {
        guard width > 0, height > 0, bytesPerRow >= width * format.bytesPerPixel,
            bytesPerRow % Bitmap.rowAlignment == 0, storage.byteCount >= bytesPerRow * height
        else {
            throw DarkroomImageError(
                .invalidArgument,
                "storage of \(storage.byteCount) bytes cannot hold \(width)×\(height) \(format) at \(bytesPerRow) bytes per row"
            )
        }
        self.init(
            trusted: width, height: height, format: format, bytesPerRow: bytesPerRow,
            isOpaque: isOpaque, storage: storage)
    }

    private init(
        trusted width: Int, height: Int, format: PixelFormat, bytesPerRow: Int, isOpaque: Bool,
        storage: any BitmapStorage
    ) {
        self.width = width
        self.height = height
        self.format = format
        self.bytesPerRow = bytesPerRow
        self.isOpaque = isOpaque
        self.storage = storage
    }

    /// Returns a copy of this bitmap's description with a different opacity hint (no pixel copy).
    func with(isOpaque: Bool) -> Bitmap {
        Bitmap(
            trusted: width, height: height, format: format, bytesPerRow: bytesPerRow,
            isOpaque: isOpaque, storage: storage)
    }

    /// The first byte of row `y`. Valid while this bitmap (or its storage) is alive.
    @inlinable
    public func row(_ y: Int) -> UnsafeMutableRawPointer {
        precondition(y >= 0 && y < height, "row \(y) out of 0..<\(height)")
        return storage.baseAddress + y * bytesPerRow
    }

    /// Calls `body` with the pixel bytes (`bytesPerRow × height`, padding included). Zero-copy.
    public func withUnsafeBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        try body(UnsafeRawBufferPointer(start: storage.baseAddress, count: cost))
    }

    /// Whether two bitmaps have the same size, format and visible pixels (padding ignored). Cost: O(pixels).
    public func pixelsEqual(_ other: Bitmap) -> Bool {
        guard width == other.width, height == other.height, format == other.format else { return false }
        let n = width * format.bytesPerPixel
        for y in 0..<height where memcmp(row(y), other.row(y), n) != 0 { return false }
        return true
    }
}

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif
