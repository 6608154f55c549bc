/// Decodes an animated GIF, WebP, APNG or JPEG XL one frame at a time: each frame composited on its canvas exactly as
/// browsers do, then resampled to the requested size as it goes.
///
/// Memory: one canvas at source size (plus, for GIF and APNG "previous" disposal, a copy of the area under the
/// frame; libwebp keeps its own second canvas), the resampler's few rows, and each output frame — never all
/// frames. Limits are checked from the header before any pixel memory: ``DecodeLimits/maxFrames``,
/// ``DecodeLimits/maxAnimationPixels`` (frames × canvas area), ``DecodeLimits/maxDecodedBytes`` (the canvases).
/// Frames come in order; ``skipFrame()`` composites one without resampling (a player that fell behind).
/// A still image decodes as a one-frame animation. Orientation tags and colour profiles of animations are not
/// applied: frames are taken as upright sRGB. Not thread-safe: one thread at a time (a player's worker).
public final class AnimatedImageDecoder: AnimationFrameSource {
    /// The formats whose frames this decoder makes (a still of another format is refused).
    public static let formats: Set<ImageFileFormat> = [.gif, .webp, .png, .jxl]

    /// The container's timing.
    public var info: AnimationInfo { source.info }
    /// How many frames this decoder yields: the complete frames, or `frameLimit` if smaller.
    public let frameCount: Int
    /// The size of every output frame.
    public let outputWidth: Int
    /// The size of every output frame.
    public let outputHeight: Int
    /// The index of the frame ``nextFrame(allocate:)`` returns next.
    public private(set) var nextIndex = 0
    /// Whether decoding stopped at a frame cut short by the end of the data (the frames before it were returned).
    public private(set) var isTruncated = false

    private let source: EncodedAnimation
    private let options: DecodeOptions
    private let format: PixelFormat
    private let plan: DecodePlan
    private let probe: ImageProbe
    /// Opened at the first frame, so that making a decoder (to learn the output size, or check limits) allocates no
    /// canvas.
    private var compositor: (any FrameCompositor)?
    /// The format of the compositor's rows (APNG composites in straight RGBA).
    private let rowFormat: PixelFormat
    private let resampler: RowResampler?
    private let scratchRow: ScratchBuffer<UInt8>?

    /// Opens `source` for frames of `options.geometry.size` (orientation ignored) in `options.geometry.pixelFormat`
    /// (`.bgra8Premultiplied` unless `.rgba8` is asked for exactly), using at most `frameLimit` frames.
    /// - Throws: ``DarkroomImageError``: the limits above (and the still decoder's size limits) as `.limitExceeded`, `.unsupportedFormat` for formats
    ///   that cannot animate (JPEG, HEIC, AVIF), `.corrupt` for a malformed container.
    public init(_ source: EncodedAnimation, options: DecodeOptions = DecodeOptions(), frameLimit: Int? = nil)
        throws(DarkroomImageError)
    {
        let info = source.info
        let bytes = source.bytes
        let limits = options.limits
        try ImageProber.checkAnimation(info, limits: limits)
        // The header as read when the bytes were wrapped; these limits may be stricter, so they are checked again.
        guard bytes.count <= limits.maxInputBytes else {
            throw DarkroomImageError(
                .limitExceeded, "the input is \(bytes.count) bytes, over the limit of \(limits.maxInputBytes)")
        }
        var probe = source.probe
        try ImageDecoder.checkSource(probe, limits)
        guard Self.formats.contains(probe.format) else {
            throw DarkroomImageError(.unsupportedFormat, "\(probe.format.rawValue) is not an animation format")
        }
        guard options.geometry.page == 0 else {  // frames are not pages: an animation has one page
            throw DarkroomImageError(
                .invalidArgument, "page \(options.geometry.page) asked of a \(probe.format.rawValue) with one page")
        }
        probe.orientation = .up
        var options = options
        options.geometry.appliesOrientation = false
        let plan = try options.geometry.plan(for: probe)
        let format: PixelFormat = options.geometry.pixelFormat == .exactly(.rgba8) ? .rgba8 : .bgra8Premultiplied
        let canvasBytes = info.canvasWidth * info.canvasHeight * 4
        let heldBytes = canvasBytes * 2 + plan.outputBytes(format)
        guard heldBytes <= limits.maxDecodedBytes else {
            throw DarkroomImageError(
                .limitExceeded,
                "a \(info.canvasWidth)×\(info.canvasHeight) animation needs \(heldBytes) bytes of canvases, over maxDecodedBytes (\(limits.maxDecodedBytes))"
            )
        }
        self.source = source
        self.options = options
        self.format = format
        self.plan = plan
        frameCount = min(info.frameCount, max(0, frameLimit ?? .max))
        outputWidth = plan.outputWidth
        outputHeight = plan.outputHeight
        self.probe = probe
        rowFormat = [.png, .jxl].contains(probe.format) && probe.frameCount > 1 ? .rgba8 : .bgra8Premultiplied
        if plan.isIdentity(width: info.canvasWidth, height: info.canvasHeight) {
            resampler = nil
            scratchRow = nil
        } else {
            // A placeholder destination: each frame points the resampler at its own bitmap.
            resampler = try RowResampler(
                sourceWidth: info.canvasWidth, sourceHeight: info.canvasHeight, channels: 4,
                sourceRect: plan.sourceRect(scaledTo: info.canvasWidth, info.canvasHeight),
                destination: PixelRows(
                    base: UnsafeMutableRawPointer(bitPattern: 64)!, width: plan.outputWidth,
                    height: plan.outputHeight, bytesPerRow: plan.outputWidth * 4),
                filter: options.filter, alphaChannel: 3)
            scratchRow =
                rowFormat == .bgra8Premultiplied ? nil : try ScratchBuffer(count: info.canvasWidth * 4, zeroed: false)
        }
    }

