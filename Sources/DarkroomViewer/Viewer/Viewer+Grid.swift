import Darkroom
import DarkroomImage
import DarkroomSupport
import Dispatch

extension Viewer {
    /// Binds the cells that came into view and releases those that left (``CellBinder``).
    func updateBindings() {
        binder.update(items: items, layout: layout, scroll: &scroll, recorder: &recorder)
    }

    /// Every bound cell released and rebound (after the grid's geometry changed).
    func rebindAll() {
        binder.unbindAll(recorder: &recorder)
    }

    /// Takes what the pipeline delivered since the last frame into the cells (or the large view) still bound to it.
    func applyDeliveries() {
        for delivery in inbox.drain() {
            if delivery.slot == Delivery.largeView {
                switch large?.apply(delivery) {
                case .animation(let animation)?:
                    makePlayer(animation, slot: Delivery.largeView, generation: delivery.generation)
                case .motion(let path)?:
                    startMotion(path, generation: delivery.generation)
                case nil: break
                }
                continue
            }
            guard let cell = binder.cell(for: delivery) else { continue }
            switch delivery.content {
            case .image(let bitmap, _, _) where delivery.isPreview:
                // A stand-in until the thumbnail comes; never over the thumbnail itself
                guard !cell.image.hasImage || cell.showsPreview else { continue }
                show(bitmap, in: cell)
                cell.showsPreview = true
            case .image(let bitmap, let animation, let frames):
                show(bitmap, in: cell)
                cell.showsPreview = false
                guard options.strategy == .pipeline else { continue }
                if let item = cell.item { placeholders.remember(item.imageID, thumbnail: bitmap, frames: frames) }
                if let animation {
                    makePlayer(animation, slot: delivery.slot, generation: delivery.generation)
                } else if (frames ?? 1) > 1 {
                    binder.startAnimation(cell, side: layout.side)
                }
            case .player(let player, _):
                cell.player?.stop()
                cell.player = player
                cell.frameShown = -1
            case .failure:
                cell.failed = true
                if cell.showsPreview {  // the photo failed: its failure shows, not a stand-in for it
                    cell.image.forget()
                    cell.showsPreview = false
                }
            }
        }
    }

    /// Parses the animation and makes its player off the drawing thread; the player comes back as a delivery.
    func makePlayer(_ animation: AnimatedImage, slot: Int, generation: UInt64) {
        let inbox = inbox
        let budget = options.animationBudgetMiB << 20
        helper.enqueue { _ in
            guard let player = try? animation.makePlayer(budgetBytes: budget) else { return }
            player.prepare()
            inbox.post(Delivery(slot: slot, generation: generation, content: .player(player)))
        }
    }

    /// Copies a bitmap into the cell's texture (created at the grid's side the first time).
    func show(_ bitmap: Bitmap, in cell: CellState) {
        let side = layout.side
        if cell.image.show(bitmap, sizing: .exactly(width: side, height: side), in: window) { uploads += 1 }
    }
}
