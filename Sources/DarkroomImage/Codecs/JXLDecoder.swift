import CJXL

/// JPEG XL through libjxl, streamed: libjxl hands out pixels through its image-out callback a group (256×256) at a
/// time, a ``JXLRowAssembler`` puts whole rows together in a window of a few hundred rows, and the rows go straight
/// into the resampler — the full-size image is never held by Darkroom (libjxl keeps its own per-group state).
///
/// The codestream's orientation is kept (Darkroom applies it like EXIF's); alpha is premultiplied here unless the
/// file stores it premultiplied; 16-bit and float samples come out as 8-bit (16-bit for a PQ or HLG image). Colour: an XYB-coded image (lossy
/// JPEG XL) is asked for in sRGB directly; otherwise the colour space it was coded in is read as an ICC profile and
/// converted by lcms2 like any other; a PQ or HLG image is tone-mapped to SDR like an AVIF's (`JXLDecoder+HDR`). A JPEG
/// recompressed into JPEG XL decodes to its pixels. An animation's
/// first frame is decoded (all layers composited). Decoding runs on the calling thread (no libjxl thread pool):
/// callers decode on their own bounded pools.
struct JXLDecoder: CodecDecoder {
    let format = ImageFileFormat.jxl

    /// Whether the first bytes are JPEG XL's container signature box.
    static func hasContainerSignature(_ reader: ByteReader) -> Bool {
        reader.matches([0, 0, 0, 0x0C, 0x4A, 0x58, 0x4C, 0x20, 0x0D, 0x0A, 0x87, 0x0A], at: 0)
    }

    /// A libjxl decoder over bytes that outlive it.
    final class Handle {
        let decoder: OpaquePointer

        init(_ bytes: UnsafeRawBufferPointer, events: Int32, isComplete: Bool = true) throws(DarkroomImageError) {
            guard let decoder = JxlDecoderCreate(nil) else {
                throw DarkroomImageError(.outOfMemory, "could not create a JPEG XL decoder")
            }
            self.decoder = decoder
            guard JxlDecoderSubscribeEvents(decoder, events) == JXL_DEC_SUCCESS,
                JxlDecoderSetKeepOrientation(decoder, 1) == JXL_DEC_SUCCESS,
                JxlDecoderSetInput(decoder, bytes.bindMemory(to: UInt8.self).baseAddress, bytes.count)
                    == JXL_DEC_SUCCESS
            else { throw DarkroomImageError(.corrupt, "libjxl refused the input") }
            if isComplete { JxlDecoderCloseInput(decoder) }
        }

        deinit { JxlDecoderDestroy(decoder) }

        func next() -> JxlDecoderStatus { JxlDecoderProcessInput(decoder) }
    }

    static let basicInfoEvents = Int32(JXL_DEC_BASIC_INFO.rawValue | JXL_DEC_COLOR_ENCODING.rawValue)

    /// Size, orientation, alpha, depth, whether the coded colour space is sRGB, and an animation's frame count.
    static func probe(_ bytes: UnsafeRawBufferPointer, isComplete: Bool, limits: DecodeLimits) throws(ProbeStop)
        -> ImageProbe
    {
        do throws(DarkroomImageError) {
            let handle = try Handle(bytes, events: basicInfoEvents, isComplete: isComplete)
            var info = JxlBasicInfo()
            var probe: ImageProbe?
            while true {
                let status = handle.next()
                switch status {
                case JXL_DEC_BASIC_INFO:
                    guard JxlDecoderGetBasicInfo(handle.decoder, &info) == JXL_DEC_SUCCESS else {
                        throw DarkroomImageError(.corrupt, "the JPEG XL header cannot be read")
                    }
                    probe = ImageProbe(
                        format: .jxl, width: Int(info.xsize), height: Int(info.ysize),
                        orientation: ExifOrientation(rawValue: Int(info.orientation.rawValue)) ?? .up,
                        hasAlpha: info.alpha_bits > 0, isGrayscale: info.num_color_channels == 1,
                        bitDepth: Int(info.bits_per_sample))
                case JXL_DEC_COLOR_ENCODING:
                    guard var result = probe else { throw DarkroomImageError(.corrupt, "no JPEG XL header") }
                    var encoding = JxlColorEncoding()
                    let encoded =
                        JxlDecoderGetColorAsEncodedProfile(
                            handle.decoder, nil, JXL_COLOR_PROFILE_TARGET_ORIGINAL, &encoding) == JXL_DEC_SUCCESS
                    result.hdr = hdrDetails(handle.decoder)
                    // A PQ or HLG encoding is named like an AVIF's CICP, not described by a profile.
                    result.hasICCProfile = !(encoded && isSRGB(encoding)) && result.hdr == nil
                    if info.have_animation != 0 {
                        result.frameCount = try countFrames(bytes, limits: limits)
                    }
                    return result
                case JXL_DEC_NEED_MORE_INPUT:
                    throw isComplete
                        ? DarkroomImageError(.truncated, "the JPEG XL data ends inside its header")
                        : DarkroomImageError(.truncated, "more input")
                default:
                    throw DarkroomImageError(.corrupt, "the JPEG XL header is corrupt")
                }
            }
        } catch {
            if !isComplete && (error.code == .truncated || error.code == .corrupt) {
                throw .needMoreData(atLeast: bytes.count * 2)
            }
            throw .failed(error)
        }
    }