    /// Opens a byte array (copied once into an ``EncodedAnimation``).
    public convenience init(_ bytes: [UInt8], options: DecodeOptions = DecodeOptions(), frameLimit: Int? = nil)
        throws(DarkroomImageError)
    {
        try self.init(EncodedAnimation(bytes, limits: options.limits), options: options, frameLimit: frameLimit)
    }

    private static func makeCompositor(_ source: EncodedAnimation, probe: ImageProbe, limits: DecodeLimits)
        throws(DarkroomImageError) -> any FrameCompositor
    {
        let bytes = source.bytes
        let info = source.info
        switch probe.format {
        case .gif: return try GIFCompositor(bytes, width: info.canvasWidth, height: info.canvasHeight)
        case .webp where probe.frameCount > 1:
            return try WebPCompositor(bytes, width: info.canvasWidth, height: info.canvasHeight)
        case .png where probe.frameCount > 1:
            guard case .animation(let reader) = try APNGReader.opening(bytes, limits: limits) else {
                return try StillCompositor(bytes, probe: probe, limits: limits)
            }
            return try APNGCompositor(bytes, reader: reader, limits: limits)
        case .jxl where probe.frameCount > 1:
            return try JXLCompositor(bytes, width: info.canvasWidth, height: info.canvasHeight, limits: limits)
        default: return try StillCompositor(bytes, probe: probe, limits: limits)
        }
    }

    /// Composites and resamples the next frame into memory from `allocate` (called once per frame); nil after the
    /// last one (or after `frameLimit`, or at a frame cut short by the end of the data, which sets ``isTruncated``).
    /// Cost: the codec's work for the frame plus one resample of the canvas. A caller that is done with each frame
    /// before asking for the next (an encoder) hands back the same bitmap every time instead of a fresh one;
    /// ``AnimationFrameSource/nextFrame()`` allocates each.
    public func nextFrame(allocate: BitmapAllocator) throws(DarkroomImageError) -> AnimatedFrame? {
        guard try advance(), let compositor else { return nil }
        let bitmap = try Bitmap.allocate(outputWidth, outputHeight, format, false, using: allocate)
        let height = info.canvasHeight
        if let resampler {
            resampler.restart(
                into: PixelRows(
                    base: bitmap.storage.baseAddress, width: outputWidth, height: outputHeight,
                    bytesPerRow: bitmap.bytesPerRow))
            for y in resampler.requiredSourceRows.clamped(to: 0..<height) {
                var row = compositor.row(y)
                if let scratchRow {
                    PixelConversion.convertRow(
                        row, from: compositor.rowFormat, scratchRow.pointer, to: .bgra8Premultiplied,
                        width: info.canvasWidth)
                    row = UnsafeRawPointer(scratchRow.pointer)
                }
                resampler.consume(row: row, y: y)
            }
            resampler.finish()
            if format != .bgra8Premultiplied {
                for y in 0..<outputHeight {
                    PixelConversion.convertRow(
                        bitmap.row(y), from: .bgra8Premultiplied, bitmap.row(y), to: format, width: outputWidth)
                }
            }
        } else {
            for y in 0..<height {
                PixelConversion.convertRow(
                    compositor.row(y), from: compositor.rowFormat, bitmap.row(y), to: format, width: outputWidth)
            }
        }
        let index = nextIndex - 1
        return AnimatedFrame(
            index: index, bitmap: GIFDecoder.withMeasuredOpacity(bitmap), duration: info.durations[index])
    }

    /// Composites the next frame without resampling it (a player skipping a frame it is too late for); false
    /// after the last one. Cheaper than ``nextFrame(allocate:)`` by the resample and the output bitmap.
    public func skipFrame() throws(DarkroomImageError) -> Bool { try advance() }

    /// Starts again from the first frame: the canvas is freed and opened again at the next frame.
    public func rewind() throws(DarkroomImageError) {
        compositor = nil
        nextIndex = 0
        isTruncated = false
    }

    private func advance() throws(DarkroomImageError) -> Bool {
        guard nextIndex < frameCount, !isTruncated else { return false }
        let compositor: any FrameCompositor
        if let open = self.compositor {
            compositor = open
        } else {
            compositor = try Self.makeCompositor(source, probe: probe, limits: options.limits)
            precondition(compositor.rowFormat == rowFormat)
            self.compositor = compositor
        }
        do {
            guard try compositor.advance() else { return false }
        } catch  where error.code == .truncated && nextIndex > 0 {
            isTruncated = true
            return false
        }
        nextIndex += 1
        return true
    }
}
