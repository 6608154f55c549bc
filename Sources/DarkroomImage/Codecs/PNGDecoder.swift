import CSPNG

/// PNG through libspng, streamed row by row into the resampler: a 5120×2880 PNG thumbnailed to 256 px holds
/// one source row and the resampler's window, never the image.
///
/// Any bit depth and color type is converted to 8-bit (16-bit samples are scaled, palettes and tRNS applied);
/// straight alpha is premultiplied per row. Adam7-interlaced files deliver rows out of order, so they are
/// decoded into one full frame first (bounded by ``DecodeLimits/maxDecodedBytes``); with
/// ``DecodeOptions/acceptTruncated``, one cut short shows its whole passes, each pixel drawn from the nearest one
/// they hold. No gamma or ICC handling.
///
/// An APNG whose default image is not part of its animation (no `fcTL` before the first `IDAT`) shows the
/// animation's first frame, as browsers, libpng's APNG patch and Pillow do: the `IDAT` image is only for decoders
/// that know nothing of APNG — and for files whose animation chunks break the specification (``APNGReader``),
/// which show the default image.
struct PNGDecoder: CodecDecoder {
    let format = ImageFileFormat.png

    func decode(
        _ bytes: UnsafeRawBufferPointer, probe: ImageProbe, plan: DecodePlan, working: PixelFormat,
        options: DecodeOptions, allocate: BitmapAllocator
    ) throws(DarkroomImageError) -> CodecOutput {
        if Self.defaultImageIsHidden(bytes),
            let frame = try Self.firstAnimationFrame(
                bytes, canvasWidth: probe.width, canvasHeight: probe.height, limits: options.limits)
        {
            let result: Result<CodecOutput, DarkroomImageError> = frame.withUnsafeBytes { raw in
                Result { () throws(DarkroomImageError) in
                    try decodeImage(
                        raw, probe: probe, plan: plan, working: working, options: options, allocate: allocate,
                        checksCRC: false)
                }
            }
            return try result.get()
        }
        if options.acceptTruncated, let whole = Self.closingCutChunk(bytes) {
            let result: Result<CodecOutput, DarkroomImageError> = whole.withUnsafeBytes { raw in
                Result { () throws(DarkroomImageError) in
                    try decodeImage(
                        raw, probe: probe, plan: plan, working: working, options: options, allocate: allocate,
                        checksCRC: false)
                }
            }
            return try result.get()
        }
        return try decodeImage(
            bytes, probe: probe, plan: plan, working: working, options: options, allocate: allocate, checksCRC: true)
    }

    /// A copy of `bytes` whose last chunk, cut short, is closed where the data ends (its length made what arrived,
    /// a placeholder CRC after it); nil when no chunk is cut. libspng reads a chunk whole before inflating any of
    /// it, so without this a download cut inside a large `IDAT` would show nothing of that chunk's rows — the
    /// placeholder CRC is why such a copy is decoded without checking CRCs (zlib still checks the data's shape).
    /// Walks the chunk headers (one read per chunk) and copies the input once.
    static func closingCutChunk(_ bytes: UnsafeRawBufferPointer) -> [UInt8]? {
        let reader = ByteReader(bytes)
        var position = 8
        while let length = try? reader.u32be(position) {
            let end = position + 12 + Int(length)
            guard end > bytes.count else {
                position = end
                continue
            }
            let present = bytes.count - position - 8
            guard present > 0 else { return nil }
            var copy = [UInt8](bytes[..<bytes.count])
            let cut = UInt32(min(present, Int(length)))
            for i in 0..<4 { copy[position + i] = UInt8(truncatingIfNeeded: cut >> (24 - 8 * i)) }
            copy.removeLast(present - Int(cut))
            copy += [0, 0, 0, 0]
            return copy
        }
        return nil
    }

    /// Whether `bytes` is an APNG (an `acTL` before the first `IDAT`) whose first `IDAT` has no `fcTL` before it.
    /// Walks the chunk headers up to the first `IDAT` (a handful of reads).
    static func defaultImageIsHidden(_ bytes: UnsafeRawBufferPointer) -> Bool {
        let reader = ByteReader(bytes)
        var position = 8
        var animated = false
        while let length = try? reader.u32be(position), let type = try? reader.u32be(position + 4) {
            switch type {
            case 0x6163_544C: animated = true  // acTL
            case 0x6663_544C: return false  // fcTL before IDAT: the default image is frame 0
            case 0x4944_4154: return animated  // IDAT
            default: break
            }
            guard length <= bytes.count else { return false }
            position += 12 + length
        }
        return false
    }

