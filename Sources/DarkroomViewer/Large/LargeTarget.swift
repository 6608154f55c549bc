import Darkroom
import DarkroomImage

/// The large view's target: like a grid cell, its `display` posts to the drawing thread.
final class LargeTarget: ImageTarget {
    let darkroom = ImageTargetState()
    private let inbox: DeliveryInbox

    init(inbox: DeliveryInbox) { self.inbox = inbox }

    func display(_ content: ImageTargetContent) {
        let generation = darkroom.generation
        switch content {
        case .placeholder: return
        case .image(let response):
            guard let container = response.container else { return }
            GridCell.touchPages(of: container.bitmap)
            inbox.post(
                Delivery(
                    slot: Delivery.largeView, generation: generation,
                    content: .image(
                        container.bitmap, animation: container.animation, frames: container.probe?.frameCount)))
        case .failure(let error, _):
            inbox.post(Delivery(slot: Delivery.largeView, generation: generation, content: .failure(error.description)))
        }
    }
}
