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

/// The large view: one image downsampled to the window, its texture, its animation.
final class LargeState {
    let target: LargeTarget
    var index = 0
    var generation: UInt64 = 0
    var image = ImageTexture()
    var failed = false
    var player: AnimationPlayer?
    var frameShown = -1

    init(target: LargeTarget) { self.target = target }
}

extension Viewer {
    /// The request for image `index` at the window's size (fit, never enlarged), animated when it has frames.
    func largeRequest(_ index: Int, priority: ImageRequest.Priority) -> ImageRequest {
        let item = items[index]
        var request = ImageRequest(
            source: .file(item.path), size: .fit(width: layout.width, height: layout.height), priority: priority,
            options: [.animated], pixelFormat: .exactly(.bgra8Premultiplied))
        request.imageID = item.imageID
        return request
    }

    /// Opens image `index` large (or steps the large view to it), and prefetches its neighbours.
    func openLarge(_ index: Int) {
        guard !items.isEmpty else { return }
        let index = min(max(0, index), items.count - 1)
        let state = large ?? LargeState(target: LargeTarget(inbox: inbox))
        state.index = index
        state.image.forget()
        state.failed = false
        state.player?.stop()
        state.player = nil
        state.frameShown = -1
        large = state
        selected = index
        pipeline.setImage(with: largeRequest(index, priority: .veryHigh), on: state.target)
        state.generation = state.target.darkroom.generation
        let neighbours = [index + 1, index - 1].filter { $0 >= 0 && $0 < items.count }
        prefetcher.startPrefetching(with: neighbours.map { largeRequest($0, priority: .low) })
    }

    /// Steps the large view by `delta` images.
    func step(_ delta: Int) {
        guard let large else { return }
        openLarge(large.index + delta)
    }

    /// Back to the grid, scrolled to the image that was open.
    func closeLarge() {
        guard let state = large else { return }
        state.target.darkroom.cancel()
        state.player?.stop()
        state.image.destroy(window)
        large = nil
        selected = state.index
        scroll.jump(to: layout.offset(revealing: state.index, from: scroll.offset), layout: layout)
    }

    func applyToLarge(_ delivery: Delivery) {
        guard let state = large, state.generation == delivery.generation else { return }
        switch delivery.content {
        case .image(let bitmap, let animation, _):
            showLarge(bitmap, state)
            if let animation { makePlayer(animation, slot: Delivery.largeView, generation: delivery.generation) }
        case .player(let player):
            state.player?.stop()
            state.player = player
            state.frameShown = -1
        case .failure:
            state.failed = true
        }
    }

    private func showLarge(_ bitmap: Bitmap, _ state: LargeState) {
        _ = state.image.show(bitmap, sizing: .growing, in: window)
    }

    /// Draws the large view: the image centred at its size (it was decoded to fit the window), or a grey
    /// placeholder until it arrives.
    func drawLarge(now: Double) -> (cells: Int, placeholders: Int) {
        guard let state = large else { return (0, 0) }
        if let player = state.player, let frame = player.frame(at: now), frame.index != state.frameShown {
            state.frameShown = frame.index
            showLarge(frame.bitmap, state)
        }
        guard
            state.image.drawCentred(
                in: PixelRect(x: 0, y: 0, width: layout.width, height: layout.height), window: window)
        else {
            let w = layout.width / 2
            let h = layout.height / 2
            window.fill(
                PixelRect(x: w / 2, y: h / 2, width: w, height: h),
                state.failed ? Self.failureColor : Self.placeholderGray)
            return (1, state.failed ? 0 : 1)
        }
        return (1, 0)
    }
}
