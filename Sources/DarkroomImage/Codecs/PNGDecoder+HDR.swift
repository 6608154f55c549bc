import CSPNG

extension EmbeddedColor.CICP {
    /// A PNG `cICP` chunk's payload: colour primaries, transfer, matrix (0: RGB, the only one PNG allows) and the
    /// full-range flag, a byte each; nil for another length or matrix.
    init?(pngPayload payload: UnsafeRawBufferPointer) {
        guard payload.count == 4, payload[2] == 0 else { return nil }
        self.init(
            primaries: Int(payload[0]), transfer: Int(payload[1]), matrix: 0, fullRange: payload[3] != 0)
    }
}

extension PNGDecoder {
    /// The `cICP` chunk before the first `IDAT`, which PNG's third edition puts above `iCCP`, `sRGB`, `gAMA` and
    /// `cHRM`; nil without one. Walks the chunk headers (a handful of reads).
    static func cicp(_ bytes: UnsafeRawBufferPointer) -> EmbeddedColor.CICP? {
        let reader = ByteReader(bytes)
        var position = 8
        while let length = try? reader.u32be(position), let type = try? reader.u32be(position + 4) {
            switch type {
            case 0x6349_4350:  // cICP
                guard let payload = try? reader.slice(position + 8, length) else { return nil }
                return EmbeddedColor.CICP(pngPayload: payload)
            case 0x4944_4154: return nil  // IDAT
            default: break
            }
            guard length <= bytes.count else { return nil }
            position += 12 + length
        }
        return nil
    }

    /// Decodes a PQ or HLG PNG (its `cICP` says so) to SDR sRGB at the plan's size: 16-bit rows, premultiplied,
    /// averaged at the strongest shrink denominator that keeps the shrink-on-load margin and tone-mapped
    /// (``HDRReducedImage``), as the AVIF and HEIF decoders do.
    func decodeHDR(
        _ context: OpaquePointer, cicp: EmbeddedColor.CICP, probe: ImageProbe, plan: DecodePlan,
        options: DecodeOptions, allocate: BitmapAllocator
    ) throws(DarkroomImageError) -> CodecOutput {
        try HDRReducedImage.decode(
            sourceWidth: probe.width, sourceHeight: probe.height, isOpaque: !probe.hasAlpha, signal: cicp, plan: plan,
            options: options, allocate: allocate, what: "PNG"
        ) { reduced, rows throws(DarkroomImageError) in
            try Self.rgba16Rows(context, probe: probe, rows: rows, limits: options.limits) { row, y in
                reduced.addRGBA16(row, sourceRow: y)
            }
        }
    }

    /// The whole of a PQ or HLG PNG reduced by `d` in linear light for an HDR output (``HDRLightImage``, rolled
    /// off to `target`'s peak), with its CICP primaries; nil when it is not one the tone mapper reads.
    func reduceHDRLight(
        _ bytes: UnsafeRawBufferPointer, probe: ImageProbe, d: Int, target: HDRLightTarget, options: DecodeOptions
    ) throws(DarkroomImageError) -> (light: HDRLightImage, primaries: Int)? {
        let limits = options.limits
        guard let light = try HDRLightImage(probe: probe, d: d, target: target, limits: limits, what: "PNG")
        else { return nil }
        let context = try Self.context(bytes, limits: limits, checksCRC: true)
        defer { spng_ctx_free(context) }
        try Self.rgba16Rows(context, probe: probe, rows: 0..<probe.height, limits: limits) { row, y in
            light.addRGBA16(row, sourceRow: y)
        }
        return (light, probe.hdr?.primaries ?? 0)
    }

    /// Decodes the image as premultiplied RGBA16 and hands source `rows` to `body` in order. Rows stream from
    /// libspng one at a time; an interlaced image is decoded whole first (its frame checked against
    /// ``DecodeLimits/maxDecodedBytes``).
    private static func rgba16Rows(
        _ context: OpaquePointer, probe: ImageProbe, rows: Range<Int>, limits: DecodeLimits,
        _ body: (UnsafePointer<UInt16>, Int) -> Void
    ) throws(DarkroomImageError) {
        let width = probe.width
        let rowLength = width * 8
        let flags = Int32(SPNG_DECODE_TRNS.rawValue | SPNG_DECODE_PROGRESSIVE.rawValue)
        try check(spng_decode_image(context, nil, 0, Int32(SPNG_FMT_RGBA16.rawValue), flags), "starting the decode")
        func deliver(_ row: UnsafeMutablePointer<UInt16>, _ y: Int) {
            if probe.hasAlpha { HDRReducedImage.premultiplyRGBA16(row, width: width) }
            body(row, y)
        }
        if probe.isProgressive {
            let frameBytes = rowLength * probe.height
            guard frameBytes <= limits.maxDecodedBytes else {
                throw DarkroomImageError(
                    .limitExceeded,
                    "an interlaced \(width)×\(probe.height) HDR PNG needs a \(frameBytes)-byte frame, over maxDecodedBytes (\(limits.maxDecodedBytes))"
                )
            }
            let frame = try ScratchBuffer<UInt16>(count: width * 4 * probe.height)
            try decodeRows(context, rowLength: rowLength) { y in
                UnsafeMutableRawPointer(frame.pointer + y * width * 4).assumingMemoryBound(to: UInt8.self)
            }
            for y in rows { deliver(frame.pointer + y * width * 4, y) }
            return
        }
        let row = try ScratchBuffer<UInt16>(count: width * 4, zeroed: false)
        var lastRow = -1
        try decodeRows(context, rowLength: rowLength, stopAfter: rows.upperBound - 1) { y in
            if lastRow >= 0, rows.contains(lastRow) { deliver(row.pointer, lastRow) }
            lastRow = y
            return UnsafeMutableRawPointer(row.pointer).assumingMemoryBound(to: UInt8.self)
        }
        if lastRow >= 0, rows.contains(lastRow) { deliver(row.pointer, lastRow) }
    }
}
