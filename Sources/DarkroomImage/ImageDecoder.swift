import DarkroomSupport

/// What `ImageDecoder.decode(_:options:)` returns: the bitmap and what was learned on the way.
public struct DecodedImage: Sendable {
    /// The upright, display-ready pixels.
    public var bitmap: Bitmap
    /// The source's header.
    public var probe: ImageProbe
    /// The codec's shrink-on-load denominator (JPEG DCT scaling: 1, 2, 4 or 8; 1 when the codec decoded at full size).
    public var shrinkDenominator: Int
    /// With ``OutputColorSpace/original``: the ICC profile the pixels are in, to write back out when encoding
    /// (nil when the source has none, or its pixels had to be converted, as CMYK always is).
    public var colorProfile: ColorProfile?
    /// Whether the pixels were converted from the source's colour space to sRGB.
    public var convertedToSRGB: Bool
    /// Why the source's colour description was ignored (the image was then treated as sRGB); worth a log line.
    public var colorProblem: String?
    /// Whether an embedded thumbnail (a HEIC thumbnail item) was decoded instead of the primary image.
    public var usedEmbeddedThumbnail = false

    /// Creates a result.
    public init(
        bitmap: Bitmap, probe: ImageProbe, shrinkDenominator: Int, colorProfile: ColorProfile? = nil,
        convertedToSRGB: Bool = false, colorProblem: String? = nil
    ) {
        self.bitmap = bitmap
        self.probe = probe
        self.shrinkDenominator = shrinkDenominator
        self.colorProfile = colorProfile
        self.convertedToSRGB = convertedToSRGB
        self.colorProblem = colorProblem
    }
}

/// Decodes JPEG, PNG, WebP, GIF (first frame), HEIC, AVIF, JPEG XL, TIFF, camera RAW, SVG, BMP and ICO into
/// display-ready sRGB bitmaps at the size they will be shown.
///
/// A value type holding no state but its decoders: create one and share it across threads. Each call probes
/// the header, checks ``DecodeLimits`` before allocating, shrinks on load where the codec can (JPEG DCT
/// scaling, WebP scaled decode, a HEIC thumbnail item), streams rows through one high-quality resample, converts
/// the small result to sRGB with the embedded colour profile (``DecodeOptions/colorSpace``), then applies
/// orientation and pixel format. Memory: the output bitmap plus a few rows, except for formats that need a full frame (GIF,
/// animated WebP, Adam7 PNG; bounded by ``DecodeLimits/maxDecodedBytes``) and progressive JPEG (libjpeg keeps
/// the coefficients of the whole image, about 2 bytes per sample).
public struct ImageDecoder: Sendable {
    /// Decoders consulted before the built-in ones, in order (in this process: an ``isolation`` decodes with its
    /// own).
    public var customDecoders: [any ImageDecoding]
    /// Where decodes of bytes and files run instead of this process (``DecodeIsolation``); nil decodes here.
    /// Probes, embedded thumbnails and a remote video's ranges stay in this process. Default nil.
    public var isolation: (any DecodeIsolation)?

    private let codecs: [any CodecDecoder] = [
        JPEGDecoder(), PNGDecoder(), WebPDecoder(), GIFDecoder(), HEIFDecoder(),
        AVIFDecoder(), JXLDecoder(), TIFFDecoder(), RAWDecoder(), SVGDecoder(), BMPDecoder(), ICODecoder(),
    ]

    /// Creates a decoder; `customDecoders` are tried first; `isolation`, when given, runs the decodes.
    public init(customDecoders: [any ImageDecoding] = [], isolation: (any DecodeIsolation)? = nil) {
        self.customDecoders = customDecoders
        self.isolation = isolation
    }

    /// Decodes in-memory bytes. Thread-safe; allocates only the output and a few working rows (see type docs).
    /// - Throws: ``DarkroomImageError`` for empty, unsupported, corrupt, truncated or over-limit input.
    public func decode(_ bytes: UnsafeRawBufferPointer, options: DecodeOptions = DecodeOptions())
        throws(DarkroomImageError) -> DecodedImage
    {
        if let isolation { return try isolation.decode(bytes, options: options) }
        return try decode(bytes, options: options, into: Bitmap.allocateOnHeap)
    }

