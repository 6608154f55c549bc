import Foundation

extension Viewer {
    /// Pixels per wheel notch (times the scale factor).
    static let wheelStep = 96.0
    /// A fling's velocity decays as e^(−t/τ) (about a UIScrollView's normal deceleration).
    static let flingTimeConstant = 0.35

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
            velocity = 0
            wheelTarget = layout.clamped((wheelTarget ?? offset) - dy * Self.wheelStep * layout.scale)
        case .key(let key): handle(key)
        case .mouseDown(let x, let y, _): mouseDown(x: x * pixelsPerPoint, y: y * pixelsPerPoint)
        case .mouseMoved(_, let y):
            guard let grab = dragGrab else { return }
            offset = layout.offset(forThumbTop: y * pixelsPerPoint - grab)
            wheelTarget = nil
            velocity = 0
        case .mouseUp: dragGrab = nil
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
            scroll(to: offset - Double(layout.height))
        case .pageDown:
            select(selected + columns * rowsPerScreen)
            scroll(to: offset + Double(layout.height))
        case .home:
            select(0)
            scroll(to: 0)
        case .end:
            select(items.count - 1)
            scroll(to: layout.maxOffset)
        case .enter: openLarge(selected)
        case .escape: break
        case .quit: running = false
        }
    }

    /// Moves the selection (clamped) and scrolls as little as needed to show it.
    private func select(_ index: Int) {
        selected = min(max(0, index), items.count - 1)
        scroll(to: layout.offset(revealing: selected, from: wheelTarget ?? offset))
    }

    /// Scrolls smoothly to an offset (the wheel's easing).
    func scroll(to target: Double) {
        velocity = 0
        wheelTarget = layout.clamped(target)
    }

    private func mouseDown(x: Double, y: Double) {
        if large != nil { return }
        if layout.scrollbarTrack.contains(x: x, y: y) {
            let thumb = layout.scrollbarThumb(offset: offset)
            if thumb.contains(x: x, y: y) {
                dragGrab = y - Double(thumb.y)
            } else {
                scroll(to: offset + (y < Double(thumb.y) ? -1 : 1) * Double(layout.height))
            }
            return
        }
        guard let index = layout.cell(atX: x, y: y, offset: offset) else { return }
        selected = index
        openLarge(index)
    }

    /// The window changed size: the grid reflows (same thumbnail side, new column count) keeping the first visible
    /// cell in view; the large view asks for its image at the new size.
    func handleResize() {
        let pixels = window.pixelSize
        guard pixels.width != layout.width || pixels.height != layout.height else { return }
        let anchor = layout.visibleCells(offset: offset).lowerBound
        layout.width = pixels.width
        layout.height = pixels.height
        offset = layout.clamped(Double((anchor / layout.columns) * layout.rowHeight))
        wheelTarget = nil
        velocity = 0
        rebindAll()
        if let large { openLarge(large.index) }
    }

    /// Advances the scroll by one frame: a scripted constant speed, a fling's decay, or the wheel's easing.
    func moveScroll(dt: Double) {
        if let v = scriptVelocity {
            offset += v * dt
            wheelTarget = nil
        } else if velocity != 0 {
            offset += velocity * dt
            velocity *= exp(-dt / Self.flingTimeConstant)
            if abs(velocity) < 20 { velocity = 0 }
        } else if let target = wheelTarget {
            let next = offset + (target - offset) * min(1, dt * 18)
            offset = abs(target - next) < 0.5 ? target : next
            if offset == target { wheelTarget = nil }
        }
        let clamped = layout.clamped(offset)
        if clamped != offset {
            offset = clamped
            velocity = 0
        }
        if offset != lastOffset { direction = offset > lastOffset ? 1 : -1 }
        lastOffset = offset
    }
}