    /// The animation's first frame as a PNG of its own (the canvas's header, palette and transparency, the frame's
    /// data); nil when the animation chunks break the specification, so the default image is what shows. The
    /// specification makes the first frame cover the canvas; a file whose first frame does not is corrupt.
    static func firstAnimationFrame(
        _ bytes: UnsafeRawBufferPointer, canvasWidth: Int, canvasHeight: Int, limits: DecodeLimits
    ) throws(DarkroomImageError) -> [UInt8]? {
        guard case .animation(let reader) = try APNGReader.opening(bytes, limits: limits) else { return nil }
        guard let first = reader.frames.first else { throw DarkroomImageError(.corrupt, "APNG has no frame") }
        guard first.x == 0, first.y == 0, first.width == canvasWidth, first.height == canvasHeight else {
            throw DarkroomImageError(.corrupt, "APNG's first frame must cover the canvas")
        }
        return reader.framePNG(first, in: bytes)
    }

    /// Decodes one PNG; `checksCRC` false for a frame assembled from an APNG (its CRCs are left zero, zlib's
    /// checksum covers the data).
    private func decodeImage(
        _ bytes: UnsafeRawBufferPointer, probe: ImageProbe, plan: DecodePlan, working: PixelFormat,
        options: DecodeOptions, allocate: BitmapAllocator, checksCRC: Bool
    ) throws(DarkroomImageError) -> CodecOutput {
        let ctx = try Self.context(bytes, limits: options.limits, checksCRC: checksCRC)
        defer { spng_ctx_free(ctx) }
        let limits = options.limits
        if options.colorSpace == .sRGB, let details = probe.hdr, details.toneMapped {
            let cicp = Self.cicp(bytes) ?? details.cicp  // else an HDR ICC profile's signal
            return try decodeHDR(ctx, cicp: cicp, probe: probe, plan: plan, options: options, allocate: allocate)
        }
        var ihdr = spng_ihdr()
        try Self.check(spng_get_ihdr(ctx, &ihdr), "reading the header")
        let width = Int(ihdr.width)
        let height = Int(ihdr.height)

        // Gray 1–8 bit without alpha decodes to G8; everything else to RGBA8.
        let grayNative = working == .gray8 && ihdr.color_type == 0 && ihdr.bit_depth <= 8 && !probe.hasAlpha
        let fmt = grayNative ? Int32(SPNG_FMT_G8.rawValue) : Int32(SPNG_FMT_RGBA8.rawValue)
        let srcBPP = grayNative ? 1 : 4
        let flags = Int32(SPNG_DECODE_TRNS.rawValue | SPNG_DECODE_PROGRESSIVE.rawValue)
        try Self.check(spng_decode_image(ctx, nil, 0, fmt, flags), "starting the decode")

        let opaque = !probe.hasAlpha
        let destination = try RowDestination(
            plan: plan, sourceWidth: width, sourceHeight: height, format: working,
            isOpaque: opaque, filter: options.filter, allocate: allocate)
        let rowBytes = width * srcBPP
        let converted = grayNative ? nil : try ScratchBuffer<UInt8>(count: width * working.bytesPerPixel, zeroed: false)
        func deliver(_ row: UnsafePointer<UInt8>, _ y: Int) {
            guard let converted else {
                destination.consume(row: row, y: y)
                return
            }
            PixelConversion.convertRow(row, from: .rgba8, converted.pointer, to: working, width: width)
            destination.consume(row: converted.pointer, y: y)
        }

        if ihdr.interlace_method != 0 {
            let frameBytes = rowBytes * height
            guard frameBytes + plan.outputBytes(working) <= limits.maxDecodedBytes else {
                throw DarkroomImageError(
                    .limitExceeded,
                    "an interlaced \(width)×\(height) PNG needs a \(frameBytes)-byte frame, over maxDecodedBytes (\(limits.maxDecodedBytes))"
                )
            }
            let frame = try ScratchBuffer<UInt8>(count: frameBytes)
            var passesDone = 7
            do throws(DarkroomImageError) {
                try Self.decodeRows(
                    ctx, rowLength: rowBytes, pass: { passesDone = $0 }, { y in frame.pointer + y * rowBytes })
                passesDone = 7
            } catch  where error.code == .truncated && options.acceptTruncated && passesDone > 0 {
                // The data ended inside a pass: the passes before it are whole.
            }
            guard passesDone < 7 else {
                for y in 0..<height { deliver(frame.pointer + y * rowBytes, y) }
                return CodecOutput(bitmap: destination.finish())
            }
            // Each pixel is drawn from the nearest pixel of the whole passes at or above and left of it (the
            // lattice those passes fill: every 8th pixel in both axes after pass 1 … every other row after pass 6),
            // as browsers show an interlaced PNG while it loads.
            let (stepX, stepY) = Adam7.lattice(afterPasses: passesDone)
            let filled = try ScratchBuffer<UInt8>(count: rowBytes, zeroed: false)
            for y in 0..<height {
                let source = frame.pointer + (y - y % stepY) * rowBytes
                for x in stride(from: 0, to: width, by: stepX) {
                    let pixel = source + x * srcBPP
                    for i in x..<min(width, x + stepX) {
                        (filled.pointer + i * srcBPP).update(from: pixel, count: srcBPP)
                    }
                }
                deliver(filled.pointer, y)
            }
            return CodecOutput(bitmap: destination.finish())
        }

        let row = try ScratchBuffer<UInt8>(count: rowBytes, zeroed: false)
        let needed = destination.requiredRows
        var lastRow = -1
        try Self.decodeRows(ctx, rowLength: rowBytes, stopAfter: needed.upperBound - 1) { y in
            if lastRow >= 0, needed.contains(lastRow) { deliver(row.pointer, lastRow) }
            lastRow = y
            return row.pointer
        }
        if lastRow >= 0, needed.contains(lastRow) { deliver(row.pointer, lastRow) }
        return CodecOutput(bitmap: destination.finish())
    }

