import CDarkroomJPEG

/// JPEG through libjpeg-turbo (via the C shim, which owns all setjmp/longjmp).
///
/// Shrinks on load with DCT scaling (1/2, 1/4, 1/8) to the strongest scale that keeps the cropped source at
/// least ``DecodeOptions/shrinkOnLoadMargin`` × the output, then streams 16-row strips through one resample.
/// At identity size it decodes straight into the bitmap's rows. Rows outside a crop are skipped without color
/// conversion. Truncated files throw `.truncated` unless ``DecodeOptions/acceptTruncated``.
struct JPEGDecoder: CodecDecoder {
    let format = ImageFileFormat.jpeg
    /// Output rows read from libjpeg per call.
    static let stripRows = 16
    /// 4:2:0 chroma is taken from DC coefficients alone (1/16 scale) when that resolution is at least this share
    /// of the output's in both axes — e.g. 12 MP → 256 px (252 chroma samples across for 256 pixels): a little
    /// colour detail for a large share of the decode (docs/PERFORMANCE.md, "Decode").
    static let halfChromaCoverage = 0.9

    func decode(
        _ bytes: UnsafeRawBufferPointer, probe: ImageProbe, plan: DecodePlan, working: PixelFormat,
        options: DecodeOptions, allocate: BitmapAllocator
    ) throws(DarkroomImageError) -> CodecOutput {
        guard let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self),
            let d = dr_jpeg_decoder_create(
                base, bytes.count, Int32(clamping: options.limits.maxProgressiveScans),
                options.acceptTruncated ? 0 : 1, options.limits.maxDecodedBytes)
        else { throw DarkroomImageError(.outOfMemory, "could not create a JPEG decoder") }
        defer { dr_jpeg_decoder_destroy(d) }

