import CHeif

extension HEIFDecoder {
    /// Decodes a PQ or HLG image (`signal`, as ``hdrSignal(_:reading:)`` or ``hdrSignal(_:details:)`` read it; asked
    /// for in sRGB) to SDR sRGB at the plan's size: libheif's Y'CbCr planes (with transparency, its 16-bit RGBA) are
    /// reduced at the strongest shrink denominator (8, 4 or 2) that keeps the shrink-on-load margin, then tone-mapped
    /// (``HDRReducedImage``). Returns nil for anything else (an SDR image, a matrix or primaries not covered): the
    /// caller decodes it as SDR. `reading` is the colour the output reports.
    func decodeHDR(
        _ handle: OpaquePointer, signal: (HDRTransfer, EmbeddedColor.CICP)?, reading: ColorReading, width: Int,
        height: Int, hasAlpha: Bool, plan: DecodePlan, options: DecodeOptions,
        decodeOptions: UnsafeMutablePointer<heif_decoding_options>, allocate: BitmapAllocator
    ) throws(DarkroomImageError) -> CodecOutput? {
        guard options.colorSpace == .sRGB, let (transfer, cicp) = signal else { return nil }
        if hasAlpha {
            // With transparency, libheif's 16-bit RGBA conversion, the alpha plane applied to the colour
            return try HDRReducedImage.decode(
                sourceWidth: width, sourceHeight: height, isOpaque: false, signal: cicp, plan: plan, options: options,
                allocate: allocate, what: "HEIF"
            ) { reduced, rows throws(DarkroomImageError) in
                try Self.rgba16Rows(handle, width: width, height: height, rows: rows, decodeOptions: decodeOptions) {
                    reduced.addRGBA16($0, sourceRow: $1)
                }
            }
        }
        let d = plan.shrinkOnLoadDenominator(options)
        let reducedHeight = (height + d - 1) / d
        let destination = try RowDestination(
            plan: plan, sourceWidth: (width + d - 1) / d, sourceHeight: reducedHeight, format: .bgra8Premultiplied,
            isOpaque: true, filter: options.filter, allocate: allocate)
        let rows = destination.requiredRows.clamped(to: 0..<reducedHeight)
        let reduced = try HDRReducedImage(
            sourceWidth: width, sourceHeight: height, d: d, limits: options.limits, what: "HEIF")
        guard
            try reduce(
                handle, width: width, height: height,
                rows: (rows.lowerBound * d)..<min(rows.upperBound * d, height), decodeOptions: decodeOptions,
                into: reduced),
            try reduced.toneMap(transfer: transfer, primaries: cicp.primaries, rows: rows, into: destination)
        else { return nil }
        return .toneMapped(destination.finish(), shrinkDenominator: d, color: reading)
    }

    /// The whole primary image of a PQ or HLG HEIF reduced by `d` in linear light for an HDR output
    /// (``HDRLightImage``, rolled off to `target`'s peak), with its CICP primaries; nil when it is not one the
    /// tone mapper reads (SDR, alpha, a matrix or primaries not covered).
    /// - Throws: ``DarkroomImageError`` `.limitExceeded` past ``DecodeLimits/maxDecodedBytes``, or from libheif.
    func reduceHDRLight(
        _ bytes: UnsafeRawBufferPointer, probe: ImageProbe, d: Int, target: HDRLightTarget, options: DecodeOptions
    ) throws(DarkroomImageError) -> (light: HDRLightImage, primaries: Int)? {
        let limits = options.limits
        let container = try Container(bytes, limits: limits)
        let handle = container.primary
        guard heif_image_handle_has_alpha_channel(handle) == 0, let hdr = probe.hdr,
            let (transfer, cicp) = Self.hdrSignal(handle, details: hdr)
        else { return nil }
        let depth = max(8, Int(heif_image_handle_get_luma_bits_per_pixel(handle)))
        let frameBytes = Self.workingBytes(width: probe.width, height: probe.height, hasAlpha: false, bitDepth: depth)
        guard frameBytes <= limits.maxDecodedBytes else {
            throw DarkroomImageError(
                .limitExceeded,
                "decoding a \(probe.width)×\(probe.height) HEIC needs \(frameBytes) bytes of frames, over maxDecodedBytes (\(limits.maxDecodedBytes))"
            )
        }
        guard let decodeOptions = heif_decoding_options_alloc() else {
            throw DarkroomImageError(.outOfMemory, "could not allocate HEIF decoding options")
        }
        defer { heif_decoding_options_free(decodeOptions) }
        let meter = PixelMemory.allocated(frameBytes)
        defer { PixelMemory.released(frameBytes, meter: meter) }
        var remaining = limits  // the reduced light beside libheif's frames
        remaining.maxDecodedBytes -= frameBytes
        guard
            let light = try HDRLightImage(
                sourceWidth: probe.width, sourceHeight: probe.height, d: d, transfer: transfer,
                primaries: cicp.primaries, target: target, limits: remaining, what: "HEIC"),
            try reduce(
                handle, width: probe.width, height: probe.height, rows: 0..<probe.height,
                decodeOptions: decodeOptions, into: light)
        else { return nil }
        return (light, cicp.primaries)
    }