    /// Frames of an animation, from their headers (no pixels decoded).
    private static func countFrames(_ bytes: UnsafeRawBufferPointer, limits: DecodeLimits)
        throws(DarkroomImageError) -> Int
    {
        let handle = try Handle(bytes, events: Int32(JXL_DEC_FRAME.rawValue))
        var frames = 0
        while true {
            switch handle.next() {
            case JXL_DEC_FRAME:
                frames += 1
                guard frames <= limits.maxFrames else {
                    throw DarkroomImageError(
                        .limitExceeded, "the image has more than \(limits.maxFrames) frames (maxFrames)")
                }
            case JXL_DEC_SUCCESS: return max(frames, 1)
            case JXL_DEC_NEED_MORE_INPUT:
                throw DarkroomImageError(.truncated, "the JPEG XL animation ends inside frame \(frames + 1)")
            default: throw DarkroomImageError(.corrupt, "a JPEG XL frame header is corrupt")
            }
        }
    }

    static func isSRGB(_ e: JxlColorEncoding) -> Bool {
        e.color_space != JXL_COLOR_SPACE_UNKNOWN && e.color_space != JXL_COLOR_SPACE_XYB
            && e.white_point == JXL_WHITE_POINT_D65
            && (e.color_space == JXL_COLOR_SPACE_GRAY || e.primaries == JXL_PRIMARIES_SRGB)
            && e.transfer_function == JXL_TRANSFER_FUNCTION_SRGB
    }

    /// The colour the decoded pixels are in, as an ICC profile (nil when sRGB), for `/v1/info` and the decode.
    static func readColor(_ bytes: UnsafeRawBufferPointer, limits: DecodeLimits) -> ColorReading {
        guard let handle = try? Handle(bytes, events: basicInfoEvents) else { return .none }
        while true {
            switch handle.next() {
            case JXL_DEC_BASIC_INFO: continue
            case JXL_DEC_COLOR_ENCODING:
                if let signal = hdrSignal(handle.decoder) { return ColorReading(color: .cicp(signal.cicp)) }
                return targetColor(handle.decoder, limits: limits)
            default: return .none
            }
        }
    }

    /// After the colour-encoding event: asks for sRGB where libjxl can convert (XYB), then reads what it will give.
    static func targetColor(_ decoder: OpaquePointer, limits: DecodeLimits) -> ColorReading {
        var info = JxlBasicInfo()
        _ = JxlDecoderGetBasicInfo(decoder, &info)
        var srgb = JxlColorEncoding()
        JxlColorEncodingSetToSRGB(&srgb, info.num_color_channels == 1 ? 1 : 0)
        _ = JxlDecoderSetPreferredColorProfile(decoder, &srgb)  // refused unless XYB: then the coded space it is
        var encoding = JxlColorEncoding()
        if JxlDecoderGetColorAsEncodedProfile(decoder, nil, JXL_COLOR_PROFILE_TARGET_DATA, &encoding)
            == JXL_DEC_SUCCESS, isSRGB(encoding)
        {
            return ColorReading(color: nil, srgbSource: .cicp)
        }
        var size = 0
        guard JxlDecoderGetICCProfileSize(decoder, nil, JXL_COLOR_PROFILE_TARGET_DATA, &size) == JXL_DEC_SUCCESS,
            size > 0
        else { return .none }
        guard size <= limits.maxColorProfileBytes else {
            return ColorReading(
                color: nil,
                problem:
                    "the ICC profile of \(size) bytes exceeds maxColorProfileBytes (\(limits.maxColorProfileBytes))")
        }
        var icc = [UInt8](repeating: 0, count: size)
        guard
            JxlDecoderGetColorAsICCProfile(decoder, nil, JXL_COLOR_PROFILE_TARGET_DATA, &icc, size)
                == JXL_DEC_SUCCESS
        else { return ColorReading(color: nil, problem: "the JPEG XL colour profile could not be read") }
        return ColorReading(color: .icc(icc))
    }

