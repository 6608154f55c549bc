import CDarkroomGIF

/// GIF's first frame through giflib (via the C shim), composed onto the logical screen (transparent outside
/// the frame). GIF rows may be interlaced, so the canvas is decoded whole (bounded by
/// ``DecodeLimits/maxDecodedBytes``) — straight into the bitmap at identity size, else into a counted scratch
/// canvas that is streamed through the resampler.
struct GIFDecoder: CodecDecoder {
    let format = ImageFileFormat.gif

    func decode(
        _ bytes: UnsafeRawBufferPointer, probe: ImageProbe, plan: DecodePlan, working: PixelFormat,
        options: DecodeOptions, allocate: BitmapAllocator
    ) throws(DarkroomImageError) -> CodecOutput {
        guard let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) else {
            throw DarkroomImageError(.empty, "the input is empty")
        }
        let w = probe.width
        let h = probe.height
        let destination = try RowDestination(
            plan: plan, sourceWidth: w, sourceHeight: h, format: .bgra8Premultiplied,
            isOpaque: false, filter: options.filter, allocate: allocate)
        var info = dr_gif_info()
        var message = [CChar](repeating: 0, count: 256)
        if destination.isDirect {
            let bitmap = destination.bitmap
            let status = dr_gif_decode_first_frame(
                base, bytes.count, bitmap.storage.baseAddress.assumingMemoryBound(to: UInt8.self),
                bitmap.bytesPerRow, Int32(w), Int32(h), &info, &message, message.count)
            try Self.check(status, message)
            return CodecOutput(bitmap: Self.withMeasuredOpacity(destination.finish()))
        }
        let canvasBytes = w * h * 4
        guard canvasBytes + plan.outputBytes(.bgra8Premultiplied) <= options.limits.maxDecodedBytes else {
            throw DarkroomImageError(
                .limitExceeded,
                "a \(w)×\(h) GIF needs a \(canvasBytes)-byte canvas, over maxDecodedBytes (\(options.limits.maxDecodedBytes))"
            )
        }
        let canvas = try ScratchBuffer<UInt8>(count: canvasBytes, zeroed: false)
        let status = dr_gif_decode_first_frame(
            base, bytes.count, canvas.pointer, w * 4, Int32(w), Int32(h),
            &info, &message, message.count)
        try Self.check(status, message)
        for y in destination.requiredRows.clamped(to: 0..<h) {
            destination.consume(row: canvas.pointer + y * w * 4, y: y)
        }
        return CodecOutput(bitmap: Self.withMeasuredOpacity(destination.finish()))
    }

    /// A first frame smaller than the logical screen leaves transparent pixels even without a transparent
    /// index, so opacity is read off the (small) output rather than trusted from the header.
    static func withMeasuredOpacity(_ bitmap: Bitmap) -> Bitmap {
        for y in 0..<bitmap.height {
            let row = bitmap.row(y).assumingMemoryBound(to: UInt8.self)
            for x in 0..<bitmap.width where row[4 * x + 3] != 255 { return bitmap.with(isOpaque: false) }
        }
        return bitmap.with(isOpaque: true)
    }

    static func check(_ status: Int32, _ message: [CChar]) throws(DarkroomImageError) {
        guard status != Int32(DR_GIF_OK.rawValue) else { return }
        throw error(status, message, truncation: "the GIF data ends inside its first frame")
    }

    /// The typed error for a shim status (any but `DR_GIF_OK`), with giflib's message; `truncation` says where the
    /// data ended.
    static func error(_ status: Int32, _ message: [CChar], truncation: String) -> DarkroomImageError {
        let codec = message.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        switch dr_gif_status(rawValue: UInt32(status)) {
        case DR_GIF_ERR_TRUNCATED: return DarkroomImageError(.truncated, truncation, codecMessage: codec)
        case DR_GIF_ERR_NO_FRAME: return DarkroomImageError(.corrupt, "the GIF has no image", codecMessage: codec)
        case DR_GIF_ERR_NO_MEMORY:
            return DarkroomImageError(.outOfMemory, "giflib ran out of memory", codecMessage: codec)
        case DR_GIF_ERR_ARGUMENT:
            return DarkroomImageError(.invalidArgument, "the GIF shim refused its arguments", codecMessage: codec)
        default: return DarkroomImageError(.corrupt, "the GIF data is corrupt", codecMessage: codec)
        }
    }
}
