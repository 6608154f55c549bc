/// A decoder for one or more encoded formats: the seam for plugging in codecs Darkroom does not ship.
///
/// A conformer turns encoded bytes into a bitmap that honours ``DecodeOptions`` (size, orientation, pixel
/// format, limits). It must be safe to call from several threads at once and must throw
/// ``DarkroomImageError`` for bad input rather than crash.
public protocol ImageDecoding: Sendable {
    /// Whether this decoder handles an image with this header.
    func canDecode(_ probe: ImageProbe) -> Bool
    /// Decodes `bytes`, whose header is `probe`, into an upright bitmap of the requested size and format.
    func decode(_ bytes: UnsafeRawBufferPointer, probe: ImageProbe, options: DecodeOptions) throws(DarkroomImageError)
        -> Bitmap
    /// Reads the header of data the built-in prober recognizes but does not read (``ImageFileFormat/video``), or
    /// returns nil when this decoder does not read it either. The default returns nil.
    func probe(_ bytes: UnsafeRawBufferPointer, limits: DecodeLimits) throws(DarkroomImageError) -> ImageProbe?
    /// Reads the header of the file at `path`, whose first bytes name `format` (one the built-in prober recognizes
    /// but does not read: ``ImageFileFormat/video``), reading only what it needs; or returns nil when this decoder
    /// does not read it. The default returns nil.
    func probe(fileAt path: String, format: ImageFileFormat, limits: DecodeLimits) throws(DarkroomImageError)
        -> ImageProbe?
    /// Decodes the file at `path`, whose first bytes name `format` (one the built-in prober recognizes but does not
    /// read: ``ImageFileFormat/video``), reading only what it needs; or returns nil to have the file read whole and
    /// passed to ``decode(_:probe:options:)``. The default returns nil.
    func decode(fileAt path: String, format: ImageFileFormat, options: DecodeOptions) throws(DarkroomImageError)
        -> DecodedImage?
    /// Decodes the file `ranges` reads where it lies (a remote video), whose first bytes name `format` (one the
    /// built-in prober recognizes but does not read: ``ImageFileFormat/video``), reading only the ranges it needs; or
    /// returns nil when this decoder does not read it. The default returns nil.
    func decode(ranges: any ByteRangeReading, format: ImageFileFormat, options: DecodeOptions)
        throws(DarkroomImageError) -> DecodedImage?
    /// Reads the header of the file `ranges` reads where it lies, whose first bytes name `format`, reading only the
    /// ranges the header needs; or returns nil when this decoder does not read it. The default returns nil.
    func probe(ranges: any ByteRangeReading, format: ImageFileFormat, limits: DecodeLimits)
        throws(DarkroomImageError) -> ImageProbe?
}

extension ImageDecoding {
    /// Reads nothing: a decoder of formats the built-in prober reads needs no probe of its own.
    public func probe(_ bytes: UnsafeRawBufferPointer, limits: DecodeLimits) throws(DarkroomImageError) -> ImageProbe? {
        nil
    }

    /// Reads nothing: a decoder of formats the built-in prober reads needs no probe of its own.
    public func probe(fileAt path: String, format: ImageFileFormat, limits: DecodeLimits) throws(DarkroomImageError)
        -> ImageProbe?
    {
        nil
    }

    /// Reads nothing itself: the file is read whole and decoded from its bytes.
    public func decode(fileAt path: String, format: ImageFileFormat, options: DecodeOptions)
        throws(DarkroomImageError) -> DecodedImage?
    {
        nil
    }

    /// Reads no ranges: the file is read whole (within `DecodeLimits/maxInputBytes`) and probed from its bytes.
    public func probe(ranges: any ByteRangeReading, format: ImageFileFormat, limits: DecodeLimits)
        throws(DarkroomImageError) -> ImageProbe?
    {
        nil
    }

    /// Reads no ranges: the file is read whole (within `DecodeLimits/maxInputBytes`) and decoded from its bytes.
    public func decode(ranges: any ByteRangeReading, format: ImageFileFormat, options: DecodeOptions)
        throws(DarkroomImageError) -> DecodedImage?
    {
        nil
    }
}

