import CJXL

/// An animated JPEG XL played frame by frame: libjxl coalesces each displayed frame (its layers blended onto the
/// canvas, as the codestream's blend modes say) into one straight-alpha RGBA canvas held here, so the player and
/// the resampler see it like an APNG's canvas. Lossy (XYB) frames are asked for in sRGB; other colour spaces are
/// taken as sRGB, as for every animation. Memory: the canvas, and libjxl's own frame state.
final class JXLCompositor: FrameCompositor {
    let rowFormat = PixelFormat.rgba8
    private let handle: JXLDecoder.Handle
    private let canvas: ScratchBuffer<UInt8>
    private let width: Int
    private var format = JxlPixelFormat(
        num_channels: 4, data_type: JXL_TYPE_UINT8, endianness: JXL_NATIVE_ENDIAN, align: 0)

    init(_ bytes: UnsafeRawBufferPointer, width: Int, height: Int, limits: DecodeLimits) throws(DarkroomImageError) {
        handle = try JXLDecoder.Handle(
            bytes, events: Int32(JXL_DEC_COLOR_ENCODING.rawValue | JXL_DEC_FULL_IMAGE.rawValue))
        self.width = width
        canvas = try ScratchBuffer(count: width * height * 4)
    }

    func advance() throws(DarkroomImageError) -> Bool {
        while true {
            switch handle.next() {
            case JXL_DEC_COLOR_ENCODING:
                _ = JXLDecoder.targetColor(handle.decoder, limits: .default)
            case JXL_DEC_NEED_IMAGE_OUT_BUFFER:
                var size = 0
                guard JxlDecoderImageOutBufferSize(handle.decoder, &format, &size) == JXL_DEC_SUCCESS,
                    size == canvas.count,
                    JxlDecoderSetImageOutBuffer(handle.decoder, &format, canvas.pointer, size) == JXL_DEC_SUCCESS
                else { throw DarkroomImageError(.corrupt, "a JPEG XL frame does not fit its canvas") }
            case JXL_DEC_FULL_IMAGE:
                return true
            case JXL_DEC_SUCCESS:
                return false
            case JXL_DEC_NEED_MORE_INPUT:
                throw DarkroomImageError(.truncated, "the JPEG XL animation ends inside a frame")
            default:
                throw DarkroomImageError(.corrupt, "a JPEG XL animation frame is corrupt")
            }
        }
    }

    func row(_ y: Int) -> UnsafeRawPointer { UnsafeRawPointer(canvas.pointer + y * width * 4) }
}

extension JXLDecoder {
    /// An animated JPEG XL's canvas, displayed frames' durations (ticks converted to milliseconds, rounded) and
    /// loop count (`num_loops`, 0 forever), from the frame headers: no pixels decoded.
    static func animation(_ bytes: UnsafeRawBufferPointer, probe: ImageProbe, limits: DecodeLimits)
        throws(DarkroomImageError) -> AnimationInfo
    {
        let handle = try Handle(bytes, events: Int32(JXL_DEC_BASIC_INFO.rawValue | JXL_DEC_FRAME.rawValue))
        var info = JxlBasicInfo()
        var durations: [Int] = []
        while true {
            switch handle.next() {
            case JXL_DEC_BASIC_INFO:
                _ = JxlDecoderGetBasicInfo(handle.decoder, &info)
            case JXL_DEC_FRAME:
                var header = JxlFrameHeader()
                _ = JxlDecoderGetFrameHeader(handle.decoder, &header)
                let ticks = UInt64(header.duration) * 1000 * UInt64(info.animation.tps_denominator)
                let perSecond = UInt64(max(1, info.animation.tps_numerator))
                durations.append(Int(min((ticks + perSecond / 2) / perSecond, UInt64(Int32.max))))
                guard durations.count <= limits.maxFrames else {
                    throw DarkroomImageError(
                        .limitExceeded, "the image has more than \(limits.maxFrames) frames (maxFrames)")
                }
            case JXL_DEC_SUCCESS:
                return AnimationInfo(
                    format: .jxl, canvasWidth: probe.width, canvasHeight: probe.height,
                    durations: durations.isEmpty ? [0] : durations,
                    loopCount: info.have_animation != 0 ? Int(info.animation.num_loops) : nil)
            case JXL_DEC_NEED_MORE_INPUT:
                throw DarkroomImageError(.truncated, "the JPEG XL animation ends inside frame \(durations.count + 1)")
            default:
                throw DarkroomImageError(.corrupt, "a JPEG XL frame header is corrupt")
            }
        }
    }
}
