import DarkroomImage

/// A video's motion as an animation at display size: a few seconds of the clip at a modest frame rate, each frame
/// decoded when it is asked for (as a player shows it or an encoder writes it), so that a grid plays it, or the
/// server writes it, as it would an animated WebP.
///
/// Cost: opening reads the container's header; each frame decodes the clip's frames up to the next tick (every
/// frame in between, since most depend on the ones before) and scales one of them straight to the output size, as
/// a still frame is (`VideoDecoder`). Memory: FFmpeg's decoder state and one frame of the clip, and the output
/// frame: never the clip. Each frame has its own `DecodeLimits/maxVideoDecodeSeconds` and
/// `DecodeLimits/maxVideoFramesDecoded`; the preview has at most `DecodeLimits/maxFrames` frames. Not thread-safe:
/// one thread at a time (a player's worker).
public final class VideoAnimation: AnimationFrameSource {
    public let info: AnimationInfo
    public let outputWidth: Int
    public let outputHeight: Int
    /// The clip's header.
    public let probe: ImageProbe
    /// Where in the clip the preview starts, in seconds.
    public let start: Double
    /// How many frames the preview has (`AnimationInfo/frameCount`).
    public var frameCount: Int { info.frameCount }

    private let renderer: FrameRenderer
    private let interval: Double
    /// Half a frame of the clip (or of the preview, when shorter): how early a frame may be to count for a tick.
    private let tolerance: Double
    /// The index of the frame ``nextFrame(allocate:)`` makes next.
    public private(set) var nextIndex = 0
    private var needsSeek = true
    /// The time of the clip's frame last decoded (nil before the first, or when frames carry no time).
    private var decodedTime: Double?

    /// Opens the video file at `path` (or the clip at `range` of it, a Motion Photo's) for a preview at the size
    /// `options` ask for.
    /// - Throws: `DarkroomImageError` as `VideoDecoder/decode(fileAt:options:)` does for opening, and
    ///   `.invalidArgument` for a preview of no frames (a rate or length that is not positive).
    public convenience init(
        fileAt path: String, range: Range<Int64>? = nil, options: DecodeOptions = DecodeOptions(),
        preview: MotionPreview = MotionPreview()
    ) throws(DarkroomImageError) {
        try Self.check(preview)
        try self.init(VideoFile(path: path, range: range, limits: options.limits), options: options, preview: preview)
    }

    /// Opens the video `ranges` reads where it lies (a clip a decode worker reads through the descriptor it was
    /// handed, a remote video) for a preview at the size `options` ask for: only the ranges FFmpeg asks for are read.
    /// - Throws: `DarkroomImageError` as ``init(fileAt:range:options:preview:)``, and what the reads throw.
    public convenience init(
        ranges: any ByteRangeReading, options: DecodeOptions = DecodeOptions(),
        preview: MotionPreview = MotionPreview()
    ) throws(DarkroomImageError) {
        try Self.check(preview)
        try self.init(VideoFile(ranges: ranges, limits: options.limits), options: options, preview: preview)
    }

    /// Refuses a preview of no frames: a length that is not positive, a rate outside (0, 120] fps.
    private static func check(_ preview: MotionPreview) throws(DarkroomImageError) {
        guard preview.seconds > 0, preview.seconds.isFinite, preview.framesPerSecond > 0,
            preview.framesPerSecond <= 120
        else {
            throw DarkroomImageError(
                .invalidArgument,
                "a motion preview needs a length > 0 s and a rate in (0, 120] fps, got \(preview.seconds) s at \(preview.framesPerSecond) fps"
            )
        }
    }

