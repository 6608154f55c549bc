/// The simulated grid: `count` cells in `columns` columns of square cells, a viewport `visibleRows` rows tall.
public struct ScrollGeometry: Sendable, Hashable {
    /// Cells in the grid.
    public var count: Int
    /// Cells per row.
    public var columns: Int
    /// Viewport height in rows (may be fractional).
    public var visibleRows: Double
    /// Side of a cell in pixels (what `downsampled`, `pipeline` and `table` decode to).
    public var cellPixels: Int

    /// Creates a grid; `columns` and `count` are clamped to at least 1 and 0.
    public init(count: Int, columns: Int, visibleRows: Double, cellPixels: Int) {
        self.count = max(0, count)
        self.columns = max(1, columns)
        self.visibleRows = max(0, visibleRows)
        self.cellPixels = max(1, cellPixels)
    }

    /// A phone-like viewport 1080×1920 px split into `columns` columns.
    public static func phone(count: Int, columns: Int) -> ScrollGeometry {
        let side = 1080 / max(1, columns)
        return ScrollGeometry(count: count, columns: columns, visibleRows: 1920 / Double(side), cellPixels: side)
    }

    /// Rows in the grid.
    public var rows: Int { (count + columns - 1) / columns }

    /// The largest scroll offset (rows): the last row's bottom at the viewport's bottom.
    public var maxOffset: Double { max(0, Double(rows) - visibleRows) }

    /// Cells at least partly on screen with the top of the viewport at `offset` rows (clamped to the grid).
    public func visibleCells(atOffset offset: Double) -> Range<Int> {
        let o = min(max(0, offset), maxOffset)
        let first = Int(o.rounded(.down))
        let last = min(rows, Int((o + visibleRows).rounded(.up)))
        return min(count, first * columns)..<min(count, max(first, last) * columns)
    }

    /// The cells in the `screens` viewports' worth of rows below the visible range (what a prefetcher asks for).
    public func cellsAhead(of visible: Range<Int>, screens: Double) -> Range<Int> {
        let extra = Int((visibleRows * screens).rounded(.up)) * columns
        return visible.upperBound..<min(count, visible.upperBound + extra)
    }
}
