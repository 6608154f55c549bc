import CDarkroomJPEG
import CSPNG
import CWebP

#if canImport(Glibc)
    import Glibc
#endif

/// One PNG `tEXt` chunk (``EncodeOptions/pngText``).
public struct PNGText: Sendable, Hashable, Codable {
    /// 1–79 printable Latin-1 characters.
    public var keyword: String
    /// The text, written as its UTF-8 bytes.
    public var text: String

    /// Creates a chunk.
    public init(_ keyword: String, _ text: String) {
        self.keyword = keyword
        self.text = text
    }
}

/// Options for ``ImageEncoder``.
public struct EncodeOptions: Sendable, Hashable, Codable {
    /// Lossy quality 1–100 (JPEG, lossy WebP). Default 85.
    public var quality: Int
    /// WebP only: lossless instead of lossy. Default `false`.
    public var lossless: Bool
    /// JPEG only: write a progressive file. Default `false`.
    public var progressive: Bool
    /// AVIF only: the AV1 encoder's speed, 0 (slowest, smallest) to 10 (fastest). Default 8: a 256 px thumbnail
    /// in a few milliseconds at about the size speed 6 gives (docs/PERFORMANCE.md).
    public var speed: Int
    /// An ICC profile to embed (JPEG APP2, PNG iCCP, WebP ICCP, AVIF colr), typically
    /// ``DecodedImage/colorProfile`` from a decode with ``OutputColorSpace/original``. Default nil: the pixels are
    /// sRGB and no profile is written (AVIF then declares sRGB with CICP).
    public var colorProfile: [UInt8]?
    /// PNG only: `tEXt` chunks written before the image data, as (keyword, text) in order. Keywords are 1–79
    /// printable Latin-1 characters (the freedesktop thumbnail cache's `Thumb::URI`, `Thumb::MTime`, …); texts are
    /// written as their UTF-8 bytes. Default none.
    public var pngText: [PNGText] = []
    /// PNG only: zlib's compression level, 1 (fastest) to 9 (smallest). Default 6 (zlib's own default); a cache that
    /// writes many small thumbnails may trade a little size for time with a lower one.
    public var pngCompressionLevel = 6
    /// The color transparent pixels are flattened onto for formats without alpha (JPEG). Default white.
    public var background: (red: UInt8, green: UInt8, blue: UInt8) {
        get { (bgR, bgG, bgB) }
        set { (bgR, bgG, bgB) = newValue }
    }
    private var bgR: UInt8 = 255, bgG: UInt8 = 255, bgB: UInt8 = 255

    /// Creates options; omitted values take their documented defaults.
    public init(
        quality: Int = 85, lossless: Bool = false, progressive: Bool = false, speed: Int = 8,
        colorProfile: [UInt8]? = nil
    ) {
        self.quality = quality
        self.lossless = lossless
        self.progressive = progressive
        self.speed = speed
        self.colorProfile = colorProfile
    }
}

/// Encodes bitmaps to JPEG, PNG, WebP, AVIF, JPEG XL or ICO bytes.
///
/// Thread-safe and stateless. Cost: one pass over the pixels plus the codec; formats whose encoder wants a
/// different layout (straight alpha for PNG/WebP, flattened color for JPEG) convert one row at a time or,
/// for WebP's whole-image API, into one scratch copy.
public enum ImageEncoder {
    /// Encodes `bitmap` as `format`.
    /// - Throws: ``DarkroomImageError`` `.invalidArgument` (bad quality or speed; GIF, HEIC, TIFF, RAW, SVG or BMP
    ///   output; an ICO over 256 px), `.encodeFailed`.
    public static func encode(
        _ bitmap: Bitmap, as format: ImageFileFormat,
        options: EncodeOptions = EncodeOptions()
    ) throws(DarkroomImageError) -> [UInt8] {
        guard (1...100).contains(options.quality) else {
            throw DarkroomImageError(.invalidArgument, "quality must be 1...100, got \(options.quality)")
        }
        switch format {
        case .jpeg: return try encodeJPEG(bitmap, options)
        case .png: return try encodePNG(bitmap, options)
        case .webp: return try encodeWebP(bitmap, options)
        case .avif: return try encodeAVIF(bitmap, options)
        case .jxl: return try encodeJXL(bitmap, options)
        case .ico: return try encodeICO(bitmap, options)
        case .gif: throw DarkroomImageError(.invalidArgument, "GIF encoding is not supported; use PNG or WebP")
        case .heic: throw DarkroomImageError(.invalidArgument, "HEIC encoding is not supported; use AVIF")
        case .tiff, .raw, .svg, .bmp, .video:
            throw DarkroomImageError(
                .invalidArgument, "\(format.rawValue) encoding is not supported; use JPEG, PNG, WebP, AVIF or JPEG XL")
        }
    }

