import DarkroomImage

/// The ``BitmapStorage`` of a bitmap handed out by an ``ImageTable``: the pixels of one entry, inside a mapping.
///
/// Creating one pins its slot (the table counts it before handing the storage out); its deinit unpins. While any
/// `Bitmap` holds it, the slot is never evicted or reused (a replaced entry is retired, not overwritten) and the
/// `MappedRegion` it points into stays mapped — so the pixels a caller holds never change under it.
// @unchecked Sendable: every stored property is an immutable `let`. The pixels are read-only to their holders
// (reader mappings are PROT_READ); the table writes a slot only while no storage pins it, except for the
// writer's own storage during `set`, which is not shared until the entry is committed under the table's lock.
final class TableEntryStorage: BitmapStorage, @unchecked Sendable {
    let baseAddress: UnsafeMutableRawPointer
    let byteCount: Int
    let slot: Int
    /// The chunk index when `region` is a shared reader chunk; `nil` for a writer's private entry mapping.
    let chunk: Int?
    let region: MappedRegion
    let core: TableCore

    init(core: TableCore, slot: Int, chunk: Int?, region: MappedRegion, offset: Int, byteCount: Int) {
        self.core = core
        self.slot = slot
        self.chunk = chunk
        self.region = region
        self.baseAddress = region.base + offset
        self.byteCount = byteCount
    }

    deinit {
        core.unpin(slot: slot, chunk: chunk)
    }
}
