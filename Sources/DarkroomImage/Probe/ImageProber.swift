import DarkroomSupport

/// Reads an encoded image's header without decoding pixels.
///
/// The format comes from magic bytes only, never from a file name or MIME type. Probing reads header
/// structures (JPEG markers up to the frame header, PNG chunks up to the first IDAT, WebP chunks, GIF blocks),
/// takes microseconds and allocates nothing per marker or chunk. Damaged EXIF is ignored (orientation
/// ``ExifOrientation/up``); everything else that is malformed throws.
///
/// Size limits (``DecodeLimits/maxDimension``, ``DecodeLimits/maxSourcePixels``) are the decoder's to enforce:
/// a probe reports the stored size as it is. The probe does enforce ``DecodeLimits/maxInputBytes`` and
/// ``DecodeLimits/maxFrames``.
///
/// A namespace without state, one file per container format (`ImageProber+JPEG.swift`, `+PNG`, `+WebP`, `+GIF`,
/// files, animation timing): the whole is long because the formats are many, and each reader stays small.
public enum ImageProber {
    /// The format named by the first bytes, or nil when they match no supported format.
    ///
    /// JPEG is `FF D8 FF`, PNG its 8-byte signature, WebP `RIFF????WEBP`, GIF `GIF87a` or `GIF89a`; HEIC and
    /// AVIF an ISO BMFF `ftyp` box whose brands name them (`isoBrandFormat(_:)`).
    public static func format(of bytes: UnsafeRawBufferPointer) -> ImageFileFormat? {
        let reader = ByteReader(bytes)
        if let isobmff = isoBrandFormat(reader) { return isobmff }
        if VideoSignature.matches(reader) { return .video }
        if let a = try? reader.u16be(0), a == 0xFFD8, let b = try? reader.u8(2), b == 0xFF { return .jpeg }
        if let a = try? reader.u16be(0), a == 0xFF0A { return .jxl }  // a bare JPEG XL codestream
        if JXLDecoder.hasContainerSignature(reader) { return .jxl }
        if let raw = RAWDecoder.signatureFormat(reader) { return raw }
        if let a = try? reader.u16be(0), a == 0x424D, let header = try? reader.u32le(14),
            [12, 16, 40, 52, 56, 64, 108, 124].contains(header)
        {
            return .bmp
        }
        if ICODecoder.looksLikeICO(reader) { return .ico }
        if SVGDecoder.looksLikeSVG(reader) { return .svg }
        guard let head = try? reader.u32be(0) else { return nil }
        switch head {
        case 0x8950_4E47:  // "\x89PNG"
            if let tail = try? reader.u32be(4), tail == 0x0D0A_1A0A { return .png }
        case 0x5249_4646:  // "RIFF"
            if let tag = try? reader.u32be(8), tag == 0x5745_4250 { return .webp }  // "WEBP"
        case 0x4749_4638:  // "GIF8"
            if let version = try? reader.u16be(4), version == 0x3761 || version == 0x3961 { return .gif }  // 7a, 9a
        default:
            break
        }
        // Last, a bare DIB (a BMP without its file header, as the clipboard and some exporters write it)
        return DIBReader.looksLikeBareDIB(reader) ? .bmp : nil
    }

    /// Probes an in-memory image. Reads only the header structures; decodes no pixels.
    ///
    /// - Throws: ``DarkroomImageError`` with code `.empty` for no bytes, `.unsupportedFormat` for unknown
    ///   magic bytes, `.truncated` when the data ends inside the header, `.corrupt` for malformed structures,
    ///   `.unsupportedFeature` for a JPEG whose size is only given later (DNL), and `.limitExceeded` when the
    ///   input is larger than ``DecodeLimits/maxInputBytes`` or has more than ``DecodeLimits/maxFrames`` frames.
    public static func probe(_ bytes: UnsafeRawBufferPointer, limits: DecodeLimits = .default)
        throws(DarkroomImageError) -> ImageProbe
    {
        try probe(bytes, limits: limits, page: 0)
    }

    /// Probes an in-memory image, describing page `page` of a multi-page file (TIFF).
    static func probe(_ bytes: UnsafeRawBufferPointer, limits: DecodeLimits, page: Int)
        throws(DarkroomImageError) -> ImageProbe
    {
        guard !bytes.isEmpty else { throw DarkroomImageError(.empty, "the image data is empty") }
        guard bytes.count <= limits.maxInputBytes else {
            throw DarkroomImageError(
                .limitExceeded, "the input is \(bytes.count) bytes, over the limit of \(limits.maxInputBytes)")
        }
        do throws(ProbeStop) {
            return try parse(bytes, isComplete: true, limits: limits, page: page)
        } catch {
            switch error {
            case .failed(let failure): throw failure
            case .needMoreData: throw truncatedError(count: bytes.count)
            }
        }
    }

    /// Probes a byte array. See ``probe(_:limits:)-(UnsafeRawBufferPointer,_)``.
    public static func probe(_ bytes: [UInt8], limits: DecodeLimits = .default) throws(DarkroomImageError)
        -> ImageProbe
    {
        try bytes.withBytes { (raw) throws(DarkroomImageError) in try probe(raw, limits: limits) }
    }

