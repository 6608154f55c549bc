import DarkroomCache
import DarkroomImage
import DarkroomSupport

/// Plays an animated image the way YYAnimatedImageView does: frames decoded ahead, at display size, on the
/// pipeline's own threads into a bounded frame buffer, handed to a render loop by a synchronous lookup. The frames
/// come from any `AnimationFrameSource`: an animated image's decoder, or a video's clip or motion (DarkroomVideo's
/// `VideoAnimation`), decoded as it plays.
///
/// - Budget: by default YYImage's rule, min(20 % of the memory limit, 60 % of what is available), at least
///   10 MB (``defaultBudget(for:)``), then held to 1–512 frames. When every frame fits, all are kept and decoded
///   once; otherwise the buffer is a window ahead of the playhead, refilled as frames are shown. Memory pressure
///   shrinks it (``respond(to:)``: warning halves it, critical keeps one frame).
/// - Time: ``frame(at:)`` takes the caller's clock (seconds; the first call is time 0), so a display link, a
///   test's simulated clock or a benchmark's loop drive it alike.
/// - Falling behind: when the frame due is not decoded yet, the lookup answers the frame on screen (a late tick)
///   and decoding jumps ahead, compositing the frames whose time has passed without resampling them (skipped).
///   Both are counted (``statistics``).
///
/// Thread-safe: the render loop, the decode job and a memory monitor may call in at once. Cost of a lookup: one
/// lock and a dictionary read; of a frame: the decoder's (`AnimatedImageDecoder`). Memory: the buffer, plus the
/// frame on screen and the decoder's canvas while frames remain to decode (a player that keeps every frame frees
/// it after the first loop; one with a window keeps it, since frames composite in order).
public final class AnimationPlayer: Sendable, MemoryPressureResponding {
    /// What the player has done so far.
    public struct Statistics: Sendable {
        /// Frames handed out for the first time.
        public var framesShown = 0
        /// Frames whose time passed without their being shown.
        public var framesSkipped = 0
        /// Lookups that found the frame due not yet decoded (the frame on screen was answered instead).
        public var lateLookups = 0
        /// Frames decoded and resampled (skipped ones are composited only).
        public var framesDecoded = 0
        /// Bytes of frames in the buffer now, and at most.
        public var bufferedBytes = 0
        /// The most bytes the buffer held at once.
        public var peakBufferedBytes = 0
        /// The buffer's budget now.
        public var budgetBytes = 0
        /// Why decoding stopped early, if it did (a corrupt frame; the frames before it still play).
        public var error: DarkroomImageError?
    }

    /// The animation's timing.
    public let info: AnimationInfo
    /// The size of every frame.
    public let frameWidth: Int
    /// The size of every frame.
    public let frameHeight: Int

    /// Opens the frame source again when the player must start over after freeing it.
    let makeSource: @Sendable () throws(DarkroomImageError) -> any AnimationFrameSource
    let timeline: AnimationTimeline
    let frameBytes: Int
    let queue: WorkQueue
    let state: Locked<State>
    let decoder = DecoderBox()

    struct State {
        var origin: Double?
        /// Decoded frames by sequence number (by frame index when ``keepsAll``).
        var frames: [Int: AnimatedFrame] = [:]
        var keepsAll: Bool
        var budget: Int
        /// The sequence number due at the last lookup.
        var playhead = 0
        /// The sequence number the decode job produces next.
        var decodeNext = 0
        /// The last sequence the decode job may produce (truncation or an error lowers it).
        var decodeEnd: Int
        var decoding = false
        var stopped = false
        var shown: AnimatedFrame?
        var shownSequence = -1
        var statistics = Statistics()
    }

    /// Makes a player for `animation` at `options.geometry.size`, drawing at most `frameLimit` frames, with a buffer of
    /// `budgetBytes` (default ``defaultBudget(for:)`` of the system's memory). Decodes nothing until the first
    /// ``frame(at:)`` (or ``prepare()``).
    /// - Throws: `DarkroomImageError` as `AnimatedImageDecoder.init(_:options:frameLimit:)` (limits, format).
    public convenience init(
        _ animation: EncodedAnimation, options: DecodeOptions = DecodeOptions(), frameLimit: Int? = nil,
        budgetBytes: Int? = nil
    ) throws(DarkroomImageError) {
        try self.init(
            animation, options: options, frameLimit: frameLimit, budgetBytes: budgetBytes, queue: Self.sharedQueue)
    }

    /// Makes a player over the frames `source` makes, with a buffer of `budgetBytes` (default
    /// ``defaultBudget(for:)``). `source` is called once now (its first source gives the size and timing and is
    /// kept for the decode job) and again only when the player must start over after freeing it (memory pressure
    /// after the decoding ended). Decodes nothing until the first ``frame(at:)`` (or ``prepare()``).
    /// - Throws: what `source` throws.
    public convenience init(
        source: @escaping @Sendable () throws(DarkroomImageError) -> any AnimationFrameSource, budgetBytes: Int? = nil
    ) throws(DarkroomImageError) {
        try self.init(source: source, budgetBytes: budgetBytes, queue: Self.sharedQueue)
    }

    convenience init(
        _ animation: EncodedAnimation, options: DecodeOptions, frameLimit: Int?, budgetBytes: Int?, queue: WorkQueue
    ) throws(DarkroomImageError) {
        try self.init(
            source: { () throws(DarkroomImageError) in
                try AnimatedImageDecoder(animation, options: options, frameLimit: frameLimit)
            }, budgetBytes: budgetBytes, queue: queue)
    }

