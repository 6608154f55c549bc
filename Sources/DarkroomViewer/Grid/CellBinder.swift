import Darkroom
import DarkroomImage
import DarkroomVideo

/// Binds the grid's cells to pipeline requests as they scroll into view, and lets them go as they leave.
///
/// Each frame ``update(items:layout:scroll:recorder:)`` binds the visible cells and one row either side (visible
/// ones first, at `.high`), releases the cells that left (cancelling their requests: shared work stops when nobody
/// else wants it), sets each bound cell's priority by what the user will see, and moves the prefetch window ahead
/// of the scroll. While the grid scrolls, a cell that leaves the screen within ``leavingHorizon`` drops to
/// `.veryLow`, below the prefetches: its decode would finish for a cell already gone, so the decoding threads go to
/// the cells that stay (those coming in, on the far side of the screen).
/// Cells are reused from a pool, so their number stays near one screenful plus the margin rows whatever the library's
/// size; a reused cell's binding has a new generation and a delivery carrying an older one is dropped
/// (``cell(for:)``).
///
/// Only the drawing thread calls it. It never touches the window (the viewer uploads and draws), so it runs in tests
/// without a display. Cost per frame: O(cells bound) when the bound range moves, O(visible cells) otherwise.
final class CellBinder {
    let pipeline: ImagePipeline
    let prefetcher: ImagePrefetcher
    let placeholders: PlaceholderStore
    let desktop: DesktopThumbnails?
    let inbox: DeliveryInbox
    let strategy: ViewerOptions.Strategy
    /// How far ahead of the bound rows to prefetch, in screens.
    let prefetchScreens: Double
    /// Whether photo requests ask for the file's embedded thumbnail as a preview.
    let embeddedThumbnails: Bool

    /// Cells bound to an image, by the image's index.
    private(set) var bound: [Int: CellState] = [:]
    /// Every cell made, by slot (a delivery names its cell by slot).
    private(set) var cellsBySlot: [Int: CellState] = [:]
    private var freeCells: [CellState] = []
    /// Prefetch requests running, by image index.
    private(set) var prefetching: [Int: ImageRequest] = [:]
    /// The indices bound at the last change.
    private(set) var boundRange: Range<Int> = 0..<0
    /// A cell that leaves the screen sooner than this while the grid scrolls is not worth decoding now, seconds:
    /// about what a few 12 MP decodes take on one thread, the wait a new decode faces behind those running.
    static let leavingHorizon = 0.1
    /// Bindings whose request reads a desktop thumbnail instead of the photo.
    private(set) var desktopSources = 0

    init(
        pipeline: ImagePipeline, prefetcher: ImagePrefetcher, placeholders: PlaceholderStore,
        desktop: DesktopThumbnails?, inbox: DeliveryInbox, strategy: ViewerOptions.Strategy, prefetchScreens: Double,
        embeddedThumbnails: Bool = true
    ) {
        self.pipeline = pipeline
        self.prefetcher = prefetcher
        self.placeholders = placeholders
        self.desktop = desktop
        self.inbox = inbox
        self.strategy = strategy
        self.prefetchScreens = prefetchScreens
        self.embeddedThumbnails = embeddedThumbnails
    }

    /// What a grid cell shows: the photo filled into a `side`-pixel square (centre-cropped), premultiplied BGRA as
    /// the texture takes it. The image table, when there is one, is made from the same value.
    static func cellGeometry(side: Int) -> OutputGeometry {
        OutputGeometry(size: .fill(width: side, height: side), pixelFormat: .exactly(.bgra8Premultiplied))
    }

