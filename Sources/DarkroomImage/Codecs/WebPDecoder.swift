import CWebP

/// WebP through libwebp.
///
/// Still images use libwebp's own crop-then-scale decode (premultiplied BGRA, external memory with our row
/// stride): no full-size buffer at any point. libwebp's scaler is a box filter, visibly softer than Lanczos on fine
/// patterns, so a reduction of more than 2× follows libvips's rule: libwebp shrinks on load only to about twice
/// the output (never below ``DecodeOptions/shrinkOnLoadMargin`` × 2), and the Lanczos resampler does the rest. Animated files decode their first
/// frame on the full canvas with WebPAnimDecoder (bounded by ``DecodeLimits/maxDecodedBytes``), then stream
/// rows through the resampler.
struct WebPDecoder: CodecDecoder {
    let format = ImageFileFormat.webp

    func decode(
        _ bytes: UnsafeRawBufferPointer, probe: ImageProbe, plan: DecodePlan, working: PixelFormat,
        options: DecodeOptions, allocate: BitmapAllocator
    ) throws(DarkroomImageError) -> CodecOutput {
        guard let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) else {
            throw DarkroomImageError(.empty, "the input is empty")
        }
        if probe.frameCount > 1 {
            return try decodeFirstFrame(
                base, bytes.count, probe: probe, plan: plan, options: options, allocate: allocate)
        }
        let opaque = !probe.hasAlpha
        // How much the (cropped) source is larger than twice the output: shrink on load by that much, then resample.
        let factor =
            min(
                plan.sourceRect.width / Double(2 * plan.outputWidth),
                plan.sourceRect.height / Double(2 * plan.outputHeight))
            / max(options.shrinkOnLoadMargin, 1)
        if factor > 1.0 && options.filter != .box {
            let width = max(1, Int((Double(probe.width) / factor).rounded(.up)))
            let height = max(1, Int((Double(probe.height) / factor).rounded(.up)))
            let shrunk = try Bitmap.allocateOnHeap(
                width: width, height: height, format: .bgra8Premultiplied, isOpaque: opaque)
            try Self.decodeStill(base, bytes.count, into: shrunk, crop: nil, probe: probe)
            let destination = try RowDestination(
                plan: plan, sourceWidth: width, sourceHeight: height, format: .bgra8Premultiplied,
                isOpaque: opaque, filter: options.filter, allocate: allocate)
            for y in destination.requiredRows.clamped(to: 0..<height) { destination.consume(row: shrunk.row(y), y: y) }
            return CodecOutput(bitmap: destination.finish())
        }
        let bitmap = try Bitmap.allocate(
            plan.outputWidth, plan.outputHeight, .bgra8Premultiplied, opaque, using: allocate)
        try Self.decodeStill(
            base, bytes.count, into: bitmap, crop: plan.isFullSource ? nil : plan.sourceRect, probe: probe)
        return CodecOutput(bitmap: bitmap)
    }

    /// Decodes a still WebP into `bitmap`, cropping to `crop` (source pixels) first and scaling to the bitmap's size.
    private static func decodeStill(
        _ base: UnsafePointer<UInt8>, _ count: Int, into bitmap: Bitmap, crop: SourceRect?,
        probe: ImageProbe
    ) throws(DarkroomImageError) {
        var config = WebPDecoderConfig()
        guard WebPInitDecoderConfig(&config) != 0 else {
            throw DarkroomImageError(.unsupportedFeature, "libwebp's decoder ABI does not match its header")
        }
        if let r = crop {
            config.options.use_cropping = 1
            config.options.crop_left = Int32(r.x.rounded(.down))
            config.options.crop_top = Int32(r.y.rounded(.down))
            config.options.crop_width = Int32(max(1, min(r.width.rounded(), Double(probe.width) - r.x.rounded(.down))))
            config.options.crop_height = Int32(
                max(1, min(r.height.rounded(), Double(probe.height) - r.y.rounded(.down))))
        }
        if bitmap.width != probe.width || bitmap.height != probe.height || crop != nil {
            config.options.use_scaling = 1
            config.options.scaled_width = Int32(bitmap.width)
            config.options.scaled_height = Int32(bitmap.height)
        }
        config.output.colorspace = MODE_bgrA
        config.output.is_external_memory = 1
        config.output.u.RGBA.rgba = bitmap.storage.baseAddress.assumingMemoryBound(to: UInt8.self)
        config.output.u.RGBA.stride = Int32(bitmap.bytesPerRow)
        config.output.u.RGBA.size = bitmap.cost
        let status = WebPDecode(base, count, &config)
        WebPFreeDecBuffer(&config.output)
        try check(status)
    }

    private func decodeFirstFrame(
        _ base: UnsafePointer<UInt8>, _ count: Int, probe: ImageProbe, plan: DecodePlan,
        options: DecodeOptions, allocate: BitmapAllocator
    ) throws(DarkroomImageError) -> CodecOutput {
        let canvasBytes = probe.width * probe.height * 4
        guard canvasBytes + plan.outputBytes(.bgra8Premultiplied) <= options.limits.maxDecodedBytes else {
            throw DarkroomImageError(
                .limitExceeded,
                "an animated \(probe.width)×\(probe.height) WebP needs a \(canvasBytes)-byte canvas, over maxDecodedBytes (\(options.limits.maxDecodedBytes))"
            )
        }
        var animOptions = WebPAnimDecoderOptions()
        guard WebPAnimDecoderOptionsInit(&animOptions) != 0 else {
            throw DarkroomImageError(.unsupportedFeature, "libwebp's demux ABI does not match its header")
        }
        animOptions.color_mode = MODE_bgrA
        animOptions.use_threads = 0
        var data = WebPData(bytes: base, size: count)
        guard let decoder = WebPAnimDecoderNew(&data, &animOptions) else {
            throw DarkroomImageError(.corrupt, "libwebp could not parse the animation")
        }
        defer { WebPAnimDecoderDelete(decoder) }
        var info = WebPAnimInfo()
        guard WebPAnimDecoderGetInfo(decoder, &info) != 0, Int(info.canvas_width) == probe.width,
            Int(info.canvas_height) == probe.height
        else {
            throw DarkroomImageError(.corrupt, "the animation's canvas does not match its header")
        }
        var frame: UnsafeMutablePointer<UInt8>?
        var timestamp: Int32 = 0
        guard WebPAnimDecoderGetNext(decoder, &frame, &timestamp) != 0, let frame else {
            throw DarkroomImageError(.corrupt, "the first frame of the animation could not be decoded")
        }
        let meter = PixelMemory.allocated(canvasBytes)  // libwebp's canvas, counted while we read it
        defer { PixelMemory.released(canvasBytes, meter: meter) }
        let destination = try RowDestination(
            plan: plan, sourceWidth: probe.width, sourceHeight: probe.height,
            format: .bgra8Premultiplied, isOpaque: !probe.hasAlpha, filter: options.filter,
            allocate: allocate)
        for y in destination.requiredRows.clamped(to: 0..<probe.height) {
            destination.consume(row: frame + y * probe.width * 4, y: y)
        }
        return CodecOutput(bitmap: destination.finish())
    }

    static func check(_ status: VP8StatusCode) throws(DarkroomImageError) {
        switch status {
        case VP8_STATUS_OK: return
        case VP8_STATUS_NOT_ENOUGH_DATA:
            throw DarkroomImageError(.truncated, "the WebP data ends early", codecMessage: "VP8_STATUS_NOT_ENOUGH_DATA")
        case VP8_STATUS_OUT_OF_MEMORY:
            throw DarkroomImageError(
                .outOfMemory, "libwebp ran out of memory", codecMessage: "VP8_STATUS_OUT_OF_MEMORY")
        case VP8_STATUS_UNSUPPORTED_FEATURE:
            throw DarkroomImageError(
                .unsupportedFeature, "this WebP variant is not supported",
                codecMessage: "VP8_STATUS_UNSUPPORTED_FEATURE")
        case VP8_STATUS_INVALID_PARAM:
            throw DarkroomImageError(
                .invalidArgument, "libwebp refused the decode parameters", codecMessage: "VP8_STATUS_INVALID_PARAM")
        default:
            throw DarkroomImageError(
                .corrupt, "the WebP data is corrupt", codecMessage: "VP8StatusCode \(status.rawValue)")
        }
    }
}