    /// Decodes in-memory bytes into memory `allocate` supplies (for example a memory-mapped table entry).
    ///
    /// `allocate` is called at most once, for the final bitmap; stages before it (a pixel-format conversion or
    /// the orientation transform, when needed) use small heap bitmaps. When the codec's output is final (no
    /// conversion, upright source) the codec writes its rows straight into the supplied memory. A custom decoder's
    /// result is copied into it. Thread-safe as ``decode(_:options:)-(UnsafeRawBufferPointer,_)``.
    /// - Throws: ``DarkroomImageError`` as the other overload, whatever `allocate` throws, and `.invalidArgument`
    ///   when `allocate` returns a bitmap of another size or format.
    public func decode(
        _ bytes: UnsafeRawBufferPointer, options: DecodeOptions,
        into allocate: BitmapAllocator
    ) throws(DarkroomImageError) -> DecodedImage {
        if let isolation {
            var decoded = try isolation.decode(bytes, options: options)
            decoded.bitmap = try decoded.bitmap.copied(using: allocate)
            return decoded
        }
        guard !bytes.isEmpty else { throw DarkroomImageError(.empty, "the input is empty") }
        guard bytes.count <= options.limits.maxInputBytes else {
            throw DarkroomImageError(
                .limitExceeded,
                "input of \(bytes.count) bytes exceeds maxInputBytes (\(options.limits.maxInputBytes))")
        }
        let probe = try probe(bytes, limits: options.limits, page: options.geometry.page)
        try Self.checkSource(probe, options.limits)
        guard options.geometry.page == 0 || probe.pageCount > 1 else {
            throw DarkroomImageError(
                .invalidArgument, "page \(options.geometry.page) asked of a \(probe.format.rawValue) with one page")
        }
        if let custom = customDecoders.first(where: { $0.canDecode(probe) }) {
            let decoded = try custom.decode(bytes, probe: probe, options: options)
            return DecodedImage(bitmap: try decoded.copied(using: allocate), probe: probe, shrinkDenominator: 1)
        }
        guard let codec = codecs.first(where: { $0.format == probe.format }) else {
            throw DarkroomImageError(.unsupportedFormat, "no decoder for \(probe.format.rawValue)")
        }
        return try decode(.bytes(bytes, codec), probe: probe, options: options, into: allocate)
    }

    /// What the codec step reads: bytes with the format's decoder, or a TIFF file libtiff reads itself.
    enum CodecInput {
        case bytes(UnsafeRawBufferPointer, any CodecDecoder)
        case tiffFile(TIFFDecoder.Handle)
    }

    /// The decode after the probe: plans it, runs the codec over `input`, then manages colour, converts the pixel
    /// format and turns the image upright.
    func decode(_ input: CodecInput, probe: ImageProbe, options: DecodeOptions, into allocate: BitmapAllocator)
        throws(DarkroomImageError) -> DecodedImage
    {
        let bytes: UnsafeRawBufferPointer
        switch input {
        case .bytes(let b, _): bytes = b
        case .tiffFile: bytes = UnsafeRawBufferPointer(start: nil, count: 0)  // the codec reads the colour itself
        }
        var options = options
        // A JPEG in a wide-gamut profile: read its colour first, since the conversion magnifies DCT-scaling errors
        // (see ImageDecoder+Color); the codec then shrinks on load less.
        let colorReading = Self.readColorEarly(bytes, probe: probe, options: &options)
        let plan = try options.geometry.plan(for: probe)
        let final = Self.outputFormat(probe, options.geometry.pixelFormat)
        // Decode gray sources as gray unless BGRA was asked for; color sources as BGRA unless gray was.
        let grayIsEnough = final == .gray8 || (probe.isGrayscale && !probe.hasAlpha && final != .bgra8Premultiplied)
        let working: PixelFormat = grayIsEnough ? .gray8 : .bgra8Premultiplied
        let outBytes = plan.outputBytes(working) + (final == working ? 0 : plan.outputBytes(final))
        guard outBytes <= options.limits.maxDecodedBytes else {
            throw DarkroomImageError(
                .limitExceeded,
                "decoding to \(plan.outputWidth)×\(plan.outputHeight) needs \(outBytes) bytes, over maxDecodedBytes (\(options.limits.maxDecodedBytes))"
            )
        }
        // Only the last stage writes into the caller's memory; earlier ones use small heap bitmaps. The codec's
        // output is final when it is upright and already in the final format (some codecs decode to BGRA whatever
        // the working format, so this is decided by the format the codec asks for); CMYK never is.
        let orient = options.geometry.appliesOrientation && probe.orientation != .up
        let codecAllocate = {
            (w: Int, h: Int, format: PixelFormat, opaque: Bool) throws(DarkroomImageError) -> Bitmap in
            format == final && !orient && !probe.isCMYK
                ? try allocate(w, h, format, opaque)
                : try Bitmap.allocateOnHeap(width: w, height: h, format: format, isOpaque: opaque)
        }
        let output: CodecOutput
        switch input {
        case .bytes(_, let codec):
            output = try codec.decode(
                bytes, probe: probe, plan: plan, working: working, options: options, allocate: codecAllocate)
        case .tiffFile(let handle):
            output = try TIFFDecoder.decode(
                handle, hdr: probe.hdr, plan: plan, options: options, allocate: codecAllocate)
        }
        var codecOutput = output
        if codecOutput.colorReading == nil { codecOutput.colorReading = colorReading }
        let color = try Self.manageColor(
            codecOutput, bytes: bytes, probe: probe, options: options,
            allocate: {
                (w: Int, h: Int, format: PixelFormat, opaque: Bool) throws(DarkroomImageError) -> Bitmap in
                format == final && !orient
                    ? try allocate(w, h, format, opaque)
                    : try Bitmap.allocateOnHeap(width: w, height: h, format: format, isOpaque: opaque)
            })
        var bitmap = color.bitmap
        if bitmap.format != final {
            bitmap =
                orient
                ? try bitmap.converted(to: final, allocate: Bitmap.allocateOnHeap)
                : try bitmap.converted(to: final, allocate: allocate)
        }
        if orient { bitmap = try bitmap.applying(probe.orientation, allocate: allocate) }
        var result = DecodedImage(
            bitmap: bitmap, probe: probe, shrinkDenominator: output.shrinkDenominator,
            colorProfile: color.profile, convertedToSRGB: color.converted, colorProblem: color.problem)
        result.usedEmbeddedThumbnail = output.usedEmbeddedThumbnail
        return result
    }

