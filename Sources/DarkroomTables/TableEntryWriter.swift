import DarkroomImage
import DarkroomSupport

/// Write access to one entry's memory, handed to the draw closure of ``ImageTable/set(entity:source:draw:)``.
///
/// The closure returns the bitmap that becomes the entry. Return one made by `decode(_:mode:decoder:options:)`
/// or ``canvas(width:height:isOpaque:)`` and nothing is copied: its rows already are the entry's memory, a
/// read-write mapping of the table file. Return any other bitmap (at most the format's size) and it is converted
/// to the format's pixel format if needed and copied in (one pass). Do not keep the writer or its bitmaps after
/// the closure returns: the entry's pixels must not change once it is committed (a leaked bitmap keeps the slot
/// pinned, so the table never reuses it, but writes through it would change what readers see).
public struct TableEntryWriter {
    /// The table's format: the largest size the entry can hold, and its pixel format.
    public let format: ImageTableFormat
    /// Bytes from one row of the entry to the next (a multiple of 64).
    public var bytesPerRow: Int { layout.bytesPerRow }

    let layout: TableLayout
    let storage: TableEntryStorage

    struct Placed {
        var width: Int
        var height: Int
        var isOpaque: Bool
    }

    /// A bitmap over the entry's memory of `width × height` (default: the format's size) to draw into by hand.
    /// Its contents are undefined (bytes of an earlier entry): write every pixel. Zero-copy when returned.
    /// - Throws: `.invalidArgument` for a size outside 1...the format's size.
    public func canvas(width: Int? = nil, height: Int? = nil, isOpaque: Bool) throws(ImageTableError) -> Bitmap {
        let w = width ?? layout.width
        let h = height ?? layout.height
        guard (1...layout.width).contains(w), (1...layout.height).contains(h) else {
            throw ImageTableError(
                .invalidArgument, "a canvas must be 1×1...\(layout.width)×\(layout.height), got \(w)×\(h)")
        }
        do {
            return try Bitmap(
                width: w, height: h, format: layout.pixelFormat, bytesPerRow: layout.bytesPerRow,
                isOpaque: isOpaque, storage: storage)
        } catch {
            throw ImageTableError(.invalidArgument, "cannot make a \(w)×\(h) canvas", underlying: error)
        }
    }

    /// Decodes `bytes` (JPEG, PNG, WebP, GIF) straight into the entry: downsampled to the format's size with
    /// `mode` (never upscaled unless `options.geometry.allowsUpscaling`), in the format's pixel format, upright. The codec
    /// (or, when a format conversion or rotation is needed, that last pass) writes its rows into the mapping.
    /// `options.geometry.size` and `options.geometry.pixelFormat` are overridden; the rest (filter, limits, orientation) apply.
    /// Cost: one thumbnail decode (see `docs/PERFORMANCE.md`); memory: the decoder's few working rows.
    /// - Throws: `DarkroomImageError` from the decoder.
    public func decode(
        _ bytes: UnsafeRawBufferPointer, mode: TableContentMode = .fill,
        decoder: ImageDecoder = ImageDecoder(),
        options: DecodeOptions = DecodeOptions()
    ) throws(DarkroomImageError) -> Bitmap {
        var options = options
        options.geometry.size =
            mode == .fill
            ? .fill(width: layout.width, height: layout.height)
            : .fit(width: layout.width, height: layout.height)
        options.geometry.pixelFormat = .exactly(layout.pixelFormat)
        let storage = self.storage
        let bytesPerRow = layout.bytesPerRow
        let maxW = layout.width
        let maxH = layout.height
        return try decoder.decode(
            bytes, options: options,
            into: {
                (w: Int, h: Int, format: PixelFormat, opaque: Bool) throws(DarkroomImageError) -> Bitmap in
                guard w <= maxW, h <= maxH else {
                    throw DarkroomImageError(
                        .invalidArgument, "a \(w)×\(h) decode does not fit a \(maxW)×\(maxH) entry")
                }
                return try Bitmap(
                    width: w, height: h, format: format, bytesPerRow: bytesPerRow, isOpaque: opaque, storage: storage)
            }
        ).bitmap
    }

    /// ``decode(_:mode:decoder:options:)-(UnsafeRawBufferPointer,_,_,_)`` for a byte array.
    public func decode(
        _ bytes: [UInt8], mode: TableContentMode = .fill, decoder: ImageDecoder = ImageDecoder(),
        options: DecodeOptions = DecodeOptions()
    ) throws(DarkroomImageError) -> Bitmap {
        try bytes.withBytes { (raw) throws(DarkroomImageError) in
            try decode(raw, mode: mode, decoder: decoder, options: options)
        }
    }

    /// Makes `bitmap` the entry's pixels: nothing to do when it already lives in the entry, else convert and copy.
    func place(_ bitmap: Bitmap) throws(ImageTableError) -> Placed {
        guard bitmap.width <= layout.width, bitmap.height <= layout.height else {
            throw ImageTableError(
                .invalidArgument,
                "the drawn bitmap is \(bitmap.width)×\(bitmap.height), larger than the format's \(layout.width)×\(layout.height)"
            )
        }
        if bitmap.storage === storage {
            guard bitmap.format == layout.pixelFormat, bitmap.bytesPerRow == layout.bytesPerRow else {
                throw ImageTableError(
                    .invalidArgument, "a bitmap over the entry's memory must use the entry's format and row stride")
            }
            return Placed(width: bitmap.width, height: bitmap.height, isOpaque: bitmap.isOpaque)
        }
        let source: Bitmap
        do { source = try bitmap.converted(to: layout.pixelFormat) } catch {
            throw ImageTableError(
                .invalidArgument, "cannot convert a \(bitmap.format.rawValue) bitmap to \(layout.pixelFormat.rawValue)",
                underlying: error)
        }
        let rowBytes = source.width * layout.pixelFormat.bytesPerPixel
        for y in 0..<source.height {
            (storage.baseAddress + y * layout.bytesPerRow).copyMemory(from: source.row(y), byteCount: rowBytes)
        }
        return Placed(
            width: source.width, height: source.height, isOpaque: source.isOpaque || !layout.pixelFormat.hasAlpha)
    }
}
