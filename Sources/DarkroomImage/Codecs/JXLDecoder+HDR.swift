import CJXL

extension JXLDecoder {
    /// The colour a JPEG XL was coded in, when it is PQ or HLG RGB or gray in libjxl's enumerated form (as cjxl and
    /// libjxl's encoder write HDR): its CICP code points (libjxl's transfer numbers are H.273's; P3 primaries with a
    /// D65 white are Display P3, 12; gray with a D65 white is given BT.2020's, which keep it gray) and the encoding, to
    /// ask libjxl for the pixels in it. Nil for SDR, or a colour only an ICC profile describes.
    static func hdrSignal(_ decoder: OpaquePointer) -> (cicp: EmbeddedColor.CICP, encoding: JxlColorEncoding)? {
        var e = JxlColorEncoding()
        guard
            JxlDecoderGetColorAsEncodedProfile(decoder, nil, JXL_COLOR_PROFILE_TARGET_ORIGINAL, &e) == JXL_DEC_SUCCESS,
            e.color_space == JXL_COLOR_SPACE_RGB || e.color_space == JXL_COLOR_SPACE_GRAY,
            e.transfer_function == JXL_TRANSFER_FUNCTION_PQ || e.transfer_function == JXL_TRANSFER_FUNCTION_HLG
        else { return nil }
        let primaries: Int =
            switch (e.primaries, e.white_point) {
            case (_, JXL_WHITE_POINT_D65) where e.color_space == JXL_COLOR_SPACE_GRAY: 9
            case (JXL_PRIMARIES_SRGB, JXL_WHITE_POINT_D65): 1
            case (JXL_PRIMARIES_2100, JXL_WHITE_POINT_D65): 9
            case (JXL_PRIMARIES_P3, JXL_WHITE_POINT_DCI): 11
            case (JXL_PRIMARIES_P3, JXL_WHITE_POINT_D65): 12
            default: 2  // custom primaries: unspecified, so not tone-mapped
            }
        let cicp = EmbeddedColor.CICP(
            primaries: primaries, transfer: Int(e.transfer_function.rawValue), matrix: 0, fullRange: true)
        return (cicp, e)
    }

    /// The probe's HDR details of a JPEG XL in PQ or HLG (nil otherwise). JPEG XL states no content light level
    /// (its `intensity_target` is the coding range's peak, not the content's), so the tone map measures the peak.
    static func hdrDetails(_ decoder: OpaquePointer) -> HDRDetails? {
        guard let signal = hdrSignal(decoder) else { return nil }
        return HDRDetails(
            primaries: signal.cicp.primaries, transfer: signal.cicp.transfer, hasICC: false, lightLevel: nil)
    }

    /// Decodes a PQ or HLG JPEG XL to SDR sRGB at the plan's size: libjxl renders the coded colour (an XYB image
    /// into its PQ or HLG signal) as 16-bit RGBA, whose rows are averaged at the strongest shrink denominator that
    /// keeps the shrink-on-load margin and tone-mapped (``HDRReducedImage``), as the AVIF, HEIF and PNG decoders do.
    func decodeHDR(
        _ bytes: UnsafeRawBufferPointer, probe: ImageProbe, plan: DecodePlan, options: DecodeOptions,
        allocate: BitmapAllocator
    ) throws(DarkroomImageError) -> CodecOutput {
        guard let signal = probe.hdr?.cicp else { throw DarkroomImageError(.corrupt, "the JPEG XL is not HDR") }
        return try HDRReducedImage.decode(
            sourceWidth: probe.width, sourceHeight: probe.height, isOpaque: !probe.hasAlpha, signal: signal,
            plan: plan, options: options, allocate: allocate, what: "JPEG XL"
        ) { reduced, rows throws(DarkroomImageError) in
            try Self.streamSignal(bytes, probe: probe, limits: options.limits) { row, y in
                if rows.contains(y) { reduced.addRGBA16(row, sourceRow: y) }
            }
        }
    }

    /// The whole of a PQ or HLG JPEG XL reduced by `d` in linear light for an HDR output (``HDRLightImage``, rolled
    /// off to `target`'s peak), with its CICP primaries; nil when it is not one the tone mapper reads.
    func reduceHDRLight(
        _ bytes: UnsafeRawBufferPointer, probe: ImageProbe, d: Int, target: HDRLightTarget, options: DecodeOptions
    ) throws(DarkroomImageError) -> (light: HDRLightImage, primaries: Int)? {
        let limits = options.limits
        guard
            let light = try HDRLightImage(probe: probe, d: d, target: target, limits: limits, what: "JPEG XL")
        else { return nil }
        try Self.streamSignal(bytes, probe: probe, limits: limits) { row, y in light.addRGBA16(row, sourceRow: y) }
        return (light, probe.hdr?.primaries ?? 0)
    }

    /// Streams every row of a PQ or HLG JPEG XL as premultiplied RGBA16 in its coded signal, top to bottom.
    private static func streamSignal(
        _ bytes: UnsafeRawBufferPointer, probe: ImageProbe, limits: DecodeLimits,
        _ body: @escaping (UnsafePointer<UInt16>, Int) -> Void
    ) throws(DarkroomImageError) {
        try streamRows(
            bytes, probe: probe, sample: JXL_TYPE_UINT16,
            color: { decoder throws(DarkroomImageError) in
                guard var signal = hdrSignal(decoder) else {
                    throw DarkroomImageError(.corrupt, "the JPEG XL's colour changed between probe and decode")
                }
                // An XYB image is rendered into the signal it was coded from; others are in it already (and
                // libjxl refuses the call).
                _ = JxlDecoderSetPreferredColorProfile(decoder, &signal.encoding)
            },
            sink: { info throws(DarkroomImageError) in
                let premultiply = info.alpha_bits > 0 && info.alpha_premultiplied == 0
                let width = probe.width
                return try JXLRowAssembler(
                    width: width, height: probe.height, bytesPerPixel: 8, maxBytes: limits.maxDecodedBytes
                ) { raw, y in
                    let row = raw.assumingMemoryBound(to: UInt16.self)
                    if premultiply { HDRReducedImage.premultiplyRGBA16(row, width: width) }
                    body(row, y)
                }
            })
    }
}
