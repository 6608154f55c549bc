import Darkroom
import DarkroomImage
import DarkroomSupport

/// What a pipeline thread hands the drawing thread: a cell's image (or failure), tagged with the binding's
/// generation so the drawing thread can drop it if the cell has been reused since.
struct Delivery: Sendable {
    enum Content: Sendable {
        case image(Bitmap, animation: AnimatedImage?, frames: Int?)
        /// A player for the animation shown; `returnsToStill`: a still's motion, played once, after which the large
        /// view shows the still again.
        case player(AnimationPlayer, returnsToStill: Bool = false)
        case failure(String)
    }
    /// The cell (a ``GridCell/slot``), or ``Delivery/largeView``.
    var slot: Int
    var generation: UInt64
    var content: Content
    /// An image that stands in until the cell's thumbnail arrives (the file's embedded thumbnail).
    var isPreview = false

    /// The slot number of the large view's target.
    static let largeView = -1
}

/// Deliveries waiting for the drawing thread: pipeline threads post, the drawing thread takes them all at the top of
/// each frame. One lock, held for an append or a swap.
final class DeliveryInbox: Sendable {
    private let pending = Locked<[Delivery]>([])

    func post(_ delivery: Delivery) { pending.withLock { $0.append(delivery) } }

    func drain() -> [Delivery] {
        pending.withLock { deliveries in
            defer { deliveries.removeAll(keepingCapacity: true) }
            return deliveries
        }
    }
}

/// A reusable grid cell as the pipeline sees it: an ``ImageTarget`` whose `display` posts to the drawing thread.
/// The large view is one too, in the slot ``Delivery/largeView``.
///
/// The pipeline calls ``display(_:)`` only while the binding it belongs to is current (its generation check runs
/// under the target's display lock), so the generation read there is that binding's; the drawing thread keeps the
/// generation it got when it bound the cell and drops any delivery that does not match — a reused cell never shows
/// the image of the photo it showed before.
final class GridCell: ImageTarget {
    let darkroom = ImageTargetState()
    /// Which cell this is (its texture on the drawing thread), or ``Delivery/largeView``.
    let slot: Int
    private let inbox: DeliveryInbox

    init(slot: Int, inbox: DeliveryInbox) {
        self.slot = slot
        self.inbox = inbox
    }

    func display(_ content: ImageTargetContent) {
        let generation = darkroom.generation
        switch content {
        case .placeholder:
            return  // the drawing thread paints placeholders itself, from the ThumbHash store
        case .image(let response):
            guard let container = response.container else { return }
            Self.touchPages(of: container.bitmap)
            inbox.post(
                Delivery(
                    slot: slot, generation: generation,
                    content: .image(
                        container.bitmap, animation: container.animation, frames: container.probe?.frameCount),
                    isPreview: container.isPreview))
        case .failure(let error, _):
            inbox.post(Delivery(slot: slot, generation: generation, content: .failure(error.description)))
        }
    }

    /// Reads one byte of every page of `bitmap`, here on the pipeline's thread: an image-table entry is a mapping
    /// of the table's file, and the drawing thread's texture upload must not be the first to touch it (a page
    /// fault there is a disk read on the drawing thread).
    static func touchPages(of bitmap: Bitmap) {
        let rowsPerPage = max(1, 4096 / max(1, bitmap.bytesPerRow))
        var sum: UInt8 = 0
        for y in stride(from: 0, to: bitmap.height, by: rowsPerPage) { sum &+= bitmap.row(y).load(as: UInt8.self) }
        if bitmap.height > 0 { sum &+= bitmap.row(bitmap.height - 1).load(as: UInt8.self) }
        consume(sum)
    }

    @inline(never) private static func consume(_ value: UInt8) {}
}
