import Darkroom
import DarkroomImage

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
