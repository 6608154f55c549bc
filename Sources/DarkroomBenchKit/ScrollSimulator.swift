import DarkroomImage
import Foundation

/// How a strategy gets images for cells. All calls come from the render thread; background work posts results
/// to the inbox, addressed by slot and generation.
public protocol ScrollStrategy: AnyObject {
    /// The name in reports.
    var name: String { get }
    /// `index` came into view in `slot` (bind `generation`). Return a bitmap to show on this frame, or `nil` and
    /// post one to `inbox` later.
    func bind(index: Int, slot: Int, generation: UInt64, inbox: DeliveryInbox) -> Bitmap?
    /// `index` left the screen.
    func unbind(index: Int)
    /// Called once per frame after binding, with the visible cells (prefetch hook).
    func scrolled(visible: Range<Int>)
    /// The scroll ended: stop background work.
    func finish()
    /// Distinct threads that did image work so far, the render thread included.
    var workThreads: Int { get }
}

extension ScrollStrategy {
    /// No-op.
    public func unbind(index: Int) {}
    /// No-op.
    public func scrolled(visible: Range<Int>) {}
    /// No-op.
    public func finish() {}
    /// Just the render thread.
    public var workThreads: Int { 1 }
}

/// "Displays" a bitmap as a renderer uploading it would: reads one byte in every 64 of every row.
@inline(never)
public func touchRows(_ bitmap: Bitmap) -> UInt64 {
    var sum: UInt64 = 0
    let width = bitmap.width * bitmap.format.bytesPerPixel
    for y in 0..<bitmap.height {
        let row = UnsafeRawPointer(bitmap.row(y)).assumingMemoryBound(to: UInt8.self)
        var x = 0
        while x < width {
            sum &+= UInt64(row[x])
            x += 64
        }
    }
    return sum
}

/// Plays a grid scroll in real time on the calling thread (the render thread). Scroll position follows wall time
/// at `speed` rows/s, as an animation does: a frame that overruns its budget makes the next frame start at the
/// next vsync, further down the grid, and rows passed over meanwhile are never bound. Each frame binds newly
/// visible cells, shows results from the inbox that pass the tag check (touching their rows), and records its time.
public struct ScrollSimulator {
    /// The grid.
    public var geometry: ScrollGeometry
    /// Frames per second (the budget is 1/fps).
    public var fps: Double
    /// Scroll speed in rows per second.
    public var speed: Double
    /// The clock (seconds, monotonic).
    public var clock: @Sendable () -> Double
    /// Called every 32 frames outside the measured frame time (e.g. to sample threads).
    public var sample: () -> Void = {}

    /// Creates a simulator.
    public init(geometry: ScrollGeometry, fps: Double, speed: Double, clock: @escaping @Sendable () -> Double) {
        self.geometry = geometry
        self.fps = fps
        self.speed = speed
        self.clock = clock
    }

    /// Scrolls from the top to the bottom of the grid with `strategy`.
    public func run(_ strategy: any ScrollStrategy) -> ScrollResult {
        let budget = 1 / fps
        var stats = FrameStats(budget: budget)
        var pool = CellPool()
        let inbox = DeliveryInbox()
        var checksum: UInt64 = 0
        let start = clock()
        var vsync = 0
        var offset = 0.0
        repeat {
            let due = start + Double(vsync) * budget
            var now = clock()
            if now < due {
                usleep(UInt32(max(0, (due - now) * 1e6)))
                now = clock()
            }
            offset = min(geometry.maxOffset, speed * (due - start))
            let frameStart = clock()
            let visible = geometry.visibleCells(atOffset: offset)
            let (bound, unbound) = pool.update(visible: visible, now: frameStart)
            for cell in unbound {
                stats.recordLeft(cell)
                strategy.unbind(index: cell.index)
            }
            stats.recordBound(bound.count)
            for slot in bound {
                let cell = pool.cells[slot]
                if let bitmap = strategy.bind(index: cell.index!, slot: slot, generation: cell.generation, inbox: inbox)
                {
                    checksum &+= touchRows(bitmap)
                    if let latency = pool.show(bitmap, slot: slot, generation: cell.generation, now: clock()) {
                        stats.recordShown(latency: latency)
                    }
                }
            }
            for d in inbox.drain() {
                guard let latency = pool.show(d.bitmap, slot: d.slot, generation: d.generation, now: clock()) else {
                    continue
                }
                checksum &+= touchRows(d.bitmap)
                stats.recordShown(latency: latency)
            }
            strategy.scrolled(visible: visible)
            _ = pool.markBlank()
            let end = clock()
            stats.recordFrame(end - frameStart)
            if vsync % 32 == 0 { sample() }
            // The next frame starts at the first vsync after this one finished.
            vsync = max(vsync + 1, Int(((end - start) / budget).rounded(.down)) + 1)
        } while offset < geometry.maxOffset
        let seconds = clock() - start
        strategy.finish()
        for cell in pool.boundCells() { stats.recordLeft(cell) }
        withExtendedLifetime(checksum) {}
        return ScrollResult(
            name: strategy.name, stats: stats, seconds: seconds, rowsScrolled: offset,
            reuses: pool.reuses, staleDeliveries: pool.staleDeliveries, cellsMade: pool.cells.count,
            workThreads: strategy.workThreads)
    }
}
