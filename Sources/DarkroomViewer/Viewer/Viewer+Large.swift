import Darkroom
import DarkroomImage
import DarkroomSupport

extension Viewer {
    /// Opens image `index` large (or steps the large view to it), and prefetches its neighbours.
    func openLarge(_ index: Int) {
        guard !items.isEmpty else { return }
        let view = large ?? LargeView(inbox: inbox)
        view.open(
            index, items: items, width: layout.width, height: layout.height, pipeline: pipeline,
            prefetcher: prefetcher)
        large = view
        selected = view.index
    }

    /// Steps the large view by `delta` images.
    func step(_ delta: Int) {
        guard let large else { return }
        openLarge(large.index + delta)
    }

    /// Finds and opens the motion of the file at `path` off the drawing thread (a video's clip, a still's Motion
    /// Photo or Live Photo clip; ``LargeView/motionPlayer(for:width:height:budgetBytes:)``) and delivers its player
    /// to the large view like an animation's. A file without motion, or whose clip cannot be read, keeps its still.
    func startMotion(_ path: String, generation: UInt64) {
        let inbox = inbox
        let budget = options.animationBudgetMiB << 20
        let (width, height) = (layout.width, layout.height)
        let isolation = options.decodeIsolation
        helper.enqueue { _ in
            guard
                let player = try? LargeView.motionPlayer(
                    for: path, width: width, height: height, budgetBytes: budget, isolation: isolation)
            else { return }
            player.prepare()
            inbox.post(
                Delivery(
                    slot: Delivery.largeView, generation: generation,
                    content: .player(player, returnsToStill: !FileExtensions.isVideo(path))))
        }
    }

    /// Back to the grid, scrolled to the image that was open.
    func closeLarge() {
        guard let view = large else { return }
        view.close()
        view.image.destroy(window)
        large = nil
        selected = view.index
        scroll.jump(to: layout.offset(revealing: view.index, from: scroll.offset), layout: layout)
    }

    /// Draws the large view: the image centred at its size (it was decoded to fit the window), or a grey
    /// placeholder until it arrives.
    func drawLarge(now: Double) -> (cells: Int, placeholders: Int, previews: Int) {
        guard let view = large else { return (0, 0, 0) }
        if let bitmap = view.frameToUpload(now: now) { _ = view.image.show(bitmap, sizing: .growing, in: window) }
        guard
            view.image.drawCentred(
                in: PixelRect(x: 0, y: 0, width: layout.width, height: layout.height), window: window)
        else {
            let w = layout.width / 2
            let h = layout.height / 2
            window.fill(
                PixelRect(x: w / 2, y: h / 2, width: w, height: h),
                view.failed ? Self.failureColor : Self.placeholderGray)
            return (1, view.failed ? 0 : 1, 0)
        }
        return (1, 0, 0)
    }
}
