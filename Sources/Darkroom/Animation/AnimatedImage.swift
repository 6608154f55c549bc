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
    /// Where players' frames are made: the pipeline's decoder (a confined worker when it is isolated).
    let decoder: ImageDecoder

    init(
        encoded: EncodedAnimation, options: DecodeOptions, bufferBudget: Int?, frameBytes: Int, queue: WorkQueue,
        decoder: ImageDecoder = ImageDecoder()
    ) {
        self.encoded = encoded
        self.options = options
        self.decoder = decoder
        self.bufferBudget = AnimationPlayer.clampedBudget(
            bufferBudget ?? AnimationPlayer.defaultBudget(for: SystemMemoryStatusReader().read()), frameBytes)
        self.queue = queue
    }

    /// The container's timing.
    public var info: AnimationInfo { encoded.info }

    /// What the memory cache charges for the animation: its bytes and one player's buffer.
    public var cost: Int { encoded.bytes.count + bufferBudget }

    /// A new player over this animation, decoding on the pipeline's processing threads: its frames made where the
    /// pipeline decodes (in a confined worker when its decoder is isolated, the worker held only while a frame is
    /// made).
    /// - Throws: `DarkroomImageError` as ``AnimationPlayer/init(_:options:frameLimit:budgetBytes:)``.
    public func makePlayer(budgetBytes: Int? = nil) throws(DarkroomImageError) -> AnimationPlayer {
        guard let isolation = decoder.isolation else {
            return try AnimationPlayer(
                encoded, options: options, frameLimit: nil, budgetBytes: budgetBytes ?? bufferBudget, queue: queue)
        }
        let (encoded, options) = (encoded, options)
        return try AnimationPlayer(
            source: { () throws(DarkroomImageError) in
                try isolation.animation(encoded.bytes, options: options, frameLimit: nil)
            }, budgetBytes: budgetBytes ?? bufferBudget, queue: queue)
    }
}
