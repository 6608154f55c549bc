/// Everything an open table knows about its slots, guarded by one lock in ``TableCore``: which entity lives where,
/// the least-recently-used order, pins, free slots and the mapped chunks.
///
/// Pure bookkeeping: no I/O, no callbacks, O(1) per operation except eviction (which walks past pinned entries
/// from the LRU end) and snapshots (O(entries)). Operations that need I/O afterwards (clearing a freed slot's
/// trailer, unmapping a chunk) return it as ``Effects`` for the caller to do outside the lock.
struct TableState {
    enum SlotState: UInt8 {
        /// No entry; ready for a writer.
        case free
        /// A writer owns it; not readable.
        case writing
        /// Holds the current entry of `entity`.
        case live
        /// Replaced, removed or abandoned while pinned: its trailer is cleared at once (holders read only the
        /// rows), and it is freed when the last pin goes — never reused before.
        case retired
        /// Its trailer is being cleared outside the lock; free afterwards.
        case clearing
    }

    struct Slot {
        var state: SlotState = .free
        var isOpaque = false
        /// For a retired slot: whether its trailer has been cleared yet.
        var trailerCleared = false
        var pins: Int32 = 0
        var width: Int32 = 0
        var height: Int32 = 0
        /// LRU neighbours (live slots only); -1 at the ends.
        var older: Int32 = -1
        var newer: Int32 = -1
        var generation: UInt64 = 0
        /// The mapping (``Chunk/epoch``) in which this entry's pages were last advised (`MADV_WILLNEED`).
        var advisedEpoch: UInt64 = 0
        var entity = ""
        var source = ""
    }

    struct Chunk {
        var region: MappedRegion?
        /// Which mapping of the chunk this is (0 while unmapped).
        var epoch: UInt64 = 0
        /// Bitmaps pointing into this chunk (mapped or about to be).
        var pins = 0
        var lastUse: UInt64 = 0
    }

    /// Work to do outside the lock.
    struct Effects {
        /// Slots whose trailers must be cleared, then reported to ``finishClearing(_:)`` (which frees them unless
        /// they are retired and still pinned).
        var clear: [Int] = []
        /// Mappings to drop (unmapped when the last reference goes).
        var release: [MappedRegion] = []
        var isEmpty: Bool { clear.isEmpty && release.isEmpty }
    }

    /// What a reader gets for a hit.
    struct Hit {
        var slot: Int
        var chunk: Int
        var region: MappedRegion?
        var width: Int
        var height: Int
        var isOpaque: Bool
        /// First hand-out of this entry from the current mapping: worth a read-ahead hint.
        var advise: Bool
        /// Slots after this one to read ahead (a sequential run of first hand-outs was detected), if any.
        var readAhead: Range<Int>?
    }

    struct Counters {
        var hits = 0, misses = 0, writes = 0, evictions = 0, indexSaves = 0
    }

    private(set) var slots: [Slot] = []
    private(set) var lookup: [String: Int] = [:]
    /// Least and most recently used live slots.
    private(set) var lruOldest = -1
    private(set) var lruNewest = -1
    private var freeSlots: [Int] = []
    private(set) var liveCount = 0
    private(set) var writingCount = 0
    var maximumCount: Int
    let slotLimit: Int
    let entriesPerChunk: Int
    var nextGeneration: UInt64
    var chunks: [Int: Chunk] = [:]
    var mappedChunks = 0
    let maximumMappedChunks: Int
    var useClock: UInt64 = 0
    var mapEpochs: UInt64 = 0
    /// The last slot advised, and how far read-ahead has been asked for (sequential-scroll detection).
    var lastAdvised = -2
    var readAheadEnd = 0
    var closed = false
    var commitsSinceSave = 0
    var counters = Counters()

