/// Supplies the memory a decode writes its final pixels into: ``ImageDecoder/decode(_:options:into:)`` calls it
/// at most once, with the output's width, height, pixel format and opacity, before any row of the final image is
/// written. It must return a bitmap of exactly that width, height and format (any 64-byte-aligned `bytesPerRow`
/// large enough); the decoder then writes rows straight into it (no copy when the codec's output is final, one
/// conversion or orientation pass into it otherwise). This is how image tables decode into a memory mapping.
public typealias BitmapAllocator =
    (_ width: Int, _ height: Int, _ format: PixelFormat, _ isOpaque: Bool) throws(DarkroomImageError) -> Bitmap

extension Bitmap {
    /// The default ``BitmapAllocator``: uninitialized, 64-byte-aligned heap memory counted by ``PixelMemory``.
    package static func allocateOnHeap(width: Int, height: Int, format: PixelFormat, isOpaque: Bool)
        throws(DarkroomImageError)
        -> Bitmap
    {
        try Bitmap(uninitializedWidth: width, height: height, format: format, isOpaque: isOpaque)
    }

    /// Calls `allocate` and checks that it kept its promise (the exact geometry asked for).
    /// - Throws: whatever `allocate` throws, or `.invalidArgument` for a bitmap of another size or format.
    package static func allocate(
        _ width: Int, _ height: Int, _ format: PixelFormat, _ isOpaque: Bool,
        using allocate: BitmapAllocator
    ) throws(DarkroomImageError) -> Bitmap {
        let bitmap = try allocate(width, height, format, isOpaque)
        guard bitmap.width == width, bitmap.height == height, bitmap.format == format else {
            throw DarkroomImageError(
                .invalidArgument,
                "the allocator returned \(bitmap.width)×\(bitmap.height) \(bitmap.format.rawValue) for \(width)×\(height) \(format.rawValue)"
            )
        }
        return bitmap
    }
}

extension Bitmap {
    /// A copy of these pixels in memory `allocate` supplies (checked as ``allocate(_:_:_:_:using:)`` checks it): for
    /// a decode whose pixels were made elsewhere (a custom decoder, a worker process). One pass over the rows.
    func copied(using allocate: BitmapAllocator) throws(DarkroomImageError) -> Bitmap {
        let copy = try Bitmap.allocate(width, height, format, isOpaque, using: allocate)
        for y in 0..<height { copy.row(y).copyMemory(from: row(y), byteCount: width * format.bytesPerPixel) }
        return copy
    }
}