    /// The request for `item` in a grid of `side`-pixel cells, named by the file's path, modification time and size,
    /// through the image table when there is one. A still whose valid desktop thumbnail is known is read from that
    /// small PNG instead of the photo (same name, so the same entry in every cache). A still read from the photo
    /// shows the photo's embedded thumbnail first, when it has one (prefetches ask too: a cell that joins its
    /// prefetch gets the preview already made).
    func request(
        for item: LibraryItem, side: Int, priority: ImageRequest.Priority, animated: Bool = false
    ) -> ImageRequest {
        var path = item.path
        if !animated, let thumbnail = desktop?.thumbnail(for: item.imageID) { path = thumbnail }
        var options: ImageRequest.Options = animated ? [.animated] : []
        if !animated, path == item.path, embeddedThumbnails { options.insert(.embeddedThumbnailPreview) }
        var request = ImageRequest(source: .file(path), priority: priority, options: options)
        request.geometry = Self.cellGeometry(side: side)
        request.imageID = item.imageID
        return request
    }

    /// Binds the cells that came into view, releases those that left, raises cells that became visible and moves
    /// the prefetch window. While the scroll jumps more than a screen a frame nothing is bound
    /// (``ScrollModel/shouldBindCells(layout:)``): those cells show grey until the scroll slows down.
    func update(items: [LibraryItem], layout: GridLayout, scroll: inout ScrollModel, recorder: inout FrameRecorder) {
        guard scroll.shouldBindCells(layout: layout) else { return }
        let visible = layout.visibleCells(offset: scroll.offset)
        let wanted = Self.boundCells(visible: visible, layout: layout, count: items.count)
        if wanted != boundRange {
            let now = recorder.now
            for (index, cell) in bound where !wanted.contains(index) { unbind(cell, now: now, recorder: &recorder) }
            // Visible cells first (they get `.high`), then the margin rows.
            for index in visible where bound[index] == nil {
                bind(index, items: items, side: layout.side, visible: true)
            }
            for index in wanted where bound[index] == nil {
                bind(index, items: items, side: layout.side, visible: visible.contains(index))
            }
            boundRange = wanted
            desktop?.lookUp(
                from: scroll.direction >= 0 ? wanted.lowerBound : max(0, wanted.lowerBound - 4 * wanted.count))
            updatePrefetch(items: items, layout: layout, direction: scroll.direction, visible: visible, wanted: wanted)
        }
        let speed = scroll.speed
        for (index, cell) in bound {
            guard let task = cell.task, !task.isDone else { continue }
            let wanted = Self.priority(
                of: index, visible: visible.contains(index), layout: layout, offset: scroll.offset, speed: speed)
            if task.priority != wanted { task.priority = wanted }
        }
    }

    /// The cells kept bound while `visible` is on screen: those and a row of margin above and below, within the
    /// `count` items known.
    static func boundCells(visible: Range<Int>, layout: GridLayout, count: Int) -> Range<Int> {
        let lower = max(0, visible.lowerBound - layout.columns)
        return lower..<max(lower, min(count, visible.upperBound + layout.columns))
    }

    /// A bound cell's priority: `.high` on screen, `.normal` in the margin rows — unless the grid scrolls at `speed`
    /// (pixels per second, positive down) and the cell leaves the screen within ``leavingHorizon`` (or has already
    /// left it: a margin row behind the scroll), when it is `.veryLow`. At rest every cell keeps its place.
    static func priority(
        of index: Int, visible: Bool, layout: GridLayout, offset: Double, speed: Double
    ) -> ImageRequest.Priority {
        let frame = layout.frame(of: index, offset: offset)
        let remaining: Double
        if speed > 0 {
            remaining = Double(frame.y + frame.height) / speed  // until its bottom edge passes the top
        } else if speed < 0 {
            remaining = Double(layout.height - frame.y) / -speed  // until its top edge passes the bottom
        } else {
            remaining = .infinity
        }
        if remaining < leavingHorizon { return .veryLow }
        return visible ? .high : .normal
    }

    /// Releases every bound cell; the next ``update(items:layout:scroll:recorder:)`` binds afresh (after the grid's
    /// geometry changed, and at shutdown).
    func unbindAll(recorder: inout FrameRecorder) {
        let now = recorder.now
        for cell in bound.values { unbind(cell, now: now, recorder: &recorder) }
        boundRange = 0..<0
    }