    init(slotCount: Int, maximumCount: Int, entriesPerChunk: Int, maximumMappedChunks: Int, nextGeneration: UInt64) {
        self.maximumCount = maximumCount
        slotLimit = Self.slotLimit(maximumCount: maximumCount)
        self.entriesPerChunk = entriesPerChunk
        self.maximumMappedChunks = max(1, maximumMappedChunks)
        self.nextGeneration = nextGeneration
        slots = Array(repeating: Slot(), count: slotCount)
        rebuildFreeList()
    }

    /// The hard limit on slots: room for every live entry plus as many pinned or in-flight ones.
    static func slotLimit(maximumCount: Int) -> Int { 2 * maximumCount + 64 }

    // MARK: Opening

    /// Makes `slot` (free) live for `trailer`, as the most recently used entry. Used while opening, in LRU order,
    /// followed by ``rebuildFreeList()``.
    mutating func adopt(slot: Int, _ trailer: EntryTrailer) {
        precondition(slots[slot].state == .free && lookup[trailer.entity] == nil)
        slots[slot] = Slot(
            state: .live, isOpaque: trailer.isOpaque, width: Int32(trailer.width),
            height: Int32(trailer.height), generation: trailer.generation,
            entity: trailer.entity, source: trailer.source)
        lookup[trailer.entity] = slot
        linkNewest(slot)
        liveCount += 1
    }

    /// Lists every free slot, lowest last (so writers fill the file from the front).
    mutating func rebuildFreeList() {
        freeSlots = slots.indices.reversed().filter { slots[$0].state == .free }
    }

    // MARK: Readers

    /// Pins the entry of `entity` and (when `touch`) marks it most recently used and counts the hit or miss;
    /// `nil` when absent.
    mutating func pin(_ entity: String, touch: Bool = true) -> Hit? {
        guard !closed, let s = lookup[entity] else {
            if touch { counters.misses += 1 }
            return nil
        }
        slots[s].pins += 1
        if touch {
            unlink(s)
            linkNewest(s)
            counters.hits += 1
        }
        let c = s / entriesPerChunk
        useClock &+= 1
        var chunk = chunks[c] ?? Chunk()
        chunk.pins += 1
        chunk.lastUse = useClock
        chunks[c] = chunk
        let advise = chunk.region != nil && slots[s].advisedEpoch != chunk.epoch
        if advise { slots[s].advisedEpoch = chunk.epoch }
        let slot = slots[s]
        return Hit(
            slot: s, chunk: c, region: chunk.region, width: Int(slot.width), height: Int(slot.height),
            isOpaque: slot.isOpaque, advise: advise,
            readAhead: chunk.region == nil || advise ? readAhead(after: s) : nil)
    }

    /// Records `region` as the mapping of `chunk` (pinned by the caller for `slot`) and returns the mapping to
    /// use: an existing one if another thread mapped the chunk first (then `region` is released) — and whether
    /// `slot`'s pages are still to be advised in it.
    mutating func install(
        chunk c: Int, _ region: MappedRegion, for slot: Int,
        effects: inout Effects
    ) -> (region: MappedRegion, advise: Bool) {
        var chunk = chunks[c] ?? Chunk()
        if let existing = chunk.region {
            effects.release.append(region)
            let advise = slots[slot].advisedEpoch != chunk.epoch
            slots[slot].advisedEpoch = chunk.epoch
            return (existing, advise)
        }
        mapEpochs += 1
        chunk.region = region
        chunk.epoch = mapEpochs
        slots[slot].advisedEpoch = mapEpochs
        chunks[c] = chunk
        mappedChunks += 1
        evictChunks(&effects)
        return (region, true)
    }