    /// A libspng decoder over `bytes` with Darkroom's limits (the image's sides, and ancillary chunks no larger than
    /// the input), checking CRCs unless `checksCRC` is false. The caller frees it (`spng_ctx_free`).
    static func context(_ bytes: UnsafeRawBufferPointer, limits: DecodeLimits, checksCRC: Bool)
        throws(DarkroomImageError) -> OpaquePointer
    {
        guard let ctx = spng_ctx_new(0) else {
            throw DarkroomImageError(.outOfMemory, "could not create a PNG decoder")
        }
        do throws(DarkroomImageError) {
            if !checksCRC {
                try check(
                    spng_set_crc_action(ctx, Int32(SPNG_CRC_USE.rawValue), Int32(SPNG_CRC_USE.rawValue)), "setting up")
            }
            let side = UInt32(clamping: limits.maxDimension)
            try check(spng_set_image_limits(ctx, side, side), "setting limits")
            // Ancillary chunks (text, ICC) are bounded too: a PNG cannot make libspng buffer more than the input.
            let chunkLimit = min(limits.maxInputBytes, 64 << 20)
            try check(spng_set_chunk_limits(ctx, chunkLimit, chunkLimit), "setting limits")
            try check(spng_set_png_buffer(ctx, bytes.baseAddress, bytes.count), "reading")
        } catch {
            spng_ctx_free(ctx)
            throw error
        }
        return ctx
    }

    /// Decodes rows until the end (or past row `stopAfter`), asking `target(rowNumber)` where each goes.
    /// For interlaced images a row number repeats once per pass and the target must be that row's full buffer.
    /// `pass` hears the number of Adam7 passes already whole each time a row of an interlaced image is about to be
    /// decoded (0 during the first pass).
    static func decodeRows(
        _ ctx: OpaquePointer, rowLength: Int, stopAfter: Int = .max, pass: (Int) -> Void = { _ in },
        _ target: (Int) -> UnsafeMutablePointer<UInt8>
    ) throws(DarkroomImageError) {
        var ihdr = spng_ihdr()
        _ = spng_get_ihdr(ctx, &ihdr)
        var rowInfo = spng_row_info()
        while true {
            let status = spng_get_row_info(ctx, &rowInfo)
            if status == Int32(SPNG_EOI.rawValue) { return }
            try check(status, "reading row info")
            let y = Int(rowInfo.row_num)
            if ihdr.interlace_method != 0 { pass(Int(rowInfo.pass)) }
            let isFinalPass = ihdr.interlace_method == 0 || rowInfo.pass == 6
            if isFinalPass && y > stopAfter { return }
            let ret = spng_decode_row(ctx, target(y), rowLength)
            if ret == Int32(SPNG_EOI.rawValue) { return }
            try check(ret, "decoding row \(y)")
        }
    }

    static func check(_ status: Int32, _ what: String) throws(DarkroomImageError) {
        guard status != 0 else { return }
        let codec = spng_strerror(status).map { String(cString: $0) }
        switch status {
        case Int32(SPNG_IO_EOF.rawValue), Int32(SPNG_IO_ERROR.rawValue):
            throw DarkroomImageError(.truncated, "the PNG data ends early (\(what))", codecMessage: codec)
        case Int32(SPNG_EMEM.rawValue):
            throw DarkroomImageError(.outOfMemory, "libspng could not allocate memory (\(what))", codecMessage: codec)
        case Int32(SPNG_EUSER_WIDTH.rawValue), Int32(SPNG_EUSER_HEIGHT.rawValue), Int32(SPNG_ECHUNK_LIMITS.rawValue):
            throw DarkroomImageError(
                .limitExceeded, "the PNG exceeds a configured limit (\(what))", codecMessage: codec)
        default:
            throw DarkroomImageError(.corrupt, "the PNG data is corrupt (\(what))", codecMessage: codec)
        }
    }
}

/// The Adam7 interlacing of PNG: seven passes over 8 × 8 blocks.
enum Adam7 {
    /// The spacing of the pixels known once the first `passes` passes are whole (1…7): every 8th pixel in both axes
    /// after the first, every 4th column of every 8th row after the second, and so on to every pixel.
    static func lattice(afterPasses passes: Int) -> (x: Int, y: Int) {
        let steps = [(8, 8), (4, 8), (4, 4), (2, 4), (2, 2), (1, 2), (1, 1)]
        return steps[min(max(passes, 1), 7) - 1]
    }
}