    /// The preview of the open `video` (a checked preview).
    private init(_ video: VideoFile, options: DecodeOptions, preview: MotionPreview) throws(DarkroomImageError) {
        var options = options
        if options.geometry.pixelFormat != .exactly(.rgba8) {
            options.geometry.pixelFormat = .exactly(.bgra8Premultiplied)
        }
        renderer = try FrameRenderer(video: video, options: options)
        probe = renderer.probe
        let duration = probe.video?.duration
        let start: Double
        if let asked = preview.start ?? options.geometry.time {
            guard asked >= 0, asked.isFinite else {
                throw DarkroomImageError(.invalidArgument, "a preview's start must be ≥ 0 s, got \(asked)")
            }
            start = duration.map { min(asked, max(0, $0 - preview.seconds)) } ?? asked
        } else if let duration, duration > 3 * preview.seconds {
            start = duration * 0.1
        } else {
            start = 0
        }
        self.start = start
        let shown = duration.map { min(preview.seconds, max(0, $0 - start)) } ?? preview.seconds
        let count = max(1, min(Int((shown * preview.framesPerSecond).rounded(.up)), options.limits.maxFrames))
        interval = 1 / preview.framesPerSecond
        let clipInterval = probe.video?.frameRate.map { 1 / $0 } ?? interval
        tolerance = min(interval, clipInterval) / 2
        let milliseconds = max(20, Int((1000 * interval).rounded()))
        info = AnimationInfo(
            format: .video, canvasWidth: probe.width, canvasHeight: probe.height,
            durations: Array(repeating: milliseconds, count: count), loopCount: max(0, preview.loopCount))
        let turned = options.geometry.appliesOrientation && probe.orientation.swapsDimensions
        outputWidth = turned ? renderer.plan.outputHeight : renderer.plan.outputWidth
        outputHeight = turned ? renderer.plan.outputWidth : renderer.plan.outputHeight
        try renderer.openDecoder()
    }

    /// Decodes the clip up to the next tick and scales that frame; nil after the last tick, or when the clip ends
    /// (or breaks) before it, having shown the frames before.
    public func nextFrame(allocate: BitmapAllocator) throws(DarkroomImageError) -> AnimatedFrame? {
        guard try decodeToNextTick() else { return nil }
        let final = renderer.options.geometry.pixelFormat == .exactly(.rgba8) ? PixelFormat.rgba8 : .bgra8Premultiplied
        var bitmap: Bitmap
        let orientation = renderer.probe.orientation
        if renderer.options.geometry.appliesOrientation && orientation != .up {
            bitmap = try renderer.scaled(.bgra8Premultiplied).applying(orientation, allocate: allocate)
        } else {
            bitmap = try renderer.scaled(.bgra8Premultiplied, allocate: allocate)
        }
        if final != .bgra8Premultiplied { bitmap = try bitmap.converted(to: final) }
        let index = nextIndex
        nextIndex += 1
        return AnimatedFrame(index: index, bitmap: bitmap, duration: info.durations[index])
    }

    /// Moves past the next tick's frame without scaling it (a player that fell behind); false after the last.
    /// Cost: the clip's frames up to the tick are decoded all the same.
    public func skipFrame() throws(DarkroomImageError) -> Bool {
        guard try decodeToNextTick() else { return false }
        nextIndex += 1
        return true
    }

    /// Decodes the clip up to the frame of the next tick; false when the preview is over (its last tick shown, or
    /// the clip ended or broke before the tick, after at least one frame).
    private func decodeToNextTick() throws(DarkroomImageError) -> Bool {
        guard nextIndex < info.frameCount else { return false }
        let video = renderer.video
        video.renewDeadline()
        if needsSeek {
            try video.seek(to: start)
            needsSeek = false
            decodedTime = nil
        }
        let tick = start + Double(nextIndex) * interval
        var decoded = 0
        // The frame at the tick: the nearest one, the first whose time is past the tick less half a frame of the
        // clip (or of the preview, when that is shorter). A frame already decoded past this tick (a clip slower
        // than the preview) is shown again
        while decodedTime == nil || decodedTime! < tick - tolerance {
            guard decoded < renderer.options.limits.maxVideoFramesDecoded else {
                throw DarkroomImageError(
                    .limitExceeded,
                    "reaching \(tick) s decoded \(decoded) frames, maxVideoFramesDecoded (\(renderer.options.limits.maxVideoFramesDecoded))"
                )
            }
            let step: VideoFile.FrameStep
            do throws(DarkroomImageError) {
                step = try video.nextFrame(
                    keyframesOnly: false, skippingBefore: renderer.skipBound(showingFrom: tick - tolerance))
            } catch {
                // A damaged stream ends the preview at the last good frame; a stream broken before any is an error
                guard nextIndex > 0 else { throw error }
                nextIndex = info.frameCount
                return false
            }
            guard case .frame(let time) = step else {
                guard nextIndex > 0 || decoded > 0 else {
                    throw DarkroomImageError(.corrupt, "the clip has no frame at or after \(start) s")
                }
                if decoded == 0 {
                    nextIndex = info.frameCount
                    return false
                }
                break
            }
            decoded += 1
            // Frames without times are taken one a tick
            decodedTime = time ?? tick
        }
        return true
    }

    /// Starts again at the preview's first frame (a seek back to the keyframe before it).
    public func rewind() throws(DarkroomImageError) {
        nextIndex = 0
        needsSeek = true
    }
}