    /// Drops one pin of `slot` (and of its chunk, for reader storages).
    mutating func unpin(slot s: Int, chunk c: Int?) -> Effects {
        var effects = Effects()
        slots[s].pins -= 1
        precondition(slots[s].pins >= 0, "slot \(s) unpinned more often than pinned")
        if let c, var chunk = chunks[c] {
            chunk.pins -= 1
            if chunk.pins == 0 && chunk.region == nil { chunks[c] = nil } else { chunks[c] = chunk }
            if chunk.pins == 0 && mappedChunks > maximumMappedChunks { evictChunks(&effects) }
        }
        if slots[s].pins == 0 {
            switch slots[s].state {
            case .retired where slots[s].trailerCleared:
                free(s)
            case .retired:
                slots[s].state = .clearing  // its clear is under way; finishClearing frees it
            case .live where c != nil && liveCount > maximumCount && !closed:
                // A reader let go of the last pin: the count may exceed the maximum only by pinned entries.
                // (A writer letting go of its new entry does not trim: that would evict what it just wrote. A closed
                // table changes nothing more: its clean index must stay exact.)
                trim(&effects)
            default:
                break
            }
        }
        return effects
    }

    // MARK: Writers

    /// Chooses a slot for a new entry of `entity` and hands it to the writer, pinned once (by the writer's storage).
    ///
    /// When live plus in-flight entries would exceed ``maximumCount``, the least recently used unpinned entries
    /// are evicted and the first one's slot is reused; else a free slot, else a new one (the file grows), up to
    /// ``slotLimit``.
    /// - Throws: `.closed`, or `.full` when every slot up to the hard limit is pinned or being written.
    mutating func beginWrite(_ entity: String) throws(ImageTableError) -> (
        slot: Int, generation: UInt64, effects: Effects
    ) {
        guard !closed else { throw ImageTableError(.closed, "the table is closed") }
        var effects = Effects()
        var reuse: Int?
        while liveCount + writingCount + 1 - (lookup[entity] == nil ? 0 : 1) > maximumCount,
            let victim = oldestUnpinned()
        {
            evict(victim)
            counters.evictions += 1
            if reuse == nil {
                reuse = victim
            } else {
                slots[victim].state = .clearing
                effects.clear.append(victim)
            }
        }
        let s: Int
        if let reuse {
            s = reuse
        } else if let free = freeSlots.popLast() {
            s = free
        } else if slots.count < slotLimit {
            s = slots.count
            slots.append(Slot())
        } else {
            throw ImageTableError(
                .full, "all \(slotLimit) slots are pinned or being written (maximumCount \(maximumCount))")
        }
        let generation = nextGeneration
        nextGeneration += 1
        slots[s] = Slot(state: .writing, pins: 1, generation: generation, entity: entity)
        writingCount += 1
        return (s, generation, effects)
    }

    /// Publishes the entry a writer finished in `slot`: it replaces `entity`'s current entry (retired if pinned,
    /// else cleared) unless that one is newer (a concurrent writer of the same entity committed a later
    /// generation first), in which case this one is dropped. Returns whether an index save is due.
    mutating func commitWrite(
        slot s: Int, entity: String, source: String, width: Int, height: Int, isOpaque: Bool,
        saveInterval: Int
    ) -> (effects: Effects, saveDue: Bool) {
        var effects = Effects()
        writingCount -= 1
        precondition(slots[s].state == .writing)
        if let old = lookup[entity] {
            if slots[old].generation > slots[s].generation {
                retireUnlinked(s, &effects)  // freed when the writer's storage lets go
                return (effects, false)
            }
            retire(old, &effects)
        }
        slots[s].state = .live
        slots[s].source = source
        slots[s].width = Int32(width)
        slots[s].height = Int32(height)
        slots[s].isOpaque = isOpaque
        lookup[entity] = s
        linkNewest(s)
        liveCount += 1
        counters.writes += 1
        commitsSinceSave += 1
        trim(&effects)
        return (effects, saveInterval > 0 && commitsSinceSave >= saveInterval)
    }

    /// Gives up a write (the draw closure threw): its trailer is cleared and the slot freed when the writer's
    /// storage lets go.
    mutating func abortWrite(slot s: Int) -> Effects {
        var effects = Effects()
        writingCount -= 1
        retireUnlinked(s, &effects)
        return effects
    }

