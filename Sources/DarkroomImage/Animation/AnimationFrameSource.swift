/// Frames at display size, one at a time in play order, with their timing: what animated encoders (and players)
/// consume, whatever made the frames — an animated image's decoder (`AnimatedImageDecoder`) or a video's preview.
///
/// Memory: a source holds what it needs to make the next frame, never the sequence. Not thread-safe: one thread at
/// a time.
public protocol AnimationFrameSource: AnyObject {
    /// The frames' timing: one duration a frame, and how many times the animation plays.
    var info: AnimationInfo { get }
    /// The size of every frame.
    var outputWidth: Int { get }
    /// The size of every frame.
    var outputHeight: Int { get }
    /// How many frames the source makes (the container's count, or fewer under a frame limit).
    var frameCount: Int { get }
    /// The index of the frame ``nextFrame(allocate:)`` makes next.
    var nextIndex: Int { get }
    /// Makes the next frame into memory from `allocate` (called once a frame: a caller done with each frame before
    /// asking for the next hands back the same bitmap); nil after the last one.
    func nextFrame(allocate: BitmapAllocator) throws(DarkroomImageError) -> AnimatedFrame?
    /// Moves past the next frame without making it (no resample or output: cheaper, for a player that fell
    /// behind); false after the last one.
    func skipFrame() throws(DarkroomImageError) -> Bool
    /// Starts again from the first frame.
    func rewind() throws(DarkroomImageError)
}

extension AnimationFrameSource {
    /// Makes the next frame into fresh memory; nil after the last one.
    public func nextFrame() throws(DarkroomImageError) -> AnimatedFrame? {
        try nextFrame(allocate: Bitmap.allocateOnHeap)
    }
}
