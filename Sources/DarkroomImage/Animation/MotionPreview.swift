/// What part of a clip a motion preview (DarkroomVideo's `VideoAnimation`) shows, and how smoothly: a value handed whole to
/// where the frames are made, this process or a decode worker.
public struct MotionPreview: Sendable, Hashable, Codable {
    /// The longest stretch of the clip shown, in seconds (a short clip is shown whole).
    public var seconds: Double
    /// Frames a second of the preview: the clip's frames nearest each tick are shown, the others decoded and
    /// dropped.
    public var framesPerSecond: Double
    /// Where the preview starts, in seconds; nil: at the start of a clip up to three previews long (a Motion Photo,
    /// a short video), else at a tenth of the clip (where the poster frame is looked for).
    public var start: Double?
    /// How many times the preview plays: 0 forever (a grid's cell, a video in the large view), 1 once (a photo's
    /// motion, after which the still is shown again).
    public var loopCount: Int

    /// A preview of `seconds` at `framesPerSecond` from `start`, played `loopCount` times. The defaults suit a
    /// grid's cell: 3 s at 10 fps, looping.
    public init(seconds: Double = 3, framesPerSecond: Double = 10, start: Double? = nil, loopCount: Int = 0) {
        self.seconds = seconds
        self.framesPerSecond = framesPerSecond
        self.start = start
        self.loopCount = loopCount
    }
}
