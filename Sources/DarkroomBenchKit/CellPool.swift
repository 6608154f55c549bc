import DarkroomImage
import DarkroomSupport
import Synchronization

/// One reusable on-screen cell, as a grid view keeps them.
public struct Cell: Sendable {
    /// The cell's position in the pool (stable across reuse).
    public let slot: Int
    /// The grid index the cell shows now (its tag), `nil` while in the reuse queue.
    public internal(set) var index: Int?
    /// Bumped at every bind: results for an older generation are for another index and must not be shown.
    public internal(set) var generation: UInt64 = 0
    /// When the cell became visible (seconds, simulator clock).
    public internal(set) var visibleSince: Double = 0
    /// When its image was shown, `nil` while blank.
    public internal(set) var shownAt: Double?
    /// Whether the cell was drawn blank on at least one frame since it was bound.
    public internal(set) var wasBlank = false
    /// The bitmap shown (kept until the cell is reused, as an image view holds its image).
    public internal(set) var image: Bitmap?
}

/// A result from a background decode, addressed to a cell slot and the generation it was started for.
public struct Delivery: Sendable {
    /// The cell slot.
    public var slot: Int
    /// The generation of the bind that asked for it.
    public var generation: UInt64
    /// The decoded image.
    public var bitmap: Bitmap

    /// Creates a delivery.
    public init(slot: Int, generation: UInt64, bitmap: Bitmap) {
        self.slot = slot
        self.generation = generation
        self.bitmap = bitmap
    }
}

/// Where background work posts finished images for the render thread to pick up at its next frame.
public final class DeliveryInbox: Sendable {
    private let pending = Locked<[Delivery]>([])
    /// Creates an empty inbox.
    public init() {}
    /// Posts a result (any thread).
    public func post(_ delivery: Delivery) { pending.withLock { $0.append(delivery) } }
    /// Takes everything posted so far (render thread).
    public func drain() -> [Delivery] {
        pending.withLock { d in
            defer { d = [] }
            return d
        }
    }
}

/// What happened when a cell left the screen.
public struct Unbound: Sendable, Equatable {
    /// The slot.
    public var slot: Int
    /// The index it showed.
    public var index: Int
    /// Whether its image was ever shown while visible.
    public var wasShown: Bool
    /// Whether it was blank on some frame.
    public var wasBlank: Bool
}

/// Cells bound to the visible indices, reused as they leave the screen (a reuse queue, like a grid view's).
public struct CellPool: Sendable {
    /// Every cell made so far, by slot.
    public private(set) var cells: [Cell] = []
    private var reuseQueue: [Int] = []
    private var slotForIndex: [Int: Int] = [:]
    /// Binds that took a cell from the reuse queue rather than making a new one.
    public private(set) var reuses = 0
    /// Results refused because the cell had been rebound (tag/generation mismatch) or already had an image.
    public private(set) var staleDeliveries = 0

    /// Creates an empty pool.
    public init() {}

    /// The slot showing `index`, if it is bound.
    public func slot(for index: Int) -> Int? { slotForIndex[index] }

    /// Makes the bound cells exactly those of `visible`: cells for indices that left go back to the reuse queue
    /// (returned as `unbound`), and indices that came into view get a cell (returned as `bound` slots, in index
    /// order), taken from the queue when one is free.
    public mutating func update(visible: Range<Int>, now: Double) -> (bound: [Int], unbound: [Unbound]) {
        var unbound: [Unbound] = []
        for (index, slot) in slotForIndex where !visible.contains(index) {
            let c = cells[slot]
            unbound.append(Unbound(slot: slot, index: index, wasShown: c.shownAt != nil, wasBlank: c.wasBlank))
            cells[slot].index = nil
            cells[slot].image = nil
            cells[slot].shownAt = nil
            reuseQueue.append(slot)
            slotForIndex[index] = nil
        }
        unbound.sort { $0.index < $1.index }
        var bound: [Int] = []
        for index in visible where slotForIndex[index] == nil {
            let slot: Int
            if let free = reuseQueue.popLast() {
                slot = free
                reuses += 1
            } else {
                slot = cells.count
                cells.append(Cell(slot: slot))
            }
            cells[slot].index = index
            cells[slot].generation &+= 1
            cells[slot].visibleSince = now
            cells[slot].shownAt = nil
            cells[slot].wasBlank = false
            cells[slot].image = nil
            slotForIndex[index] = slot
            bound.append(slot)
        }
        return (bound, unbound)
    }

    /// Shows `bitmap` in `slot` at `now` if the cell is still on the `generation` it was asked for and blank.
    /// Returns the latency from visible to shown, or `nil` when refused (stale).
    public mutating func show(_ bitmap: Bitmap, slot: Int, generation: UInt64, now: Double) -> Double? {
        guard slot < cells.count, cells[slot].index != nil, cells[slot].generation == generation,
            cells[slot].image == nil
        else {
            staleDeliveries += 1
            return nil
        }
        cells[slot].image = bitmap
        cells[slot].shownAt = now
        return now - cells[slot].visibleSince
    }

    /// Marks every bound cell still without an image as drawn blank this frame; returns how many there were.
    public mutating func markBlank() -> Int {
        var blank = 0
        for slot in slotForIndex.values where cells[slot].image == nil {
            cells[slot].wasBlank = true
            blank += 1
        }
        return blank
    }

    /// The cells bound now, as unbound records (used at the end of a run to account for the last screen).
    public func boundCells() -> [Unbound] {
        slotForIndex.map {
            Unbound(slot: $1, index: $0, wasShown: cells[$1].shownAt != nil, wasBlank: cells[$1].wasBlank)
        }
    }
}