/// What a built-in codec hands back before orientation and format conversion.
struct CodecOutput {
    /// Pixels in the stored orientation, in ``format`` (a working format: BGRA8 premultiplied or Gray8).
    var bitmap: Bitmap
    /// The shrink-on-load denominator the codec used (1 when none).
    var shrinkDenominator: Int = 1
    /// Whether ``bitmap``'s four bytes per pixel are C, M, Y, K (a CMYK or YCCK JPEG), still to be converted.
    var isCMYK = false
    /// The file's colour description when the codec read it on the way (HEIF, AVIF); nil to read it from the bytes.
    var colorReading: ColorReading?
    /// Whether the codec decoded an embedded thumbnail instead of the primary image (HEIC).
    var usedEmbeddedThumbnail = false
}

extension CodecOutput {
    /// A PQ or HLG image tone-mapped to sRGB by its codec, described by `color` (marked converted, so colour
    /// management leaves it alone).
    static func toneMapped(_ bitmap: Bitmap, shrinkDenominator: Int, color: ColorReading) -> CodecOutput {
        var reading = color
        reading.convertedByCodec = true
        return CodecOutput(bitmap: bitmap, shrinkDenominator: shrinkDenominator, colorReading: reading)
    }
}

/// A built-in codec: decodes to the plan's size in the stored orientation; ``ImageDecoder`` applies the
/// orientation and the final pixel format.
protocol CodecDecoder: Sendable {
    var format: ImageFileFormat { get }
    /// `allocate` supplies the output bitmap (called once, with the plan's output size and `working` format).
    func decode(
        _ bytes: UnsafeRawBufferPointer, probe: ImageProbe, plan: DecodePlan, working: PixelFormat,
        options: DecodeOptions, allocate: BitmapAllocator
    ) throws(DarkroomImageError) -> CodecOutput
}

/// Feeds rows of a working format to a resampler or straight into a bitmap of the plan's size: the common
/// tail of every codec. Rows arrive top to bottom in the stored orientation.
struct RowDestination {
    let bitmap: Bitmap
    private let resampler: RowResampler?

    /// Rows the destination needs; a codec may skip the others.
    var requiredRows: Range<Int>

    /// Prepares a destination for a source of `width × height` rows (already shrunk by the codec, if it can).
    init(
        plan: DecodePlan, sourceWidth width: Int, sourceHeight height: Int, format: PixelFormat,
        isOpaque: Bool, filter: ResamplingFilter, allocate: BitmapAllocator
    ) throws(DarkroomImageError) {
        bitmap = try Bitmap.allocate(plan.outputWidth, plan.outputHeight, format, isOpaque, using: allocate)
        if plan.isIdentity(width: width, height: height) {
            resampler = nil
            requiredRows = 0..<height
        } else {
            let rows = PixelRows(
                base: bitmap.storage.baseAddress, width: bitmap.width, height: bitmap.height,
                bytesPerRow: bitmap.bytesPerRow)
            let r = try RowResampler(
                sourceWidth: width, sourceHeight: height, channels: format.bytesPerPixel,
                sourceRect: plan.sourceRect(scaledTo: width, height), destination: rows,
                filter: filter, alphaChannel: format == .bgra8Premultiplied && !isOpaque ? 3 : nil)
            resampler = r
            requiredRows = r.requiredSourceRows
        }
    }

    /// Whether rows can be written straight into ``bitmap`` (no resampling).
    var isDirect: Bool { resampler == nil }

    /// Takes source row `y`. For a direct destination this copies into the bitmap; codecs that can should
    /// instead decode straight into `bitmap.row(y)` and skip this call.
    func consume(row: UnsafeRawPointer, y: Int) {
        if let resampler {
            resampler.consume(row: row, y: y)
        } else if y < bitmap.height {
            bitmap.row(y).copyMemory(from: row, byteCount: bitmap.width * bitmap.format.bytesPerPixel)
        }
    }

    /// Completes the output.
    func finish() -> Bitmap {
        resampler?.finish()
        return bitmap
    }
}
