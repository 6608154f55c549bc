import CDarkroomGIF

/// Composites an animation's frames, one at a time and in order, onto one canvas at source size: the only
/// full-size memory an animated decode holds (plus, for "previous" disposal, a copy of what lies under the frame).
/// Used by one thread at a time.
protocol FrameCompositor: AnyObject {
    /// The format of ``row(_:)``: `.bgra8Premultiplied`, or `.rgba8` (straight alpha) for APNG, whose
    /// specified blend is in straight alpha.
    var rowFormat: PixelFormat { get }
    /// Composites the next frame onto the canvas; false after the last one. A frame cut short by the end of the
    /// data throws `.truncated` and leaves the canvas undefined.
    func advance() throws(DarkroomImageError) -> Bool
    /// Row `y` of the canvas after the last ``advance()``.
    func row(_ y: Int) -> UnsafeRawPointer
}

/// GIF through the giflib shim, which applies disposal and transparency the way browsers do.
final class GIFCompositor: FrameCompositor {
    let rowFormat = PixelFormat.bgra8Premultiplied
    private let handle: OpaquePointer
    private let canvas: ScratchBuffer<UInt8>
    private let width: Int
    /// What the shim holds besides the canvas (its "previous" copy and row buffer), as last counted.
    private var shimBytes = 0
    private var meter: PixelMemoryMeter?

    init(_ bytes: UnsafeRawBufferPointer, width: Int, height: Int) throws(DarkroomImageError) {
        var status: Int32 = 0
        var message = [CChar](repeating: 0, count: 256)
        guard
            let handle = dr_gif_anim_open(
                bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), bytes.count, Int32(width), Int32(height),
                &status, &message, message.count)
        else { throw Self.error(status, message) }
        self.handle = handle
        self.width = width
        do {
            canvas = try ScratchBuffer(count: width * height * 4)
        } catch {
            dr_gif_anim_close(handle)
            throw error
        }
    }

    deinit {
        dr_gif_anim_close(handle)
        PixelMemory.released(shimBytes, meter: meter)
    }

    func advance() throws(DarkroomImageError) -> Bool {
        var frame = dr_gif_frame()
        var message = [CChar](repeating: 0, count: 256)
        let status = dr_gif_anim_next(handle, canvas.pointer, width * 4, &frame, &message, message.count)
        if status == DR_GIF_END { return false }
        guard status == Int32(DR_GIF_OK.rawValue) else { throw Self.error(status, message) }
        let held = Int(frame.saved_bytes)
        if held > shimBytes {
            meter = PixelMemory.allocated(held - shimBytes) ?? meter
            shimBytes = held
        }
        return true
    }

    func row(_ y: Int) -> UnsafeRawPointer { UnsafeRawPointer(canvas.pointer + y * width * 4) }

    private static func error(_ status: Int32, _ message: [CChar]) -> DarkroomImageError {
        GIFDecoder.error(status, message, truncation: "the GIF data ends inside a frame")
    }
}

/// A still image (or the still part of a format that cannot animate) as a one-frame animation: decoded once at
/// source size by ``ImageDecoder``.
final class StillCompositor: FrameCompositor {
    let rowFormat = PixelFormat.bgra8Premultiplied
    private let bitmap: Bitmap
    private var done = false

    init(_ bytes: UnsafeRawBufferPointer, probe: ImageProbe, limits: DecodeLimits) throws(DarkroomImageError) {
        bitmap = try ImageDecoder().decode(
            bytes,
            options: DecodeOptions(
                pixelFormat: .exactly(.bgra8Premultiplied), appliesOrientation: false, limits: limits)
        ).bitmap
    }

    func advance() throws(DarkroomImageError) -> Bool {
        defer { done = true }
        return !done
    }

    func row(_ y: Int) -> UnsafeRawPointer { UnsafeRawPointer(bitmap.row(y)) }
}