        var info = dr_jpeg_info()
        try Self.check(dr_jpeg_read_header(d, &info), d, "reading the header")
        let (output, isCMYK) = Self.output(for: info, working: working)
        let denominator = Self.shrinkDenominator(plan, options)
        if denominator == 8 {
            // At 1/8 the shim reads sequential files with its DC-only reader. 4:2:0 chroma from DC alone has one
            // sample per 16×16 source pixels: close to the output's own resolution when the output is ~1/16 of
            // the source, and then the decode skips every chroma AC coefficient too (DecodeOptions.chromaFromDC).
            let halfChroma =
                options.chromaFromDC && plan.sourceRect.width / 16 >= Double(plan.outputWidth) * Self.halfChromaCoverage
                && plan.sourceRect.height / 16 >= Double(plan.outputHeight) * Self.halfChromaCoverage
            dr_jpeg_set_dc_reader(d, Int32((halfChroma ? DR_JPEG_DC_HALF_CHROMA : DR_JPEG_DC_EXACT).rawValue))
        }
        try Self.check(dr_jpeg_start(d, Int32(denominator), Int32(output.rawValue), &info), d, "starting the decode")
        let rows = try Self.readRows(
            width: Int(info.output_width), height: Int(info.output_height), isCMYK: isCMYK, plan: plan,
            working: working, options: options, allocate: allocate,
            read: { dst, stride, count, read throws(DarkroomImageError) in
                try Self.check(dr_jpeg_read_rows(d, dst, stride, Int32(count), &read), d, "decoding rows")
            },
            skip: { count, skipped throws(DarkroomImageError) in
                try Self.check(dr_jpeg_skip_rows(d, Int32(count), &skipped), d, "skipping rows")
            })
        try Self.finish(d, &info, rowsRead: rows.read, expected: rows.expected, options: options)
        return CodecOutput(bitmap: rows.destination.finish(), shrinkDenominator: denominator, isCMYK: isCMYK)
    }

    /// The shim's output for a file: CMYK as stored (converted to sRGB later), gray for a gray working format,
    /// else BGRA.
    static func output(for info: dr_jpeg_info, working: PixelFormat) -> (output: dr_jpeg_output, isCMYK: Bool) {
        let isCMYK =
            info.colorspace == Int32(DR_JPEG_CS_CMYK.rawValue) || info.colorspace == Int32(DR_JPEG_CS_YCCK.rawValue)
        return (isCMYK ? DR_JPEG_OUT_CMYK : (working == .gray8 ? DR_JPEG_OUT_GRAY : DR_JPEG_OUT_BGRA), isCMYK)
    }

    /// The DCT scaling for `plan`: the strongest that keeps the source at least the shrink-on-load margin × the
    /// output.
    static func shrinkDenominator(_ plan: DecodePlan, _ options: DecodeOptions) -> Int {
        plan.shrinkOnLoadDenominator(options)
    }

    /// Reads one output pass of `width × height` rows into a destination for `plan`: straight into the bitmap's
    /// rows at identity size, else in strips through the resample, skipping rows outside a crop when `skip` is
    /// given (else reading and dropping them). Returns the rows read and the rows needed.
    static func readRows(
        width sw: Int, height sh: Int, isCMYK: Bool, plan: DecodePlan, working: PixelFormat, options: DecodeOptions,
        allocate: BitmapAllocator,
        read: (UnsafeMutablePointer<UInt8>, Int, Int, inout Int32) throws(DarkroomImageError) -> Void,
        skip: ((Int, inout Int32) throws(DarkroomImageError) -> Void)?
    ) throws(DarkroomImageError) -> (destination: RowDestination, read: Int, expected: Int) {
        let destination = try RowDestination(
            plan: plan, sourceWidth: sw, sourceHeight: sh,
            format: isCMYK ? .bgra8Premultiplied : working,
            isOpaque: true, filter: options.filter, allocate: allocate)
        if destination.isDirect && !isCMYK {
            // Straight into the bitmap's rows, all in one call: no intermediate copy, and libjpeg gets the
            // row pointers it needs to upsample 2 rows at a time without its spare-row copy.
            let bitmap = destination.bitmap
            var y = 0
            while y < sh {
                var count: Int32 = 0
                try read(bitmap.row(y).assumingMemoryBound(to: UInt8.self), bitmap.bytesPerRow, sh - y, &count)
                guard count > 0 else { break }
                y += Int(count)
            }
            return (destination, y, sh)
        }

        // CMYK rows are resampled as four plain channels; ImageDecoder converts the small result to sRGB.
        let sourceBPP = isCMYK ? 4 : working.bytesPerPixel
        let stripStride = (sw * sourceBPP + 63) & ~63
        let strip = try ScratchBuffer<UInt8>(count: stripStride * Self.stripRows, zeroed: false)
        let needed = destination.requiredRows.clamped(to: 0..<sh)
        var y = 0
        if needed.lowerBound > 0, let skip {
            var skipped: Int32 = 0
            try skip(needed.lowerBound, &skipped)
            y = Int(skipped)
        }
        while y < needed.upperBound {
            var count: Int32 = 0
            try read(strip.pointer, stripStride, min(Self.stripRows, needed.upperBound - y), &count)
            guard count > 0 else { break }
            for i in 0..<Int(count) where needed.contains(y + i) {
                destination.consume(row: strip.pointer + i * stripStride, y: y + i)
            }
            y += Int(count)
        }
        return (destination, y, needed.upperBound)
    }

    private static func finish(
        _ d: OpaquePointer, _ info: inout dr_jpeg_info, rowsRead: Int, expected: Int,
        options: DecodeOptions
    ) throws(DarkroomImageError) {
        try check(dr_jpeg_finish(d, &info), d, "finishing")
        if rowsRead < expected || (info.truncated != 0 && !options.acceptTruncated) {
            throw DarkroomImageError(
                .truncated, "the JPEG data ends after \(rowsRead) of \(expected) rows",
                codecMessage: message(d))
        }
    }

    /// CMYK to opaque BGRA by the device-CMYK formula browsers use when a CMYK JPEG has no profile (Adobe files,
    /// marked by their APP14 segment, store the samples inverted).
    static func convertCMYK(_ src: UnsafePointer<UInt8>, _ dst: UnsafeMutablePointer<UInt8>, width: Int, inverted: Bool)
    {
        for x in 0..<width {
            var c = Int(src[4 * x])
            var m = Int(src[4 * x + 1])
            var yy = Int(src[4 * x + 2])
            var k = Int(src[4 * x + 3])
            if !inverted {
                c = 255 - c
                m = 255 - m
                yy = 255 - yy
                k = 255 - k
            }
            dst[4 * x] = UInt8((yy * k + 127) / 255)
            dst[4 * x + 1] = UInt8((m * k + 127) / 255)
            dst[4 * x + 2] = UInt8((c * k + 127) / 255)
            dst[4 * x + 3] = 255
        }
    }

    static func message(_ d: OpaquePointer) -> String? {
        guard let m = dr_jpeg_message(d) else { return nil }
        let s = String(cString: m)
        return s.isEmpty ? nil : s
    }

    /// libjpeg's last message from a stream, nil when none.
    static func message(stream d: OpaquePointer) -> String? {
        guard let m = dr_jpeg_stream_message(d) else { return nil }
        let s = String(cString: m)
        return s.isEmpty ? nil : s
    }

    static func check(_ status: Int32, _ d: OpaquePointer, _ what: String) throws(DarkroomImageError) {
        try check(status, message: message(d), what)
    }

    /// Throws the typed error for a shim status other than `DR_JPEG_OK`.
    static func check(_ status: Int32, message codec: String?, _ what: String) throws(DarkroomImageError) {
        guard status != Int32(DR_JPEG_OK.rawValue) else { return }
        switch dr_jpeg_status(rawValue: UInt32(status)) {
        case DR_JPEG_ERR_TRUNCATED:
            throw DarkroomImageError(.truncated, "the JPEG data ends early (\(what))", codecMessage: codec)
        case DR_JPEG_ERR_TOO_MANY_SCANS:
            throw DarkroomImageError(
                .limitExceeded, "the progressive JPEG has more scans than maxProgressiveScans", codecMessage: codec)
        case DR_JPEG_ERR_UNSUPPORTED:
            throw DarkroomImageError(
                .unsupportedFeature, "this JPEG variant is not supported (\(what))", codecMessage: codec)
        case DR_JPEG_ERR_NO_MEMORY:
            throw DarkroomImageError(
                .limitExceeded, "libjpeg ran out of its memory budget (maxDecodedBytes) while \(what)",
                codecMessage: codec)
        case DR_JPEG_ERR_ARGUMENT:
            throw DarkroomImageError(.invalidArgument, "libjpeg refused a call while \(what)", codecMessage: codec)
        default: throw DarkroomImageError(.corrupt, "the JPEG data is corrupt (\(what))", codecMessage: codec)
        }
    }
}
