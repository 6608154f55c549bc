/// Where every cell of the grid is, for a window size, a scale factor and a thumbnail side: pure arithmetic, so
/// the drawing thread calls it every frame and tests check it without a window.
///
/// Thumbnails keep one side (`cellPoints` × scale, in pixels) whatever the window's width — the column count
/// changes and the spare width goes into the gaps — so a resize reflows the grid without decoding anything again
/// (the thumbnails already made, and the image table that holds them, stay valid).
struct GridLayout: Sendable, Equatable {
    /// Drawable size in pixels.
    var width: Int
    var height: Int
    /// Pixels per point (2 on a high-DPI display).
    var scale: Double
    /// Thumbnail side in pixels.
    let side: Int
    /// Smallest gap between cells, pixels.
    let minimumGap: Int
    /// Cells in the grid.
    var count: Int
    /// Width of the scrollbar strip at the right edge, pixels.
    let scrollbarWidth: Int

    init(width: Int, height: Int, scale: Double, cellPoints: Int, count: Int) {
        self.width = max(1, width)
        self.height = max(1, height)
        self.scale = max(0.5, scale)
        side = max(16, Int((Double(cellPoints) * self.scale).rounded()))
        minimumGap = max(2, Int((6 * self.scale).rounded()))
        scrollbarWidth = max(6, Int((10 * self.scale).rounded()))
        self.count = max(0, count)
    }

    /// Columns that fit beside the scrollbar (at least one).
    var columns: Int { max(1, (width - scrollbarWidth - minimumGap) / (side + minimumGap)) }
    /// The horizontal gap once the spare width is shared out.
    var gap: Int { max(minimumGap, (width - scrollbarWidth - columns * side) / (columns + 1)) }
    /// One row's height: a thumbnail and a gap.
    var rowHeight: Int { side + minimumGap }
    /// Rows in the grid.
    var rows: Int { (count + columns - 1) / columns }
    /// Height of everything, pixels.
    var contentHeight: Int { rows * rowHeight + minimumGap }
    /// The largest scroll offset: the last row's bottom at the window's bottom.
    var maxOffset: Double { Double(max(0, contentHeight - height)) }

    /// Clamps an offset into 0…``maxOffset``.
    func clamped(_ offset: Double) -> Double { min(max(0, offset), maxOffset) }

    /// Cells at least partly on screen at scroll `offset` (pixels from the top).
    func visibleCells(offset: Double) -> Range<Int> {
        let o = clamped(offset)
        let firstRow = max(0, Int((o - Double(minimumGap)) / Double(rowHeight)))
        let lastRow = min(rows, Int(((o + Double(height)) / Double(rowHeight)).rounded(.up)))
        return min(count, firstRow * columns)..<min(count, max(firstRow, lastRow) * columns)
    }

    /// `rows` rows of cells after (`direction` > 0) or before (< 0) `visible`, nearest first.
    func cells(beyond visible: Range<Int>, rows extra: Int, direction: Int) -> [Int] {
        let n = extra * columns
        if direction >= 0 { return Array(visible.upperBound..<min(count, visible.upperBound + n)) }
        return Array((max(0, visible.lowerBound - n)..<visible.lowerBound).reversed())
    }

    /// Where cell `index` is drawn at scroll `offset`.
    func frame(of index: Int, offset: Double) -> PixelRect {
        let row = index / columns
        let column = index % columns
        let y = minimumGap + row * rowHeight - Int(clamped(offset).rounded())
        return PixelRect(x: gap + column * (side + gap), y: y, width: side, height: side)
    }

    /// The cell under a point (pixels), if any.
    func cell(atX x: Double, y: Double, offset: Double) -> Int? {
        let contentY = y + clamped(offset) - Double(minimumGap)
        guard contentY >= 0, x >= Double(gap) else { return nil }
        let row = Int(contentY) / rowHeight
        let column = Int(x - Double(gap)) / (side + gap)
        guard column < columns else { return nil }
        let index = row * columns + column
        guard index < count, frame(of: index, offset: offset).contains(x: x, y: y) else { return nil }
        return index
    }

    /// The offset that brings `index`'s row fully into view, moving as little as possible.
    func offset(revealing index: Int, from offset: Double) -> Double {
        let top = Double((index / columns) * rowHeight)
        let bottom = top + Double(rowHeight + minimumGap)
        if top < offset { return clamped(top) }
        if bottom > offset + Double(height) { return clamped(bottom - Double(height)) }
        return clamped(offset)
    }

    // MARK: Scrollbar

    /// The scrollbar's track: the right edge, the window's height.
    var scrollbarTrack: PixelRect { PixelRect(x: width - scrollbarWidth, y: 0, width: scrollbarWidth, height: height) }

    /// The thumb at `offset`: its height is the visible share of the content (at least 3 widths).
    func scrollbarThumb(offset: Double) -> PixelRect {
        let share = min(1, Double(height) / Double(max(1, contentHeight)))
        let thumb = max(scrollbarWidth * 3, Int(Double(height) * share))
        let travel = max(0, height - thumb)
        let y = maxOffset > 0 ? Int((clamped(offset) / maxOffset * Double(travel)).rounded()) : 0
        return PixelRect(x: width - scrollbarWidth, y: y, width: scrollbarWidth, height: thumb)
    }

    /// The offset that puts the thumb's top at `thumbTop` pixels (dragging the thumb).
    func offset(forThumbTop thumbTop: Double) -> Double {
        let travel = Double(max(1, height - scrollbarThumb(offset: 0).height))
        return clamped(thumbTop / travel * maxOffset)
    }
}