    /// The header of `bytes`: the built-in prober's (``ImageProber/probe(_:limits:)-(UnsafeRawBufferPointer,_)``),
    /// or for data it recognizes but does not read (a video), the first custom decoder's that reads it. Thread-safe.
    /// - Throws: ``DarkroomImageError`` as the built-in prober, and what the custom decoder throws.
    public func probe(_ bytes: UnsafeRawBufferPointer, limits: DecodeLimits, page: Int = 0)
        throws(DarkroomImageError) -> ImageProbe
    {
        if ImageProber.format(of: bytes) == .video {
            for custom in customDecoders {
                if let probe = try custom.probe(bytes, limits: limits) { return probe }
            }
        }
        return try ImageProber.probe(bytes, limits: limits, page: page)
    }

    /// Decodes a byte array. See ``decode(_:options:)-(UnsafeRawBufferPointer,_)``.
    public func decode(_ bytes: [UInt8], options: DecodeOptions = DecodeOptions()) throws(DarkroomImageError)
        -> DecodedImage
    {
        try bytes.withBytes { (raw) throws(DarkroomImageError) in try decode(raw, options: options) }
    }

    /// The pixel format a decode produces for `probe` under `preference`.
    public static func outputFormat(_ probe: ImageProbe, _ preference: PixelFormatPreference) -> PixelFormat {
        switch preference {
        case .exactly(let format): format
        case .auto: probe.isGrayscale && !probe.hasAlpha ? .gray8 : .bgra8Premultiplied
        }
    }

    static func checkSource(_ probe: ImageProbe, _ limits: DecodeLimits) throws(DarkroomImageError) {
        guard probe.width > 0, probe.height > 0 else {
            throw DarkroomImageError(.corrupt, "the header gives an empty size \(probe.width)×\(probe.height)")
        }
        // A vector document's size costs nothing until rendered, and the render is bounded by maxDecodedBytes.
        guard probe.format != .svg else { return }
        guard probe.width <= limits.maxDimension, probe.height <= limits.maxDimension else {
            throw DarkroomImageError(
                .limitExceeded,
                "\(probe.width)×\(probe.height) has a side over maxDimension (\(limits.maxDimension))")
        }
        guard probe.width * probe.height <= limits.maxSourcePixels else {
            throw DarkroomImageError(
                .limitExceeded,
                "\(probe.width)×\(probe.height) = \(probe.width * probe.height) pixels exceeds maxSourcePixels (\(limits.maxSourcePixels))"
            )
        }
        guard probe.frameCount <= limits.maxFrames else {
            throw DarkroomImageError(
                .limitExceeded, "\(probe.frameCount) frames exceed maxFrames (\(limits.maxFrames))")
        }
    }
}