    /// A bitmap in BGRA8 premultiplied or Gray8 that the JPEG/WebP encoders accept directly.
    static func encodable(_ bitmap: Bitmap) throws(DarkroomImageError) -> Bitmap {
        switch bitmap.format {
        case .bgra8Premultiplied, .gray8: return bitmap
        case .rgba8: return try bitmap.converted(to: .bgra8Premultiplied)
        case .rgb565, .alpha8:
            throw DarkroomImageError(
                .invalidArgument, "\(bitmap.format.rawValue) bitmaps cannot be encoded; convert first")
        }
    }

    private static func encodeJPEG(_ source: Bitmap, _ options: EncodeOptions) throws(DarkroomImageError) -> [UInt8] {
        var bitmap = try encodable(source)
        if bitmap.format == .bgra8Premultiplied && !bitmap.isOpaque {
            bitmap = try flattened(bitmap, options.background)
        }
        var out: UnsafeMutablePointer<UInt8>?
        var size = 0
        var message = [CChar](repeating: 0, count: 256)
        let input = bitmap.format == .gray8 ? DR_JPEG_OUT_GRAY : DR_JPEG_OUT_BGRA
        let profile = options.colorProfile ?? []
        let status = profile.withUnsafeBufferPointer { icc in
            var settings = dr_jpeg_encode_options(
                quality: Int32(options.quality), progressive: options.progressive ? 1 : 0,
                optimize: 1, luma_h: 2, luma_v: 2, restart_rows: 0,
                icc: icc.baseAddress, icc_len: icc.count)
            return dr_jpeg_encode_with(
                bitmap.storage.baseAddress.assumingMemoryBound(to: UInt8.self), Int32(bitmap.width),
                Int32(bitmap.height), bitmap.bytesPerRow, Int32(input.rawValue), &settings,
                &out, &size, &message, message.count)
        }
        guard status == Int32(DR_JPEG_OK.rawValue), let out else {
            let codec = message.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
            throw DarkroomImageError(.encodeFailed, "JPEG encoding failed", codecMessage: codec)
        }
        defer { dr_jpeg_free(out) }
        return Array(UnsafeBufferPointer(start: out, count: size))
    }

    /// Composites premultiplied BGRA over an opaque background color.
    private static func flattened(_ bitmap: Bitmap, _ bg: (red: UInt8, green: UInt8, blue: UInt8))
        throws(DarkroomImageError) -> Bitmap
    {
        let out = try Bitmap(
            uninitializedWidth: bitmap.width, height: bitmap.height, format: .bgra8Premultiplied, isOpaque: true)
        let bgBGR = [Int(bg.blue), Int(bg.green), Int(bg.red)]
        for y in 0..<bitmap.height {
            let s = bitmap.row(y).assumingMemoryBound(to: UInt8.self)
            let d = out.row(y).assumingMemoryBound(to: UInt8.self)
            for x in 0..<bitmap.width {
                let inv = 255 - Int(s[4 * x + 3])
                for c in 0..<3 { d[4 * x + c] = UInt8(min(255, Int(s[4 * x + c]) + (bgBGR[c] * inv + 127) / 255)) }
                d[4 * x + 3] = 255
            }
        }
        return out
    }