    /// Probes a file, reading a prefix and more only when the header needs it.
    ///
    /// Reads a 64 KiB prefix with POSIX `pread`; when the header continues past it (a large EXIF or ICC segment
    /// before a JPEG frame header, GIF or animated WebP frames to count), reads a prefix twice as long, and so on
    /// up to the whole file.
    ///
    /// - Throws: ``DarkroomImageError`` as `probe(_:limits:)` does, `.limitExceeded` for a file larger than
    ///   ``DecodeLimits/maxInputBytes``, and `.io` (with the system's error text) when the file cannot be read.
    public static func probe(fileAt path: String, limits: DecodeLimits = .default)
        throws(DarkroomImageError) -> ImageProbe
    {
        try probeFile(atPath: path, limits: limits).probe
    }

    /// Detects the format and runs its parser over `bytes`.
    ///
    /// - Parameter isComplete: whether `bytes` is the whole input rather than a prefix of it.
    /// - Throws: ``ProbeStop/needMoreData(atLeast:)`` when `bytes` ends inside the header.
    static func parse(_ bytes: UnsafeRawBufferPointer, isComplete: Bool, limits: DecodeLimits, page: Int = 0)
        throws(ProbeStop) -> ImageProbe
    {
        let reader = ByteReader(bytes)
        switch format(of: bytes) {
        case .jpeg: return try probeJPEG(reader)
        case .png: return try probePNG(reader, isComplete: isComplete, limits: limits)
        case .webp: return try probeWebP(reader, limits: limits)
        case .gif: return try probeGIF(reader, isComplete: isComplete, limits: limits)
        case .heic: return try HEIFDecoder.probe(bytes, isComplete: isComplete, limits: limits)
        case .avif: return try AVIFDecoder.probe(bytes, isComplete: isComplete, limits: limits)
        case .jxl: return try JXLDecoder.probe(bytes, isComplete: isComplete, limits: limits)
        case .tiff: return try TIFFDecoder.probe(bytes, isComplete: isComplete, page: page, limits: limits)
        case .raw: return try RAWDecoder.probe(bytes, isComplete: isComplete, limits: limits)
        case .svg: return try SVGDecoder.probe(bytes, isComplete: isComplete, limits: limits)
        case .bmp: return try BMPDecoder.probe(reader)
        case .ico: return try ICODecoder.probe(reader)
        case .video:
            throw .failed(
                DarkroomImageError(
                    .unsupportedFormat,
                    "the data is a video (\(VideoSignature.containerName(reader))): DarkroomVideo's VideoDecoder reads it"
                ))
        case nil:
            if let needed = signaturePrefixLength(reader) { throw .needMoreData(atLeast: needed) }
            throw .failed(
                DarkroomImageError(
                    .unsupportedFormat,
                    "the data is not JPEG, PNG, WebP, GIF, HEIC, AVIF, JPEG XL, TIFF, a camera RAW, SVG, BMP or ICO"))
        }
    }

    /// HEIC or AVIF from an ISO BMFF `ftyp` box: the major brand, else the compatible brands (`mif1`/`msf1`
    /// files name the codec there). AVIF brands are `avif`/`avis`; HEIC brands `heic`, `heix`, `heim`, `heis`,
    /// `hevc`, `hevx`, `hevm`, `hevs`.
    static func isoBrandFormat(_ reader: ByteReader) -> ImageFileFormat? {
        // The first box must be "ftyp" (0x66747970).
        guard let size = try? reader.u32be(0), let type = try? reader.u32be(4), type == 0x6674_7970 else { return nil }
        func classify(_ brand: Int) -> ImageFileFormat? {
            switch brand {
            case 0x6176_6966, 0x6176_6973: .avif  // avif, avis
            case 0x6372_7820: .raw  // "crx ": Canon CR3
            case 0x6865_6963, 0x6865_6978, 0x6865_696D, 0x6865_6973, 0x6865_7663, 0x6865_7678, 0x6865_766D, 0x6865_7673:
                .heic
            default: nil
            }
        }
        guard let major = try? reader.u32be(8) else { return nil }
        if let format = classify(major) { return format }
        var offset = 16
        while offset + 4 <= min(size, reader.count, 4096) {
            if let brand = try? reader.u32be(offset), let format = classify(brand) { return format }
            offset += 4
        }
        return nil
    }

    /// When all of `reader`'s bytes are the start of some format's magic bytes, the length that magic needs.
    /// Only runs on inputs too short to name a format, so its small allocation does not matter.
    private static func signaturePrefixLength(_ reader: ByteReader) -> Int? {
        let signatures: [(magic: [UInt8], needed: Int)] = [
            ([0xFF, 0xD8, 0xFF], 3),
            ([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A], 8),
            ([0x52, 0x49, 0x46, 0x46], 12),  // "RIFF", then the size and "WEBP"
            ([0x47, 0x49, 0x46, 0x38, 0x37, 0x61], 6),  // "GIF87a"
            ([0x47, 0x49, 0x46, 0x38, 0x39, 0x61], 6),  // "GIF89a"
            ([0x49, 0x49, 0x2A, 0x00], 4), ([0x4D, 0x4D, 0x00, 0x2A], 4),  // TIFF
            ([0x42, 0x4D], 18),  // "BM" and the DIB header's size
        ]
        for (magic, needed) in signatures where reader.count < needed {
            if reader.matches(magic.prefix(reader.count), at: 0) { return needed }
        }
        return nil
    }

    /// The `.truncated` error for an input that ends inside its header.
    static func truncatedError(count: Int) -> DarkroomImageError {
        DarkroomImageError(.truncated, "the image data ends after \(count) bytes, inside its header")
    }
}
