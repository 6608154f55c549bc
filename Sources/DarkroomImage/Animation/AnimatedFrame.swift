/// One composited frame of an animation, at the requested size.
public struct AnimatedFrame: Sendable {
    /// The frame's position in the animation, from 0.
    public var index: Int
    /// The composited canvas, resampled to the requested size.
    public var bitmap: Bitmap
    /// How long the frame is shown, in milliseconds as stored (see ``AnimationInfo/durations``).
    public var duration: Int
    /// How long browsers show it, in milliseconds (``AnimationInfo/displayDuration(stored:)``).
    public var displayDuration: Int { AnimationInfo.displayDuration(stored: duration) }

    /// Creates a frame.
    public init(index: Int, bitmap: Bitmap, duration: Int) {
        self.index = index
        self.bitmap = bitmap
        self.duration = duration
    }
}
