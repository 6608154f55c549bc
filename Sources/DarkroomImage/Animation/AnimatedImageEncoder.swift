import CDarkroomGIF
import CWebP

#if canImport(Glibc)
    import Glibc
#endif

/// Writes an animated WebP (libwebp's `WebPAnimEncoder`) or animated GIF (giflib, a palette per frame by median
/// cut) one frame at a time: a frame is encoded when it is added, so the caller never holds the sequence.
///
/// Memory: WebP keeps the encoded frames and one or two canvases of the output size; GIF the growing file and one
/// frame's colour planes. Cost: one lossy (or lossless) WebP encode per frame, or one quantization and LZW pass.
/// The GIF writer replaces the whole canvas each frame (no frame differencing), which is simple and plays the same
/// everywhere, at some cost in size. Not thread-safe: one thread at a time.
public final class AnimatedImageEncoder {
    /// The output format: `.webp` or `.gif`.
    public let format: ImageFileFormat
    /// Every frame's size.
    public let width: Int
    /// Every frame's size.
    public let height: Int
    private let options: EncodeOptions
    private var webp: OpaquePointer?
    private var gif: OpaquePointer?
    private var timestamp = 0
    private var frames = 0
    /// The frame in RGBA, converted into the same memory each time.
    private var rgbaFrame: Bitmap?

    /// Starts an animation of `width × height` that plays `plays` times (0 forever, as ``AnimationInfo/plays``).
    /// Lossy WebP uses `options.quality` (and `options.lossless`); GIF ignores both.
    /// - Throws: ``DarkroomImageError`` `.invalidArgument` for another format, a size outside 1...16383 (WebP) or
    ///   1...65535 (GIF), or `plays` outside 0...65535; `.encodeFailed` when the codec refuses.
    public init(
        format: ImageFileFormat, width: Int, height: Int, plays: Int = 0, options: EncodeOptions = EncodeOptions()
    )
        throws(DarkroomImageError)
    {
        guard (0...65535).contains(plays) else {
            throw DarkroomImageError(.invalidArgument, "plays must be 0...65535, got \(plays)")
        }
        guard (1...100).contains(options.quality) else {
            throw DarkroomImageError(.invalidArgument, "quality must be 1...100, got \(options.quality)")
        }
        self.format = format
        self.width = width
        self.height = height
        self.options = options
        switch format {
        case .webp:
            guard (1...16383).contains(width), (1...16383).contains(height) else {
                throw DarkroomImageError(
                    .invalidArgument, "a WebP animation must be 1...16383 px a side, got \(width)×\(height)")
            }
            var animOptions = WebPAnimEncoderOptions()
            guard WebPAnimEncoderOptionsInit(&animOptions) != 0 else {
                throw DarkroomImageError(.unsupportedFeature, "libwebp's mux ABI does not match its header")
            }
            animOptions.anim_params.loop_count = Int32(plays)
            animOptions.allow_mixed = 0
            guard let encoder = WebPAnimEncoderNew(Int32(width), Int32(height), &animOptions) else {
                throw DarkroomImageError(.encodeFailed, "libwebp could not start an animation")
            }
            webp = encoder
        case .gif:
            var status: Int32 = 0
            var message = [CChar](repeating: 0, count: 256)
            // GIF stores repeats after the first play; one play is no loop extension at all.
            let loop = plays == 0 ? 0 : plays == 1 ? -1 : plays - 1
            guard let writer = dr_gif_writer_open(Int32(width), Int32(height), Int32(loop), &status, &message, 256)
            else { throw Self.gifError(status, message) }
            gif = writer
        default:
            throw DarkroomImageError(.invalidArgument, "animations are written as WebP or GIF, not \(format.rawValue)")
        }
    }

    deinit {
        if let webp { WebPAnimEncoderDelete(webp) }
        if let gif { dr_gif_writer_discard(gif) }
    }