    static func encodePNG(_ source: Bitmap, _ options: EncodeOptions) throws(DarkroomImageError) -> [UInt8] {
        let bitmap = try encodable(source)
        guard let ctx = spng_ctx_new(Int32(SPNG_CTX_ENCODER.rawValue)) else {
            throw DarkroomImageError(.outOfMemory, "could not create a PNG encoder")
        }
        defer { spng_ctx_free(ctx) }
        let gray = bitmap.format == .gray8
        let channels = gray ? 1 : (bitmap.isOpaque ? 3 : 4)
        var ihdr = spng_ihdr(
            width: UInt32(bitmap.width), height: UInt32(bitmap.height), bit_depth: 8,
            color_type: UInt8(gray ? 0 : (channels == 3 ? 2 : 6)), compression_method: 0,
            filter_method: 0, interlace_method: 0)
        func check(_ status: Int32) throws(DarkroomImageError) {
            guard status != 0 else { return }
            throw DarkroomImageError(
                .encodeFailed, "PNG encoding failed", codecMessage: spng_strerror(status).map { String(cString: $0) })
        }
        try check(spng_set_option(ctx, SPNG_ENCODE_TO_BUFFER, 1))
        try check(spng_set_option(ctx, SPNG_IMG_COMPRESSION_LEVEL, Int32(max(1, min(9, options.pngCompressionLevel)))))
        try check(spng_set_ihdr(ctx, &ihdr))
        // libspng keeps the profile pointer until the image is encoded: the copy lives for this whole call.
        let profileCopy = UnsafeMutableBufferPointer<CChar>.allocate(capacity: options.colorProfile?.count ?? 0)
        defer { profileCopy.deallocate() }
        if let profile = options.colorProfile, !profile.isEmpty {
            var iccp = spng_iccp()
            withUnsafeMutableBytes(of: &iccp.profile_name) { name in
                for (i, byte) in "ICC Profile".utf8.enumerated() { name[i] = byte }
            }
            for (i, byte) in profile.enumerated() { profileCopy[i] = CChar(bitPattern: byte) }
            iccp.profile_len = profile.count
            iccp.profile = profileCopy.baseAddress
            try check(spng_set_iccp(ctx, &iccp))
        }
        // libspng keeps the text pointers until the image is encoded too: the copies live for this whole call
        var chunks = [spng_text](repeating: spng_text(), count: options.pngText.count)
        defer { for chunk in chunks { free(chunk.text) } }
        for (i, entry) in options.pngText.enumerated() {
            let keyword = Array(entry.keyword.utf8)
            guard (1...79).contains(keyword.count) else {
                throw DarkroomImageError(.invalidArgument, "a PNG text keyword must be 1 to 79 bytes: \(entry.keyword)")
            }
            withUnsafeMutableBytes(of: &chunks[i].keyword) { name in
                for (j, byte) in keyword.enumerated() { name[j] = byte }
            }
            chunks[i].type = Int32(SPNG_TEXT.rawValue)
            chunks[i].text = strdup(entry.text)
            chunks[i].length = strlen(chunks[i].text)
        }
        if !chunks.isEmpty { try check(spng_set_text(ctx, &chunks, UInt32(chunks.count))) }
        try check(
            spng_encode_image(
                ctx, nil, 0, Int32(SPNG_FMT_PNG.rawValue),
                Int32(SPNG_ENCODE_PROGRESSIVE.rawValue | SPNG_ENCODE_FINALIZE.rawValue)))
        let rowBytes = bitmap.width * channels
        let row = try ScratchBuffer<UInt8>(count: rowBytes, zeroed: false)
        for y in 0..<bitmap.height {
            let s = bitmap.row(y).assumingMemoryBound(to: UInt8.self)
            switch channels {
            case 1: row.pointer.update(from: s, count: rowBytes)
            case 3:
                for x in 0..<bitmap.width {
                    row.pointer[3 * x] = s[4 * x + 2]
                    row.pointer[3 * x + 1] = s[4 * x + 1]
                    row.pointer[3 * x + 2] = s[4 * x]
                }
            default:
                PixelConversion.convertRow(s, from: .bgra8Premultiplied, row.pointer, to: .rgba8, width: bitmap.width)
            }
            let status = spng_encode_row(ctx, row.pointer, rowBytes)
            if status == Int32(SPNG_EOI.rawValue) { break }
            try check(status)
        }
        var length = 0
        var error: Int32 = 0
        guard let buffer = spng_get_png_buffer(ctx, &length, &error), error == 0 else {
            try check(error == 0 ? -1 : error)
            return []
        }
        defer { free(buffer) }
        return Array(UnsafeRawBufferPointer(start: buffer, count: length))
    }