    func decode(
        _ bytes: UnsafeRawBufferPointer, probe: ImageProbe, plan: DecodePlan, working: PixelFormat,
        options: DecodeOptions, allocate: BitmapAllocator
    ) throws(DarkroomImageError) -> CodecOutput {
        if options.colorSpace == .sRGB, probe.hdr?.toneMapped == true {
            return try decodeHDR(bytes, probe: probe, plan: plan, options: options, allocate: allocate)
        }
        var color = ColorReading.none
        var destination: RowDestination?
        try Self.streamRows(
            bytes, probe: probe, sample: JXL_TYPE_UINT8,
            color: { decoder throws(DarkroomImageError) in color = Self.targetColor(decoder, limits: options.limits) },
            sink: { info throws(DarkroomImageError) in
                let rows = try RowDestination(
                    plan: plan, sourceWidth: probe.width, sourceHeight: probe.height, format: .bgra8Premultiplied,
                    isOpaque: info.alpha_bits == 0, filter: options.filter, allocate: allocate)
                destination = rows
                return try JXLRowAssembler(
                    width: probe.width, height: probe.height, destination: rows,
                    premultiply: info.alpha_bits > 0 && info.alpha_premultiplied == 0,
                    maxBytes: options.limits.maxDecodedBytes - plan.outputBytes(.bgra8Premultiplied))
            })
        guard let destination else { throw DarkroomImageError(.corrupt, "the JPEG XL has no pixels") }
        return CodecOutput(bitmap: destination.finish(), colorReading: color)
    }

    /// Runs libjxl over the whole image: `color` is called once the colour encoding is known (it may ask libjxl
    /// for another output colour), then `sink` makes the assembler whole rows of 4 `sample`s a pixel go through.
    static func streamRows(
        _ bytes: UnsafeRawBufferPointer, probe: ImageProbe, sample: JxlDataType,
        color: (OpaquePointer) throws(DarkroomImageError) -> Void,
        sink: (JxlBasicInfo) throws(DarkroomImageError) -> JXLRowAssembler
    ) throws(DarkroomImageError) {
        let events = Self.basicInfoEvents | Int32(JXL_DEC_FULL_IMAGE.rawValue)
        let handle = try Handle(bytes, events: events)
        var info = JxlBasicInfo()
        var assembler: JXLRowAssembler?
        var format = JxlPixelFormat(num_channels: 4, data_type: sample, endianness: JXL_NATIVE_ENDIAN, align: 0)
        while true {
            switch handle.next() {
            case JXL_DEC_BASIC_INFO:
                _ = JxlDecoderGetBasicInfo(handle.decoder, &info)
                guard Int(info.xsize) == probe.width, Int(info.ysize) == probe.height else {
                    throw DarkroomImageError(.corrupt, "the JPEG XL header changed between probe and decode")
                }
            case JXL_DEC_COLOR_ENCODING:
                try color(handle.decoder)
            case JXL_DEC_NEED_IMAGE_OUT_BUFFER:
                let rows = try sink(info)
                assembler = rows
                let opaque = Unmanaged.passUnretained(rows).toOpaque()
                guard
                    JxlDecoderSetImageOutCallback(
                        handle.decoder, &format,
                        { opaque, x, y, count, pixels in
                            guard let opaque, let pixels else { return }
                            Unmanaged<JXLRowAssembler>.fromOpaque(opaque).takeUnretainedValue()
                                .put(x: x, y: y, count: count, pixels: pixels)
                        }, opaque) == JXL_DEC_SUCCESS
                else { throw DarkroomImageError(.corrupt, "libjxl refused the output format") }
            case JXL_DEC_FULL_IMAGE:
                guard let assembler else { throw DarkroomImageError(.corrupt, "the JPEG XL has no pixels") }
                try assembler.finish()
                return
            case JXL_DEC_NEED_MORE_INPUT:
                throw DarkroomImageError(.truncated, "the JPEG XL data ends early")
            case JXL_DEC_SUCCESS:
                throw DarkroomImageError(.corrupt, "the JPEG XL ended without an image")
            default:
                if let failure = assembler?.failure { throw failure }
                throw DarkroomImageError(.corrupt, "the JPEG XL data is corrupt")
            }
        }
    }
}
