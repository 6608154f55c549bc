import DarkroomCache
import DarkroomImage
import DarkroomSupport

/// An animation the pipeline loaded (``ImageRequest/Options/animated``): its bytes and timing, and the size its
/// frames are decoded at. Make an ``AnimationPlayer`` to show it; players decode on the pipeline's threads.
///
/// Immutable and shareable. Memory: the encoded bytes (one copy); frames live in each player's buffer.
public final class AnimatedImage: Sendable {
    /// The bytes and container timing.
    public let encoded: EncodedAnimation
    /// How frames are decoded (the request's size and the pipeline's limits).
    public let options: DecodeOptions
    /// Each player's frame buffer, in bytes (already held to 1–512 frames).
    public let bufferBudget: Int
    let queue: WorkQueue

    init(encoded: EncodedAnimation, options: DecodeOptions, bufferBudget: Int?, frameBytes: Int, queue: WorkQueue) {
        self.encoded = encoded
        self.options = options
        self.bufferBudget = AnimationPlayer.clampedBudget(
            bufferBudget ?? AnimationPlayer.defaultBudget(for: SystemMemoryStatusReader().read()), frameBytes)
        self.queue = queue
    }

    /// The container's timing.
    public var info: AnimationInfo { encoded.info }

    /// What the memory cache charges for the animation: its bytes and one player's buffer.
    public var cost: Int { encoded.bytes.count + bufferBudget }

    /// A new player over this animation, decoding on the pipeline's processing threads.
    /// - Throws: `DarkroomImageError` as ``AnimationPlayer/init(_:options:frameLimit:budgetBytes:)``.
    public func makePlayer(budgetBytes: Int? = nil) throws(DarkroomImageError) -> AnimationPlayer {
        try AnimationPlayer(
            encoded, options: options, frameLimit: nil, budgetBytes: budgetBytes ?? bufferBudget, queue: queue)
    }
}