    /// Removes `entity`'s entry; `false` when absent.
    mutating func remove(_ entity: String, effects: inout Effects) -> Bool {
        guard let s = lookup[entity] else { return false }
        retire(s, &effects)
        return true
    }

    /// Frees slots whose trailers have been cleared.
    mutating func finishClearing(_ cleared: [Int]) {
        for s in cleared {
            switch slots[s].state {
            case .clearing: free(s)
            case .retired: slots[s].trailerCleared = true
            default: preconditionFailure("slot \(s) was cleared in state \(slots[s].state)")
            }
        }
    }

    private mutating func free(_ s: Int) {
        slots[s] = Slot()
        freeSlots.append(s)
    }

    // MARK: Snapshots

    /// Live entries, least recently used first.
    func lruOrder() -> [IndexFile.Record] {
        var result: [IndexFile.Record] = []
        result.reserveCapacity(liveCount)
        var s = lruOldest
        while s >= 0 {
            let slot = slots[s]
            result.append(
                IndexFile.Record(
                    slot: s, generation: slot.generation, width: Int(slot.width), height: Int(slot.height),
                    isOpaque: slot.isOpaque, entity: slot.entity, source: slot.source))
            s = Int(slot.newer)
        }
        return result
    }

    /// Evicts least recently used unpinned entries down to ``maximumCount`` (after open, or a lowered maximum).
    mutating func enforceMaximum() -> Effects {
        var effects = Effects()
        trim(&effects)
        return effects
    }

    /// Live entries that at least one bitmap pins.
    var pinnedLiveCount: Int { slots.reduce(0) { $0 + ($1.state == .live && $1.pins > 0 ? 1 : 0) } }

    /// The source id of `entity`'s entry.
    func source(of entity: String) -> String? { lookup[entity].map { slots[$0].source } }

    // MARK: Internals

    /// Removes a live slot from the index; see ``retireUnlinked(_:_:)``.
    private mutating func retire(_ s: Int, _ effects: inout Effects) {
        evict(s)
        retireUnlinked(s, &effects)
    }

    /// A slot that must never be served again: its trailer is cleared now (so no crash can bring it back);
    /// pinned → retired (freed at the last unpin, after the clear), else freed once cleared.
    private mutating func retireUnlinked(_ s: Int, _ effects: inout Effects) {
        slots[s].state = slots[s].pins > 0 ? .retired : .clearing
        slots[s].trailerCleared = false
        effects.clear.append(s)
    }

    /// Evicts least recently used unpinned entries while more than ``maximumCount`` are live.
    private mutating func trim(_ effects: inout Effects) {
        while liveCount > maximumCount, let victim = oldestUnpinned() {
            evict(victim)
            counters.evictions += 1
            slots[victim].state = .clearing
            effects.clear.append(victim)
        }
    }

    /// Takes a live slot out of the index and the LRU list (the caller sets its new state).
    private mutating func evict(_ s: Int) {
        lookup[slots[s].entity] = nil
        unlink(s)
        liveCount -= 1
    }

    /// The least recently used live slot that no bitmap pins.
    private func oldestUnpinned() -> Int? {
        var s = lruOldest
        while s >= 0 {
            if slots[s].pins == 0 { return s }
            s = Int(slots[s].newer)
        }
        return nil
    }

    private mutating func linkNewest(_ s: Int) {
        slots[s].older = Int32(lruNewest)
        slots[s].newer = -1
        if lruNewest >= 0 { slots[lruNewest].newer = Int32(s) } else { lruOldest = s }
        lruNewest = s
    }

    private mutating func unlink(_ s: Int) {
        let older = Int(slots[s].older)
        let newer = Int(slots[s].newer)
        if older >= 0 { slots[older].newer = Int32(newer) } else { lruOldest = newer }
        if newer >= 0 { slots[newer].older = Int32(older) } else { lruNewest = older }
        slots[s].older = -1
        slots[s].newer = -1
    }
}
