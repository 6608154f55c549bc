// STUB: replaced by the resampler implementation (helper). Signatures are the contract.

/// A rectangle in source pixel coordinates (fractional).
struct SourceRect: Sendable, Hashable {
    var x: Double, y: Double, width: Double, height: Double
}

/// Where resampled rows go: `height` rows of `width` pixels with `channels` bytes each, row y at base + y*bytesPerRow.
struct PixelRows {
    var base: UnsafeMutableRawPointer
    var width: Int
    var height: Int
    var bytesPerRow: Int
}

/// Streams source rows top to bottom into a high-quality downscale/upscale of `sourceRect` onto `destination`.
final class RowResampler {
    /// Source rows that influence some output row; rows outside may be skipped (never fed).
    let requiredSourceRows: Range<Int>

    init(sourceWidth: Int, sourceHeight: Int, channels: Int, sourceRect: SourceRect, destination: PixelRows,
         filter: ResamplingFilter, alphaChannel: Int?) throws(DarkroomImageError) {
        requiredSourceRows = 0..<sourceHeight
    }

    /// Feeds source row `y` (`sourceWidth × channels` bytes). Rows must come in increasing order.
    func consume(row: UnsafeRawPointer, y: Int) {}

    /// Writes every output row not yet written. Call once after the last required row.
    func finish() {}
}
