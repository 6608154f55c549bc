import CWebP

/// Animated WebP through libwebp's `WebPAnimDecoder`, which blends and disposes by the container's rules into
/// its own canvas (premultiplied BGRA here). libwebp holds two canvases (the frame and the previous one, disposed),
/// counted in ``PixelMemory`` while the compositor lives. It needs the whole file: a truncated one is refused.
final class WebPCompositor: FrameCompositor {
    let rowFormat = PixelFormat.bgra8Premultiplied
    private let decoder: OpaquePointer
    private let width: Int
    private var frame: UnsafeMutablePointer<UInt8>?
    private let countedBytes: Int
    private let meter: PixelMemoryMeter?

    init(_ bytes: UnsafeRawBufferPointer, width: Int, height: Int) throws(DarkroomImageError) {
        var options = WebPAnimDecoderOptions()
        guard WebPAnimDecoderOptionsInit(&options) != 0 else {
            throw DarkroomImageError(.unsupportedFeature, "libwebp's demux ABI does not match its header")
        }
        options.color_mode = MODE_bgrA
        options.use_threads = 0
        var data = WebPData(bytes: bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), size: bytes.count)
        guard let decoder = WebPAnimDecoderNew(&data, &options) else {
            throw DarkroomImageError(.corrupt, "libwebp could not parse the animation (it needs the whole file)")
        }
        var info = WebPAnimInfo()
        guard WebPAnimDecoderGetInfo(decoder, &info) != 0, Int(info.canvas_width) == width,
            Int(info.canvas_height) == height
        else {
            WebPAnimDecoderDelete(decoder)
            throw DarkroomImageError(.corrupt, "the animation's canvas does not match its header")
        }
        self.decoder = decoder
        self.width = width
        countedBytes = 2 * width * height * 4
        meter = PixelMemory.allocated(countedBytes)
    }

    deinit {
        WebPAnimDecoderDelete(decoder)
        PixelMemory.released(countedBytes, meter: meter)
    }

    func advance() throws(DarkroomImageError) -> Bool {
        guard WebPAnimDecoderHasMoreFrames(decoder) != 0 else { return false }
        var timestamp: Int32 = 0
        guard WebPAnimDecoderGetNext(decoder, &frame, &timestamp) != 0, frame != nil else {
            throw DarkroomImageError(.corrupt, "libwebp could not decode a frame of the animation")
        }
        return true
    }

    func row(_ y: Int) -> UnsafeRawPointer { UnsafeRawPointer(frame! + y * width * 4) }
}