    init(
        source make: @escaping @Sendable () throws(DarkroomImageError) -> any AnimationFrameSource, budgetBytes: Int?,
        queue: WorkQueue
    ) throws(DarkroomImageError) {
        let first = try make()
        makeSource = make
        self.queue = queue
        info = first.info
        frameWidth = first.outputWidth
        frameHeight = first.outputHeight
        frameBytes = first.outputWidth * first.outputHeight * 4
        timeline = AnimationTimeline(info: first.info, frameCount: first.frameCount)
        // Before the player is shared: the decode job's first run finds the source opened
        decoder.decoder = first
        let budget = Self.clampedBudget(
            budgetBytes ?? Self.defaultBudget(for: SystemMemoryStatusReader().read()), frameBytes)
        let keepsAll = first.frameCount * frameBytes <= budget
        var initial = State(
            keepsAll: keepsAll, budget: budget, decodeEnd: keepsAll ? first.frameCount - 1 : timeline.lastSequence)
        initial.statistics.budgetBytes = budget
        state = Locked(initial)
    }

    /// YYImage's buffer rule: min(20 % of the memory ceiling, 60 % of what is available), at least 10 MB; 10 MB
    /// when the system says nothing.
    public static func defaultBudget(for status: MemoryStatus?) -> Int {
        let floor = 10 << 20
        guard let status, let ceiling = status.ceilingBytes, let available = status.availableBytes else { return floor }
        return max(floor, min(ceiling / 5, available * 3 / 5))
    }

    /// A budget held to 1–512 frames.
    static func clampedBudget(_ bytes: Int, _ frameBytes: Int) -> Int {
        min(max(bytes, frameBytes), frameBytes * 512)
    }

    /// What the player has done so far.
    public var statistics: Statistics { state.withLock { $0.statistics } }

    /// One play of the animation, in seconds (each frame's time by the browsers' delay rule).
    public var loopDuration: Double { Double(timeline.loopDuration) / 1000 }

    /// Whether the decode job is running (tests wait for it to go idle to play a player that keeps up).
    package var isDecoding: Bool { state.withLock { $0.decoding } }

    /// Starts decoding ahead without waiting for the first lookup.
    public func prepare() { kickIfNeeded(state.withLock { Self.claimDecoding(&$0) }) }

    /// Stops decoding and empties the buffer; lookups answer the frame on screen from then on.
    public func stop() {
        state.withLock { s in
            s.stopped = true
            s.frames.removeAll()
            if !s.decoding { decoder.decoder = nil }  // else the job frees it when it sees `stopped`
            s.statistics.bufferedBytes = 0
        }
    }

    /// The frame due at `time` (seconds on the caller's clock; the first lookup's time is the start), or the frame
    /// on screen when that one is not decoded yet (nil before the first frame is ready). Never blocks on decoding.
    public func frame(at time: Double) -> AnimatedFrame? {
        let (frame, kick) = state.withLock { s -> (AnimatedFrame?, Bool) in
            if s.origin == nil { s.origin = time }
            let due = timeline.sequence(at: time - s.origin!)
            if due > s.playhead {
                s.playhead = due
                if !s.keepsAll { evict(before: due, &s) }
            }
            if let ready = s.frames[key(due, s)] {
                if due != s.shownSequence {
                    if due > s.shownSequence + 1 { s.statistics.framesSkipped += due - s.shownSequence - 1 }
                    s.statistics.framesShown += 1
                    s.shownSequence = due
                    s.shown = ready
                }
                return (ready, Self.claimDecoding(&s))
            }
            s.statistics.lateLookups += 1
            return (s.shown, Self.claimDecoding(&s))
        }
        kickIfNeeded(kick)
        return frame
    }

    /// Sheds buffered frames: `.warning` halves the budget, `.critical` keeps one frame. Frames farthest ahead go
    /// first; a player that kept every frame goes back to a window ahead of the playhead.
    public func respond(to level: MemoryPressureLevel) {
        guard level != .normal else { return }
        state.withLock { s in
            s.budget = level == .critical ? frameBytes : Self.clampedBudget(s.budget / 2, frameBytes)
            s.statistics.budgetBytes = s.budget
            if s.keepsAll && timeline.frameCount * frameBytes > s.budget {
                s.keepsAll = false
                s.frames.removeAll()
                s.decodeNext = s.playhead
                s.decodeEnd = timeline.lastSequence
            }
            while s.frames.count * frameBytes > s.budget, let farthest = s.frames.keys.max() {
                s.frames[farthest] = nil
                if !s.keepsAll { s.decodeNext = min(s.decodeNext, farthest) }
            }
            s.statistics.bufferedBytes = s.frames.count * frameBytes
        }
    }

    func key(_ sequence: Int, _ s: State) -> Int { s.keepsAll ? sequence % timeline.frameCount : sequence }

    private func evict(before sequence: Int, _ s: inout State) {
        for key in s.frames.keys where key < sequence { s.frames[key] = nil }
        s.statistics.bufferedBytes = s.frames.count * frameBytes
    }

    /// The decode pool players use when made without a pipeline: one thread per core.
    static let sharedQueue = WorkQueue(name: "darkroom.animation", maxConcurrent: ProcessStats.activeCores)
}
