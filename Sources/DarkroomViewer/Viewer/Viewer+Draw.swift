import Darkroom
import DarkroomImage

extension Viewer {
    static let background = Color(r: 0, g: 0, b: 0)
    static let placeholderGray = Color(r: 48, g: 48, b: 52)
    static let failureColor = Color(r: 90, g: 24, b: 28)
    static let selectionColor = Color(r: 80, g: 160, b: 255)
    static let trackColor = Color(r: 28, g: 28, b: 30)
    static let thumbColor = Color(r: 120, g: 120, b: 128)

    /// Draws the frame: the large view, or the grid's visible cells (image, else ThumbHash placeholder, else grey),
    /// the selection and the scrollbar. Returns the cells on screen, how many of them were placeholders, and how many
    /// showed a preview (an embedded thumbnail standing in for theirs).
    func draw(now: Double) -> (cells: Int, placeholders: Int, previews: Int) {
        window.clear(Self.background)
        if large != nil { return drawLarge(now: now) }
        let visible = layout.visibleCells(offset: scroll.offset)
        var placeholderCount = 0
        var previewCount = 0
        for index in visible {
            let rect = layout.frame(of: index, offset: scroll.offset)
            guard let cell = binder.bound[index] else {
                placeholderCount += 1
                window.fill(rect, Self.placeholderGray)
                continue
            }
            advanceAnimation(cell, now: now)
            if cell.image.hasImage {
                if cell.showsPreview { previewCount += 1 }
                if !cell.imageDrawn {
                    cell.imageDrawn = true
                    if cell.showsPreview { recorder.recordPreviewFirst() }
                    if let since = cell.placeholderSince {
                        recorder.recordPlaceholder(shownFor: now - since, imageArrived: true)
                    } else {
                        recorder.recordShownAtOnce()
                    }
                }
                _ = cell.image.drawCentred(in: rect, window: window)
            } else if cell.failed {
                window.fill(rect, Self.failureColor)
            } else {
                placeholderCount += 1
                if cell.placeholderSince == nil { cell.placeholderSince = now }
                drawPlaceholder(cell, in: rect)
            }
            if index == selected { drawSelection(rect) }
        }
        let track = layout.scrollbarTrack
        window.fill(track, Self.trackColor)
        if layout.maxOffset > 0 { window.fill(layout.scrollbarThumb(offset: scroll.offset), Self.thumbColor) }
        return (visible.count, placeholderCount, previewCount)
    }

    private func drawPlaceholder(_ cell: CellState, in rect: PixelRect) {
        if !cell.placeholder.hasImage, let item = cell.item,
            let bitmap = placeholders.placeholder(for: item.imageID)
        {
            _ = cell.placeholder.show(bitmap, sizing: .exactly(width: 32, height: 32), in: window, linearScaling: true)
        }
        // Hashed from the filled (square) thumbnail, so it covers the cell as the thumbnail will.
        if !cell.placeholder.drawStretched(into: rect, window: window) { window.fill(rect, Self.placeholderGray) }
    }

    private func drawSelection(_ rect: PixelRect) {
        let t = max(2, Int(layout.scale * 2))
        let c = Self.selectionColor
        window.fill(PixelRect(x: rect.x - t, y: rect.y - t, width: rect.width + 2 * t, height: t), c)
        window.fill(PixelRect(x: rect.x - t, y: rect.y + rect.height, width: rect.width + 2 * t, height: t), c)
        window.fill(PixelRect(x: rect.x - t, y: rect.y, width: t, height: rect.height), c)
        window.fill(PixelRect(x: rect.x + rect.width, y: rect.y, width: t, height: rect.height), c)
    }

    /// Shows an animated cell's current frame (uploading only when the frame changed). The player decodes ahead on
    /// the pipeline's threads; a lookup never waits.
    private func advanceAnimation(_ cell: CellState, now: Double) {
        guard let player = cell.player, let frame = player.frame(at: now), frame.index != cell.frameShown else {
            return
        }
        cell.frameShown = frame.index
        show(frame.bitmap, in: cell)
    }
}
