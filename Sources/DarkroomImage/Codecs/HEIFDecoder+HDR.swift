import CHeif

extension HEIFDecoder {
    /// Decodes a PQ or HLG image (its `nclx` colour says so, asked for in sRGB, opaque) to SDR sRGB at the plan's
    /// size: libheif's Y'CbCr planes are reduced at the strongest shrink denominator (8, 4 or 2) that keeps the
    /// shrink-on-load margin, then tone-mapped (``HDRReducedImage``). Returns nil for anything else (an SDR or
    /// ICC-described image, alpha, a matrix or primaries not covered): the caller decodes it as SDR.
    func decodeHDR(
        _ handle: OpaquePointer, reading: ColorReading, width: Int, height: Int, hasAlpha: Bool, plan: DecodePlan,
        options: DecodeOptions, decodeOptions: UnsafeMutablePointer<heif_decoding_options>,
        allocate: BitmapAllocator
    ) throws(DarkroomImageError) -> CodecOutput? {
        guard options.colorSpace == .sRGB, !hasAlpha, case .cicp(let cicp)? = reading.color,
            let transfer = HDRTransfer.toneMapped(cicp: cicp.transfer, primaries: cicp.primaries)
        else { return nil }
        let d = plan.shrinkOnLoadDenominator(options)
        var image: OpaquePointer?
        let error = heif_decode_image(handle, &image, heif_colorspace_YCbCr, heif_chroma_420, decodeOptions)
        guard error.code == heif_error_Ok, let image else { throw Self.failure(error, "decoding") }
        defer { heif_image_release(image) }
        let depth = Int(heif_image_get_bits_per_pixel_range(image, heif_channel_Y))
        guard heif_image_get_colorspace(image) == heif_colorspace_YCbCr,
            heif_image_get_chroma_format(image) == heif_chroma_420,
            Int(heif_image_get_primary_width(image)) == width, Int(heif_image_get_primary_height(image)) == height,
            let coefficients = YUVCoefficients(matrix: cicp.matrix, bitDepth: depth, fullRange: cicp.fullRange)
        else { return nil }
        let plane = { (channel: heif_channel, w: Int, h: Int) in Self.plane(image, channel, w, h, depth: depth) }
        guard let y = plane(heif_channel_Y, width, height),
            let cb = plane(heif_channel_Cb, (width + 1) / 2, (height + 1) / 2),
            let cr = plane(heif_channel_Cr, (width + 1) / 2, (height + 1) / 2)
        else { return nil }
        let reduced = try HDRReducedImage(
            sourceWidth: width, sourceHeight: height, d: d, limits: options.limits, what: "HEIF")
        let destination = try RowDestination(
            plan: plan, sourceWidth: reduced.width, sourceHeight: reduced.height, format: .bgra8Premultiplied,
            isOpaque: true, filter: options.filter, allocate: allocate)
        let rows = destination.requiredRows.clamped(to: 0..<reduced.height)
        let needed = (rows.lowerBound * d)..<min(rows.upperBound * d, height)
        reduced.reducePlanes(
            y: y, cb: cb, cr: cr, bitDepth: depth, shiftX: 1, shiftY: 1, coefficients: coefficients, rows: needed,
            sourceWidth: width, sourceHeight: height)
        guard try reduced.toneMap(transfer: transfer, primaries: cicp.primaries, rows: rows, into: destination) else {
            return nil
        }
        var converted = reading
        converted.convertedByCodec = true
        return CodecOutput(bitmap: destination.finish(), shrinkDenominator: d, colorReading: converted)
    }
}
