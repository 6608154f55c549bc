import CDarkroomTIFF

extension TIFFDecoder {
    /// The PQ or HLG signal of a 16-bit RGB or gray page whose ICC profile says so (``ICCHDRSignal``); nil otherwise. The
    /// profile is read from `image` (a directory just selected: its tag data is freed when another is read).
    static func hdrSignal(_ image: dr_tiff_image, limits: DecodeLimits) -> EmbeddedColor.CICP? {
        guard let layout = RowLayout(image), layout.isHDR16,
            image.icc_length > 0, Int(image.icc_length) <= limits.maxColorProfileBytes, let icc = image.icc
        else { return nil }
        return ICCHDRSignal.cicp(UnsafeRawBufferPointer(start: icc, count: Int(image.icc_length)))
    }

    /// Decodes a 16-bit PQ or HLG page to SDR sRGB at the plan's size: its rows, premultiplied RGBA16, averaged at
    /// the strongest shrink denominator that keeps the shrink-on-load margin and tone-mapped (``HDRReducedImage``),
    /// as the AVIF, HEIF, PNG and JPEG XL decoders do. Only the rows the output needs are read.
    static func decodeHDR(
        _ handle: Handle, _ image: dr_tiff_image, signal: EmbeddedColor.CICP, plan: DecodePlan,
        options: DecodeOptions, allocate: BitmapAllocator
    ) throws(DarkroomImageError) -> CodecOutput {
        guard let layout = RowLayout(image), layout.isHDR16 else {
            throw DarkroomImageError(
                .unsupportedFeature, "this HDR TIFF layout (not 16-bit RGB or gray) is not supported")
        }
        return try HDRReducedImage.decode(
            sourceWidth: Int(image.width), sourceHeight: Int(image.height), isOpaque: !layout.hasAlpha,
            signal: signal, plan: plan, options: options, allocate: allocate, what: "TIFF"
        ) { reduced, rows throws(DarkroomImageError) in
            try rgba16Rows(handle, image, layout: layout, rows: rows) { row, y in reduced.addRGBA16(row, sourceRow: y) }
        }
    }

    /// The whole page ``OutputGeometry/page`` of a 16-bit PQ or HLG TIFF reduced by `d` in linear light for an HDR
    /// output (``HDRLightImage``, rolled off to `target`'s peak), with its CICP primaries; nil when it is not one the
    /// tone mapper reads. The page itself is read, not a reduced rendition of it.
    func reduceHDRLight(
        _ bytes: UnsafeRawBufferPointer, probe: ImageProbe, d: Int, target: HDRLightTarget, options: DecodeOptions
    ) throws(DarkroomImageError) -> (light: HDRLightImage, primaries: Int)? {
        let limits = options.limits
        let handle = try Handle(bytes, limits: limits)
        let pages = try Self.pages(handle, limits: limits)
        guard options.geometry.page >= 0, options.geometry.page < pages.count else {
            throw DarkroomImageError(
                .invalidArgument, "page \(options.geometry.page) asked of a TIFF with \(pages.count)")
        }
        let image = try handle.select(pages[options.geometry.page].index)
        guard let layout = RowLayout(image), layout.isHDR16, let hdr = probe.hdr, hdr.toneMapped,
            let light = try HDRLightImage(probe: probe, d: d, target: target, limits: limits, what: "TIFF")
        else { return nil }
        try Self.rgba16Rows(handle, image, layout: layout, rows: 0..<Int(image.height)) { row, y in
            light.addRGBA16(row, sourceRow: y)
        }
        return (light, hdr.primaries)
    }

    /// Reads source `rows` of a 16-bit RGB or gray page as premultiplied RGBA16 and hands each to `body`, in order.
    private static func rgba16Rows(
        _ handle: Handle, _ image: dr_tiff_image, layout: RowLayout, rows: Range<Int>,
        _ body: (UnsafePointer<UInt16>, Int) -> Void
    ) throws(DarkroomImageError) {
        let width = Int(image.width)
        let stride = width * Int(image.samples_per_pixel) * 2 + 64
        let stored = try ScratchBuffer<UInt8>(count: stride, zeroed: true)
        let row = try ScratchBuffer<UInt16>(count: width * 4, zeroed: false)
        for y in rows {
            let status = dr_tiff_read_raw(handle.tiff, UInt32(y), 1, stored.pointer, stride)
            guard status == Int32(DR_TIFF_OK.rawValue) else { throw failure(status, handle, row: y) }
            layout.convertRGBA16(UnsafeRawPointer(stored.pointer), row.pointer, width: width)
            body(row.pointer, y)
        }
    }
}

extension TIFFDecoder.RowLayout {
    /// 16-bit unsigned RGB or gray (black is zero), with or without alpha: the layouts an HDR TIFF is read in.
    var isHDR16: Bool { (kind == .rgb || (kind == .gray && !whiteIsZero)) && bits == 16 && !isFloat && !isSigned }

    /// One stored 16-bit RGB(A) or gray (with alpha) row to premultiplied RGBA16, gray in R, G and B.
    func convertRGBA16(_ source: UnsafeRawPointer, _ out: UnsafeMutablePointer<UInt16>, width: Int) {
        for x in 0..<width {
            for c in 0..<3 {
                let sample = kind == .gray ? 0 : c
                out[4 * x + c] = source.loadUnaligned(fromByteOffset: 2 * (x * samples + sample), as: UInt16.self)
            }
            out[4 * x + 3] =
                alpha != 0
                ? source.loadUnaligned(fromByteOffset: 2 * (x * samples + colorSamples), as: UInt16.self) : 65535
        }
        if alpha == 2 { HDRReducedImage.premultiplyRGBA16(out, width: width) }
    }
}