    /// The cell a delivery is for, when that cell is still bound to the binding the delivery was made for.
    func cell(for delivery: Delivery) -> CellState? {
        guard let cell = cellsBySlot[delivery.slot], cell.index >= 0, cell.generation == delivery.generation else {
            return nil
        }
        return cell
    }

    /// Starts the animated request for a cell whose image has frames; its player arrives as a delivery.
    func startAnimation(_ cell: CellState, side: Int) {
        guard cell.animationTask == nil, cell.player == nil, cell.index >= 0, let item = cell.item else { return }
        let slot = cell.cell.slot
        let generation = cell.generation
        let inbox = inbox
        cell.animationTask = pipeline.loadImage(with: request(for: item, side: side, priority: .normal, animated: true))
        {
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

    private func bind(_ index: Int, items: [LibraryItem], side: Int, visible: Bool) {
        let cell = freeCells.popLast() ?? makeCell()
        cell.reset()
        cell.index = index
        let item = items[index]
        cell.item = item
        bound[index] = cell
        switch strategy {
        case .pipeline:
            let request = request(for: item, side: side, priority: visible ? .high : .normal)
            if request.source != .file(item.path) { desktopSources += 1 }
            cell.task = pipeline.setImage(with: request, on: cell.cell)
            cell.generation = cell.cell.darkroom.generation
            if placeholders.isAnimated(item.imageID) { startAnimation(cell, side: side) }
        case .naive:
            // On purpose, for comparison: the decode runs here, on the drawing thread.
            cell.generation &+= 1
            let options = DecodeOptions(geometry: Self.cellGeometry(side: side))
            let content: Delivery.Content
            do {
                content = .image(
                    try VideoDecoder.imageDecoder.decode(fileAt: item.path, options: options).bitmap, animation: nil,
                    frames: nil)
            } catch {
                content = .failure(error.description)
            }
            inbox.post(Delivery(slot: cell.cell.slot, generation: cell.generation, content: content))
        }
    }

    private func makeCell() -> CellState {
        let cell = CellState(cell: GridCell(slot: cellsBySlot.count, inbox: inbox))
        cellsBySlot[cell.cell.slot] = cell
        return cell
    }

    /// Releases a cell: cancels its request, records how long it showed a placeholder, and puts it back in the pool.
    private func unbind(_ cell: CellState, now: Double, recorder: inout FrameRecorder) {
        if let since = cell.placeholderSince, !cell.imageDrawn {
            recorder.recordPlaceholder(shownFor: now - since, imageArrived: false)
        }
        if cell.imageDrawn && cell.showsPreview { recorder.recordLeftWithPreview() }
        bound[cell.index] = nil
        cell.cell.darkroom.cancel()
        cell.reset()
        freeCells.append(cell)
    }

    private func updatePrefetch(
        items: [LibraryItem], layout: GridLayout, direction: Int, visible: Range<Int>, wanted: Range<Int>
    ) {
        guard strategy == .pipeline else { return }
        let rows = Int((Double(layout.height) / Double(layout.rowHeight) * prefetchScreens).rounded(.up))
        let ahead = layout.cells(beyond: wanted, rows: rows, direction: direction)
        let aheadSet = Set(ahead)
        let stale = prefetching.filter { !aheadSet.contains($0.key) }
        if !stale.isEmpty {
            prefetcher.stopPrefetching(with: Array(stale.values))
            for index in stale.keys { prefetching[index] = nil }
        }
        var fresh: [ImageRequest] = []
        for index in ahead where prefetching[index] == nil {
            let request = request(for: items[index], side: layout.side, priority: .low)
            prefetching[index] = request
            fresh.append(request)
        }
        if !fresh.isEmpty { prefetcher.startPrefetching(with: fresh) }
        placeholders.prepare(wanted.map { items[$0].imageID } + ahead.map { items[$0].imageID })
    }
}