    /// Encodes one frame (of the encoder's size, any encodable format) shown for `milliseconds`.
    /// - Throws: `.invalidArgument` for another size or a negative duration, `.encodeFailed`.
    public func add(_ bitmap: Bitmap, duration milliseconds: Int) throws(DarkroomImageError) {
        guard bitmap.width == width, bitmap.height == height else {
            throw DarkroomImageError(
                .invalidArgument, "frame is \(bitmap.width)×\(bitmap.height), the animation \(width)×\(height)")
        }
        guard milliseconds >= 0 else { throw DarkroomImageError(.invalidArgument, "a frame's duration is negative") }
        let encodable = try ImageEncoder.encodable(bitmap)
        // One conversion buffer for every frame: a fresh one per frame would be carved from the block the codec
        // freed, so that its next frame's working memory no longer fits there and the heap grows
        let rgba = try encodable.converted(to: .rgba8) { width, height, format, opaque throws(DarkroomImageError) in
            if let rgbaFrame { return rgbaFrame }
            let made = try Bitmap.allocateOnHeap(width: width, height: height, format: format, isOpaque: opaque)
            rgbaFrame = made
            return made
        }
        let pixels = rgba.storage.baseAddress.assumingMemoryBound(to: UInt8.self)
        if let webp {
            var picture = WebPPicture()
            var config = WebPConfig()
            guard WebPPictureInit(&picture) != 0, WebPConfigInit(&config) != 0 else {
                throw DarkroomImageError(.unsupportedFeature, "libwebp's encoder ABI does not match its header")
            }
            defer { WebPPictureFree(&picture) }
            config.quality = Float(options.quality)
            config.lossless = options.lossless ? 1 : 0
            picture.width = Int32(width)
            picture.height = Int32(height)
            picture.use_argb = 1
            guard WebPPictureImportRGBA(&picture, pixels, Int32(rgba.bytesPerRow)) != 0,
                WebPAnimEncoderAdd(webp, &picture, Int32(clamping: timestamp), &config) != 0
            else {
                throw DarkroomImageError(
                    .encodeFailed, "libwebp could not encode frame \(frames)", codecMessage: Self.webPMessage(webp))
            }
        } else if let gif {
            var message = [CChar](repeating: 0, count: 256)
            let centiseconds = Int32(min(65535, (milliseconds + 5) / 10))
            let status = dr_gif_writer_add(gif, pixels, rgba.bytesPerRow, centiseconds, &message, 256)
            guard status == Int32(DR_GIF_OK.rawValue) else { throw Self.gifError(status, message) }
        }
        timestamp += milliseconds
        frames += 1
    }

    /// Writes the file and returns its bytes; the encoder cannot be used afterwards.
    /// - Throws: `.invalidArgument` when no frame was added, `.encodeFailed`.
    public func finish() throws(DarkroomImageError) -> [UInt8] {
        guard frames > 0 else { throw DarkroomImageError(.invalidArgument, "an animation needs at least one frame") }
        if let webp {
            defer {
                WebPAnimEncoderDelete(webp)
                self.webp = nil
            }
            var data = WebPData()
            defer { WebPDataClear(&data) }
            guard WebPAnimEncoderAdd(webp, nil, Int32(clamping: timestamp), nil) != 0,
                WebPAnimEncoderAssemble(webp, &data) != 0, let bytes = data.bytes
            else {
                throw DarkroomImageError(
                    .encodeFailed, "libwebp could not assemble the animation", codecMessage: Self.webPMessage(webp))
            }
            return Array(UnsafeBufferPointer(start: bytes, count: data.size))
        }
        guard let gif else { throw DarkroomImageError(.invalidArgument, "the animation was already finished") }
        self.gif = nil
        var out: UnsafeMutablePointer<UInt8>?
        var size = 0
        var message = [CChar](repeating: 0, count: 256)
        let status = dr_gif_writer_finish(gif, &out, &size, &message, 256)
        guard status == Int32(DR_GIF_OK.rawValue), let out else { throw Self.gifError(status, message) }
        defer { free(out) }
        return Array(UnsafeBufferPointer(start: out, count: size))
    }

    /// Streams every remaining frame of `decoder` (an animated image's, or a video's preview) into a new animation
    /// of `format`: one decoded frame in memory at a time. Plays as often as the source does.
    public static func encode(
        _ decoder: some AnimationFrameSource, as format: ImageFileFormat, options: EncodeOptions = EncodeOptions()
    ) throws(DarkroomImageError) -> [UInt8] {
        let encoder = try AnimatedImageEncoder(
            format: format, width: decoder.outputWidth, height: decoder.outputHeight, plays: decoder.info.plays,
            options: options)
        // Each frame is encoded before the next is decoded, so one output bitmap serves them all
        var output: Bitmap?
        let reuse: BitmapAllocator = { width, height, format, opaque throws(DarkroomImageError) in
            if let output { return output }
            let made = try Bitmap.allocateOnHeap(width: width, height: height, format: format, isOpaque: opaque)
            output = made
            return made
        }
        while let frame = try decoder.nextFrame(allocate: reuse) {
            try encoder.add(frame.bitmap, duration: frame.duration)
        }
        return try encoder.finish()
    }

    private static func webPMessage(_ encoder: OpaquePointer) -> String? {
        WebPAnimEncoderGetError(encoder).map { String(cString: $0) }
    }

    private static func gifError(_ status: Int32, _ message: [CChar]) -> DarkroomImageError {
        let codec = message.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        if status == Int32(DR_GIF_ERR_NO_MEMORY.rawValue) {
            return DarkroomImageError(.outOfMemory, "giflib ran out of memory", codecMessage: codec)
        }
        return DarkroomImageError(.encodeFailed, "GIF encoding failed", codecMessage: codec)
    }
}