    /// The PQ or HLG signal of `handle`'s colour (`reading`, as ``readColor(_:limits:)-(OpaquePointer,_)`` read it):
    /// its `nclx`, or the signal its ICC profile describes (``ICCHDRSignal``, an lcms2 parse; 10- and 12-bit images
    /// only), coded as ``coding(_:primaries:transfer:)`` says. Nil for SDR.
    static func hdrCICP(_ handle: OpaquePointer, reading: ColorReading) -> EmbeddedColor.CICP? {
        switch reading.color {
        case .cicp(let cicp)?:
            return HDRTransfer(cicp: cicp.transfer) != nil ? cicp : nil
        case .icc(let icc)?:
            guard heif_image_handle_get_luma_bits_per_pixel(handle) > 8,
                let signal = icc.withUnsafeBytes({ ICCHDRSignal.cicp($0) })
            else { return nil }
            return coding(handle, primaries: signal.primaries, transfer: signal.transfer)
        default:
            return nil
        }
    }

    /// The signal `primaries` and `transfer` with the Y'CbCr coding of `handle`'s samples: the matrix and range of
    /// its `nclx` box, else libheif's default (BT.601, full range).
    private static func coding(_ handle: OpaquePointer, primaries: Int, transfer: Int) -> EmbeddedColor.CICP {
        var nclx: UnsafeMutablePointer<heif_color_profile_nclx>?
        guard heif_image_handle_get_nclx_color_profile(handle, &nclx).code == heif_error_Ok, let nclx else {
            return EmbeddedColor.CICP(primaries: primaries, transfer: transfer, matrix: 6, fullRange: true)
        }
        defer { heif_nclx_color_profile_free(nclx) }
        return EmbeddedColor.CICP(
            primaries: primaries, transfer: transfer, matrix: Int(nclx.pointee.matrix_coefficients.rawValue),
            fullRange: nclx.pointee.full_range_flag != 0)
    }

    /// The transfer and CICP colour of a PQ or HLG image the tone mapper reads (``hdrCICP(_:reading:)``), else nil:
    /// for an image the probe has not read (a thumbnail item, which has its own colour).
    static func hdrSignal(_ handle: OpaquePointer, reading: ColorReading) -> (HDRTransfer, EmbeddedColor.CICP)? {
        guard let cicp = hdrCICP(handle, reading: reading) else { return nil }
        return toneMapped(cicp)
    }

    /// The transfer and CICP colour of the primary image, following the probe's reading of it (`details`) rather than
    /// reading its profile again; nil when the tone mapper does not read it.
    static func hdrSignal(_ handle: OpaquePointer, details: HDRDetails) -> (HDRTransfer, EmbeddedColor.CICP)? {
        guard details.toneMapped else { return nil }
        return toneMapped(coding(handle, primaries: details.primaries, transfer: details.cicp.transfer))
    }

    private static func toneMapped(_ cicp: EmbeddedColor.CICP) -> (HDRTransfer, EmbeddedColor.CICP)? {
        HDRTransfer.toneMapped(cicp: cicp.transfer, primaries: cicp.primaries).map { ($0, cicp) }
    }

