import Darkroom
import DarkroomImage

/// The large view: one image decoded to fit the window (never enlarged), its animation, and the neighbours
/// prefetched so stepping is quick.
///
/// Only the drawing thread calls it. It never touches the window: a delivered image or a new animation frame waits
/// in ``frameToUpload(now:)`` for the viewer to upload when it draws, so it runs in tests without a display.
/// Cost: one request and two prefetches per image opened.
final class LargeView {
    /// The pipeline's target: a cell in the slot reserved for the large view, posting to the same inbox.
    let target: GridCell
    /// The image shown, as an index into the library's items.
    private(set) var index = 0
    /// The generation of the current request; deliveries with another are stale.
    private(set) var generation: UInt64 = 0
    /// The uploaded image (the viewer's texture).
    var image = ImageTexture()
    /// Whether the current image failed to load.
    private(set) var failed = false
    private(set) var player: AnimationPlayer?
    private var frameShown = -1
    /// A delivered image not uploaded yet.
    private var delivered: Bitmap?
    /// The image delivered, kept while a still's motion plays over it (it comes back after).
    private var still: Bitmap?
    /// Whether the player is a still's motion, played once.
    private var returnsToStill = false
    /// When the still's motion started playing (the drawing clock's seconds).
    private var motionStarted: Double?
    /// The path of the image shown.
    private var path = ""

    /// What the viewer starts after a delivery: a player for an animation, or for the file's motion (a video's
    /// clip, a still's Motion Photo or Live Photo clip).
    enum Follow {
        case animation(AnimatedImage)
        case motion(path: String)
    }

    init(inbox: DeliveryInbox) {
        target = GridCell(slot: Delivery.largeView, inbox: inbox)
    }

    /// Whether the current image is on screen or waiting to be uploaded.
    var hasImage: Bool { image.hasImage || delivered != nil }

    /// The request for `item` at a `width`×`height` window: fit, never enlarged, animated when it has frames.
    static func request(
        for item: LibraryItem, width: Int, height: Int, priority: ImageRequest.Priority
    ) -> ImageRequest {
        var request = ImageRequest(
            source: .file(item.path), size: .fit(width: width, height: height), priority: priority,
            options: [.animated], pixelFormat: .exactly(.bgra8Premultiplied))
        request.imageID = item.imageID
        return request
    }

    /// Shows image `index` (clamped to `items`), forgetting the one before, and prefetches its neighbours.
    func open(
        _ index: Int, items: [LibraryItem], width: Int, height: Int, pipeline: ImagePipeline,
        prefetcher: ImagePrefetcher
    ) {
        guard !items.isEmpty else { return }
        let index = min(max(0, index), items.count - 1)
        self.index = index
        path = items[index].path
        image.forget()
        delivered = nil
        still = nil
        failed = false
        player?.stop()
        player = nil
        frameShown = -1
        motionStarted = nil
        pipeline.setImage(
            with: Self.request(for: items[index], width: width, height: height, priority: .veryHigh), on: target)
        generation = target.darkroom.generation
        let neighbours = [index + 1, index - 1].filter { $0 >= 0 && $0 < items.count }
        prefetcher.startPrefetching(
            with: neighbours.map { Self.request(for: items[$0], width: width, height: height, priority: .low) })
    }

    /// Takes a delivery for the large view. Returns what to start next: the animation's player when the image has
    /// one, else the look for its motion when the file may have one (``mayHaveMotion(_:)``).
    func apply(_ delivery: Delivery) -> Follow? {
        guard delivery.slot == Delivery.largeView, delivery.generation == generation else {
            // A player made for an image no longer shown stops decoding now, not when its buffer fills
            if case .player(let stale, _) = delivery.content { stale.stop() }
            return nil
        }
        switch delivery.content {
        case .image(let bitmap, let animation, _):
            delivered = bitmap
            still = bitmap
            if let animation { return .animation(animation) }
            return Self.mayHaveMotion(path) ? .motion(path: path) : nil
        case .player(let player, let returnsToStill):
            self.player?.stop()
            self.player = player
            self.returnsToStill = returnsToStill
            frameShown = -1
            motionStarted = nil
        case .failure:
            failed = true
        }
        return nil
    }

    /// What to upload before drawing at `now`: the animation's frame when it changed, else a delivered image not
    /// uploaded yet, else nil.
    func frameToUpload(now: Double) -> Bitmap? {
        // A still's motion plays once; then the still comes back
        if let player, returnsToStill {
            let started = motionStarted ?? now
            motionStarted = started
            if now - started >= player.loopDuration {
                player.stop()
                self.player = nil
                frameShown = -1
                delivered = nil
                return still
            }
        }
        if let player, let frame = player.frame(at: now), frame.index != frameShown {
            frameShown = frame.index
            delivered = nil
            return frame.bitmap
        }
        defer { delivered = nil }
        return delivered
    }

    /// Stops the request and the animation (the viewer destroys the texture).
    func close() {
        target.darkroom.cancel()
        player?.stop()
        delivered = nil
    }
}
