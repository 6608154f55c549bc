extension Viewer {
    /// Window points → drawable pixels.
    var pixelsPerPoint: Double {
        let points = window.pointSize.width
        return points > 0 ? Double(window.pixelSize.width) / Double(points) : 1
    }

    /// Reacts to one input event (from the window or a script).
    func handle(_ event: InputEvent) {
        switch event {
        case .quit: running = false
        case .resized: handleResize()
        case .wheel(let dy):
            guard large == nil else { return step(dy > 0 ? -1 : 1) }
            scroll.wheel(notches: dy, layout: layout)
        case .key(let key): handle(key)
        case .mouseDown(let x, let y, _): mouseDown(x: x * pixelsPerPoint, y: y * pixelsPerPoint)
        case .mouseMoved(_, let y): scroll.dragThumb(to: y * pixelsPerPoint, layout: layout)
        case .mouseUp: scroll.releaseThumb()
        }
    }

    private func handle(_ key: Key) {
        if large != nil {
            switch key {
            case .escape: closeLarge()
            case .left, .up, .pageUp: step(-1)
            case .right, .down, .pageDown: step(1)
            case .home: openLarge(0)
            case .end: openLarge(items.count - 1)
            case .quit: running = false
            case .enter: break
            }
            return
        }
        guard !items.isEmpty else {
            if key == .quit { running = false }
            return
        }
        let columns = layout.columns
        let rowsPerScreen = max(1, layout.height / layout.rowHeight)
        switch key {
        case .up: select(selected - columns)
        case .down: select(selected + columns)
        case .left: select(selected - 1)
        case .right: select(selected + 1)
        case .pageUp:
            select(selected - columns * rowsPerScreen)
            scroll.ease(to: scroll.offset - Double(layout.height), layout: layout)
        case .pageDown:
            select(selected + columns * rowsPerScreen)
            scroll.ease(to: scroll.offset + Double(layout.height), layout: layout)
        case .home:
            select(0)
            scroll.ease(to: 0, layout: layout)
        case .end:
            select(items.count - 1)
            scroll.ease(to: layout.maxOffset, layout: layout)
        case .enter: openLarge(selected)
        case .escape: break
        case .quit: running = false
        }
    }

    /// Moves the selection (clamped) and scrolls as little as needed to show it.
    private func select(_ index: Int) {
        selected = min(max(0, index), items.count - 1)
        scroll.ease(to: layout.offset(revealing: selected, from: scroll.destination), layout: layout)
    }

    private func mouseDown(x: Double, y: Double) {
        if large != nil { return }
        if layout.scrollbarTrack.contains(x: x, y: y) {
            let thumb = layout.scrollbarThumb(offset: scroll.offset)
            if thumb.contains(x: x, y: y) {
                scroll.grabThumb(at: y - Double(thumb.y))
            } else {
                scroll.ease(to: scroll.offset + (y < Double(thumb.y) ? -1 : 1) * Double(layout.height), layout: layout)
            }
            return
        }
        guard let index = layout.cell(atX: x, y: y, offset: scroll.offset) else { return }
        selected = index
        openLarge(index)
    }

    /// The window changed size: the grid reflows (same thumbnail side, new column count) keeping the first visible
    /// cell in view; the large view asks for its image at the new size.
    func handleResize() {
        let pixels = window.pixelSize
        guard pixels.width != layout.width || pixels.height != layout.height else { return }
        let anchor = layout.visibleCells(offset: scroll.offset).lowerBound
        layout.width = pixels.width
        layout.height = pixels.height
        scroll.jump(to: Double((anchor / layout.columns) * layout.rowHeight), layout: layout)
        rebindAll()
        if let large { openLarge(large.index) }
    }

}
