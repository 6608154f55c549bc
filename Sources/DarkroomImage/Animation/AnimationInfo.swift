/// What an animated image's container says about its timing, read without decoding a pixel
/// (``ImageProber/animationInfo(_:limits:)``).
///
/// Durations are kept as the file states them (in milliseconds) so they compare equal with other readers;
/// ``displayDuration(ofFrame:)`` applies the rule browsers play them by.
public struct AnimationInfo: Sendable, Hashable, Codable {
    /// The container format.
    public var format: ImageFileFormat
    /// The canvas every frame is composited onto.
    public var canvasWidth: Int
    /// The canvas every frame is composited onto.
    public var canvasHeight: Int
    /// How long each frame is shown, in milliseconds as stored (GIF centiseconds × 10, APNG's fraction rounded,
    /// animated WebP's duration). Only complete frames are listed: a truncated file lists those before the cut.
    public var durations: [Int]
    /// The loop count as the file stores it, nil when it has none: GIF's NETSCAPE2.0 repeat count (absent means
    /// the animation plays once), APNG's `num_plays`, animated WebP's loop count; 0 means forever in all three.
    public var loopCount: Int?
    /// How many times the animation plays, 0 for forever, the way browsers read ``loopCount``: a GIF without a
    /// loop extension plays once, a GIF repeat count of n plays n + 1 times; APNG and WebP play their count.
    public var plays: Int {
        guard let loopCount else { return 1 }
        if loopCount == 0 { return 0 }
        return format == .gif ? loopCount + 1 : loopCount
    }
    /// The number of (complete) frames.
    public var frameCount: Int { durations.count }
    /// One play through, in milliseconds, by the display rule.
    public var totalDisplayDuration: Int { durations.indices.reduce(0) { $0 + displayDuration(ofFrame: $1) } }

    /// Creates an info value.
    public init(format: ImageFileFormat, canvasWidth: Int, canvasHeight: Int, durations: [Int], loopCount: Int?) {
        self.format = format
        self.canvasWidth = canvasWidth
        self.canvasHeight = canvasHeight
        self.durations = durations
        self.loopCount = loopCount
    }

    /// The delay browsers show frame `index` for: a stored delay of 10 ms or less (GIF's 0 and 1 centisecond,
    /// written by tools that meant "as fast as possible") is played as 100 ms, as Chromium, Firefox and Safari do
    /// for every animated format. Costs nothing.
    public func displayDuration(ofFrame index: Int) -> Int {
        Self.displayDuration(stored: durations[index])
    }

    /// The browsers' rule on one stored delay (see ``displayDuration(ofFrame:)``).
    public static func displayDuration(stored milliseconds: Int) -> Int { milliseconds <= 10 ? 100 : milliseconds }
}
