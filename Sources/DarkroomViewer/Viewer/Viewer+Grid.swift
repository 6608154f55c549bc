import Darkroom
import DarkroomImage
import DarkroomSupport
import Dispatch

extension Viewer {
    /// What a grid cell shows: the photo filled into a `side`-pixel square (centre-cropped), premultiplied BGRA as
    /// the texture takes it. The image table, when there is one, is made from the same value.
    static func cellGeometry(side: Int) -> OutputGeometry {
        OutputGeometry(size: .fill(width: side, height: side), pixelFormat: .exactly(.bgra8Premultiplied))
    }

    /// The request for cell `index`: the file at the grid's thumbnail side (filled and centre-cropped), named by the
    /// file's path, modification time and size, through the image table when there is one. A still whose valid
    /// desktop thumbnail is known is read from that small PNG instead of the photo (same name, so the same entry in
    /// every cache).
    func gridRequest(_ index: Int, priority: ImageRequest.Priority, animated: Bool = false) -> ImageRequest {
        let item = items[index]
        var path = item.path
        if !animated, let thumbnail = desktop?.thumbnail(for: item.imageID) { path = thumbnail }
        var request = ImageRequest(source: .file(path), priority: priority, options: animated ? [.animated] : [])
        request.geometry = Self.cellGeometry(side: layout.side)
        request.imageID = item.imageID
        return request
    }

    /// Binds the cells that came into view (and one row either side), releases those that left, raises the
    /// priority of bound cells that became visible, and moves the prefetch window ahead of the scroll.
    ///
    /// While the scroll jumps more than a screen a frame nothing is bound (``ScrollModel/shouldBindCells(layout:)``):
    /// those cells show grey until the scroll slows down.
    func updateBindings() {
        guard scroll.shouldBindCells(layout: layout) else { return }
        let visible = layout.visibleCells(offset: scroll.offset)
        let margin = layout.columns
        let wanted = max(0, visible.lowerBound - margin)..<min(items.count, visible.upperBound + margin)
        let now = recorder.now
        if wanted != boundRange {
            for (index, cell) in bound where !wanted.contains(index) { unbind(cell, now: now) }
            // Visible cells first (they get `.high`), then the margin rows.
            for index in visible where bound[index] == nil { bind(index, visible: true) }
            for index in wanted where bound[index] == nil { bind(index, visible: visible.contains(index)) }
            boundRange = wanted
            desktop?.lookUp(
                from: scroll.direction >= 0 ? wanted.lowerBound : max(0, wanted.lowerBound - 4 * wanted.count))
            updatePrefetch(visible: visible, wanted: wanted)
        }
        for index in visible {
            guard let cell = bound[index], !cell.isVisible else { continue }
            cell.isVisible = true
            if let task = cell.task, !task.isDone, task.priority < .high { task.priority = .high }
        }
    }

    private func bind(_ index: Int, visible: Bool) {
        let cell = freeCells.popLast() ?? makeCell()
        cell.reset()
        cell.index = index
        let item = items[index]
        cell.item = item
        bound[index] = cell
        switch options.strategy {
        case .pipeline:
            let request = gridRequest(index, priority: visible ? .high : .normal)
            if request.source != .file(item.path) { desktopSources += 1 }
            cell.task = pipeline.setImage(with: request, on: cell.cell)
            cell.generation = cell.cell.darkroom.generation
            if placeholders.isAnimated(item.imageID) { startAnimation(cell) }
        case .naive:
            // On purpose, for comparison: the decode runs here, on the drawing thread.
            cell.generation &+= 1
            let options = DecodeOptions(geometry: Self.cellGeometry(side: layout.side))
            if let image = try? ImageDecoder().decode(fileAt: item.path, options: options) {
                show(image.bitmap, in: cell)
            } else {
                cell.failed = true
            }
        }
    }

    private func makeCell() -> CellState {
        let cell = CellState(cell: GridCell(slot: cellsBySlot.count, inbox: inbox))
        cellsBySlot[cell.cell.slot] = cell
        return cell
    }

    /// Releases a cell: cancels its request (the shared work stops when nobody else wants it), records how long it
    /// showed a placeholder, and puts it back in the pool.
    func unbind(_ cell: CellState, now: Double) {
        if let since = cell.placeholderSince, !cell.imageDrawn {
            recorder.recordPlaceholder(shownFor: now - since, imageArrived: false)
        }
        bound[cell.index] = nil
        cell.cell.darkroom.cancel()
        cell.reset()
        freeCells.append(cell)
    }

    /// Every bound cell released and rebound (after the grid's geometry changed).
    func rebindAll() {
        let now = recorder.now
        for cell in bound.values { unbind(cell, now: now) }
        boundRange = 0..<0
    }

    private func updatePrefetch(visible: Range<Int>, wanted: Range<Int>) {
        guard options.strategy == .pipeline else { return }
        let rows = Int((Double(layout.height) / Double(layout.rowHeight) * options.prefetchScreens).rounded(.up))
        let ahead = layout.cells(beyond: wanted, rows: rows, direction: scroll.direction)
        let aheadSet = Set(ahead)
        let stale = prefetching.filter { !aheadSet.contains($0.key) }
        if !stale.isEmpty {
            prefetcher.stopPrefetching(with: Array(stale.values))
            for index in stale.keys { prefetching[index] = nil }
        }
        var fresh: [ImageRequest] = []
        for index in ahead where prefetching[index] == nil {
            let request = gridRequest(index, priority: .low)
            prefetching[index] = request
            fresh.append(request)
        }
        if !fresh.isEmpty { prefetcher.startPrefetching(with: fresh) }
        placeholders.prepare(wanted.map { items[$0].imageID } + ahead.map { items[$0].imageID })
    }

    /// Starts the animated request for a cell whose image has frames; its player arrives as a delivery.
    func startAnimation(_ cell: CellState) {
        guard cell.animationTask == nil, cell.player == nil, cell.index >= 0 else { return }
        let slot = cell.cell.slot
        let generation = cell.generation
        let inbox = inbox
        cell.animationTask = pipeline.loadImage(with: gridRequest(cell.index, priority: .normal, animated: true)) {
            result in
            guard case .success(let response) = result, let container = response.container,
                let animation = container.animation
            else { return }
            inbox.post(
                Delivery(
                    slot: slot, generation: generation,
                    content: .image(container.bitmap, animation: animation, frames: animation.info.frameCount)))
        }
    }

    /// Takes what the pipeline delivered since the last frame into the cells (or the large view) still bound to it.
    func applyDeliveries() {
        for delivery in inbox.drain() {
            if delivery.slot == Delivery.largeView {
                applyToLarge(delivery)
                continue
            }
            guard let cell = cellsBySlot[delivery.slot], cell.index >= 0, cell.generation == delivery.generation else {
                continue
            }
            switch delivery.content {
            case .image(let bitmap, let animation, let frames):
                show(bitmap, in: cell)
                if let item = cell.item { placeholders.remember(item.imageID, thumbnail: bitmap, frames: frames) }
                if let animation {
                    makePlayer(animation, slot: delivery.slot, generation: delivery.generation)
                } else if (frames ?? 1) > 1 {
                    startAnimation(cell)
                }
            case .player(let player):
                cell.player?.stop()
                cell.player = player
                cell.frameShown = -1
            case .failure:
                cell.failed = true
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