    /// Decodes `handle` to 16-bit RGBA through libheif and hands source `rows` to `body` as premultiplied RGBA16
    /// (samples scaled from the image's bit depth to 16 bits), in order.
    private static func rgba16Rows(
        _ handle: OpaquePointer, width: Int, height: Int, rows: Range<Int>,
        decodeOptions: UnsafeMutablePointer<heif_decoding_options>, _ body: (UnsafePointer<UInt16>, Int) -> Void
    ) throws(DarkroomImageError) {
        var image: OpaquePointer?
        let error = heif_decode_image(
            handle, &image, heif_colorspace_RGB, heif_chroma_interleaved_RRGGBBAA_LE, decodeOptions)
        guard error.code == heif_error_Ok, let image else { throw failure(error, "decoding") }
        defer { heif_image_release(image) }
        var stride: Int32 = 0
        let depth = Int(heif_image_get_bits_per_pixel_range(image, heif_channel_interleaved))
        guard let plane = heif_image_get_plane_readonly(image, heif_channel_interleaved, &stride),
            (8...16).contains(depth), Int(heif_image_get_primary_width(image)) == width,
            Int(heif_image_get_primary_height(image)) == height
        else { throw DarkroomImageError(.corrupt, "libheif returned an image of an unexpected size or layout") }
        let premultiplied = heif_image_is_premultiplied_alpha(image) != 0
        let maximum = UInt32(1) << depth - 1
        let row = try ScratchBuffer<UInt16>(count: width * 4, zeroed: false)
        for y in rows {
            let source = UnsafeRawPointer(plane + y * Int(stride))
            for i in 0..<(width * 4) {
                let v = UInt32(UInt16(littleEndian: source.loadUnaligned(fromByteOffset: 2 * i, as: UInt16.self)))
                row.pointer[i] = UInt16((min(v, maximum) * 65535 + maximum / 2) / maximum)
            }
            if !premultiplied { HDRReducedImage.premultiplyRGBA16(row.pointer, width: width) }
            body(row.pointer, y)
        }
    }

    /// Decodes `handle` to Y'CbCr 4:4:4 planes and reduces source rows `needed` into `reduced`, converted with the
    /// matrix and range libheif's own conversion would use (``sampleCoding(_:)``); false when libheif's planes are not
    /// that layout or the matrix is not covered.
    ///
    /// 4:4:4 whatever the coding: the reducer averages a PQ or HLG signal, whose chroma must not be averaged before
    /// the light is: a 4:4:4 image asked for as 4:2:0 loses its colour detail to libheif's averaging of code values
    /// (green and blue a few levels off after tone mapping), and libheif 1.15 tells neither a handle's coded chroma
    /// nor keeps it when left to choose. A 4:2:0 image costs libheif's chroma upsampling (its nearest sample), which
    /// the reducer's box filter averages back; ``workingBytes(width:height:hasAlpha:bitDepth:)`` counts 4:4:4.
    private func reduce(
        _ handle: OpaquePointer, width: Int, height: Int, rows needed: Range<Int>,
        decodeOptions: UnsafeMutablePointer<heif_decoding_options>, into reduced: some HDRBlockReducer
    ) throws(DarkroomImageError) -> Bool {
        var image: OpaquePointer?
        let error = heif_decode_image(handle, &image, heif_colorspace_YCbCr, heif_chroma_444, decodeOptions)
        guard error.code == heif_error_Ok, let image else { throw Self.failure(error, "decoding") }
        defer { heif_image_release(image) }
        let depth = Int(heif_image_get_bits_per_pixel_range(image, heif_channel_Y))
        let coding = Self.sampleCoding(image)
        guard heif_image_get_colorspace(image) == heif_colorspace_YCbCr,
            heif_image_get_chroma_format(image) == heif_chroma_444,
            Int(heif_image_get_primary_width(image)) == width, Int(heif_image_get_primary_height(image)) == height,
            let coefficients = YUVCoefficients(matrix: coding.matrix, bitDepth: depth, fullRange: coding.fullRange)
        else { return false }
        let plane = { (channel: heif_channel) in Self.plane(image, channel, width, height, depth: depth) }
        guard let y = plane(heif_channel_Y), let cb = plane(heif_channel_Cb), let cr = plane(heif_channel_Cr)
        else { return false }
        reduced.reducePlanes(
            y: y, cb: cb, cr: cr, bitDepth: depth, shiftX: 0, shiftY: 0, coefficients: coefficients, rows: needed)
        return true
    }
}