    private static func encodeWebP(_ source: Bitmap, _ options: EncodeOptions) throws(DarkroomImageError) -> [UInt8] {
        var bitmap = try encodable(source)
        if bitmap.format == .gray8 || !bitmap.isOpaque {
            // libwebp wants straight alpha; gray is expanded.
            bitmap = try bitmap.converted(to: bitmap.format == .gray8 ? .bgra8Premultiplied : .rgba8)
        }
        var out: UnsafeMutablePointer<UInt8>?
        let w = Int32(bitmap.width)
        let h = Int32(bitmap.height)
        let stride = Int32(bitmap.bytesPerRow)
        let px = UnsafePointer(bitmap.storage.baseAddress.assumingMemoryBound(to: UInt8.self))
        let size: Int
        switch (bitmap.format, options.lossless) {
        case (.rgba8, false): size = WebPEncodeRGBA(px, w, h, stride, Float(options.quality), &out)
        case (.rgba8, true): size = WebPEncodeLosslessRGBA(px, w, h, stride, &out)
        case (_, false): size = WebPEncodeBGRA(px, w, h, stride, Float(options.quality), &out)
        case (_, true): size = WebPEncodeLosslessBGRA(px, w, h, stride, &out)
        }
        guard size > 0, let out else { throw DarkroomImageError(.encodeFailed, "WebP encoding failed") }
        defer { WebPFree(out) }
        let bitstream = UnsafeBufferPointer(start: out, count: size)
        guard let profile = options.colorProfile, !profile.isEmpty else { return Array(bitstream) }
        return try withICCP(bitstream, profile)
    }

    /// Re-wraps a WebP bitstream with an ICCP chunk (WebPMux writes the VP8X header that announces it).
    private static func withICCP(_ webp: UnsafeBufferPointer<UInt8>, _ profile: [UInt8]) throws(DarkroomImageError)
        -> [UInt8]
    {
        guard let mux = WebPMuxNew() else { throw DarkroomImageError(.outOfMemory, "could not create a WebP muxer") }
        defer { WebPMuxDelete(mux) }
        var image = WebPData(bytes: webp.baseAddress, size: webp.count)
        var assembled = WebPData()
        let status: WebPMuxError = profile.withUnsafeBufferPointer { icc in
            var chunk = WebPData(bytes: icc.baseAddress, size: icc.count)
            var status = WebPMuxSetImage(mux, &image, 1)
            if status == WEBP_MUX_OK { status = WebPMuxSetChunk(mux, "ICCP", &chunk, 1) }
            if status == WEBP_MUX_OK { status = WebPMuxAssemble(mux, &assembled) }
            return status
        }
        defer { WebPDataClear(&assembled) }
        guard status == WEBP_MUX_OK, let bytes = assembled.bytes else {
            throw DarkroomImageError(
                .encodeFailed, "WebP muxing of the ICC profile failed", codecMessage: "WebPMuxError \(status.rawValue)")
        }
        return Array(UnsafeBufferPointer(start: bytes, count: assembled.size))
    }
}
