import DarkroomImage
import DarkroomSupport
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What opening a table found, for ``ImageTable/Statistics`` and `verify`.
struct OpenReport: Sendable {
    /// Why the table was rebuilt from empty on open, if it was.
    var rebuildReason: String?
    var indexFound = false
    /// Whether every trailer was read (false when a clean index was trusted).
    var scanned = false
    /// Slots holding a write that never committed (or bytes that are no trailer).
    var tornSlots = 0
    /// Committed entries whose pixels did not match their checksum (counted in ``tornSlots`` too).
    var checksumFailures = 0
    /// Entries checksummed because the saved index did not vouch for them.
    var checksummed = 0
    /// Older committed copies of an entity superseded by a newer generation.
    var superseded = 0
    /// Index records whose entity the table no longer has.
    var missing = 0
    var seconds = 0.0
}

/// The shared heart of an open table: the file, its layout and the locked ``TableState``.
///
/// ``ImageTable`` holds it, and so does every bitmap the table hands out (through ``TableEntryStorage``): the
/// file descriptor (and with it the `flock`) stays open until the table is closed *and* the last bitmap is gone.
/// The lock is held only for O(1) bookkeeping; mapping, decoding, checksums, trailer writes and index saves all
/// run outside it, so reading one entry never waits for a write to another.
///
/// Opening and recovery (`TableCore+Open.swift`: header checks, the index load or rebuild, the scan of a table
/// left by a crash) are a second file of this type because they build the very state the rest guards.
final class TableCore: Sendable {
    let path: String
    let layout: TableLayout
    let fingerprint: UInt64
    let format: ImageTableFormat
    let readOnly: Bool
    let fd: Int32
    let indexSaveInterval: Int
    let openReport: OpenReport
    let state: Locked<TableState>
    /// Serializes index saves; counts failures of automatic saves (which do not fail the write that triggered them).
    let saves = Locked<(failures: Int, lastError: ImageTableError?)>((0, nil))
    /// Whole chunks the file holds (grown under this lock, never under ``state``).
    let fileChunks: Locked<Int>
    /// Whether the index on disk is known not to be clean (or is absent), so changes may begin. After an open
    /// that trusted a clean index this is false until ``prepareToModify()`` rewrites the index as not clean.
    let indexMarkedDirty: Atomic<Bool>

    init(
        path: String, layout: TableLayout, format: ImageTableFormat, readOnly: Bool, fd: Int32, indexSaveInterval: Int,
        openReport: OpenReport, state: consuming sending TableState, fileChunks: Int, indexIsClean: Bool
    ) {
        self.path = path
        self.layout = layout
        fingerprint = layout.fingerprint
        self.format = format
        self.readOnly = readOnly
        self.fd = fd
        self.indexSaveInterval = indexSaveInterval
        self.openReport = openReport
        self.state = Locked(state)
        self.fileChunks = Locked(fileChunks)
        indexMarkedDirty = Atomic(!indexIsClean)
    }

    deinit {
        Glibc.close(fd)  // also releases the flock
    }

    // MARK: Reading

    /// Pins `entity`'s entry and returns a bitmap pointing into its chunk's mapping (mapped now if needed).
    func entry(for entity: String, touch: Bool = true) throws(ImageTableError) -> Bitmap? {
        let found: TableState.Hit? = try state.withLock { (s) throws(ImageTableError) -> TableState.Hit? in
            guard !s.closed else { throw ImageTableError(.closed, "the table is closed") }
            return s.pin(entity, touch: touch)
        }
        guard let hit = found else { return nil }
        var region: MappedRegion
        var advise = hit.advise
        if let mapped = hit.region {
            region = mapped
        } else {
            do {
                let fresh = try MappedRegion(
                    fd: fd, offset: layout.fileOffset(ofChunk: hit.chunk), length: layout.chunkBytes,
                    writable: false)
                let (use, effects) = state.withLock { s in
                    var effects = TableState.Effects()
                    let use = s.install(chunk: hit.chunk, fresh, for: hit.slot, effects: &effects)
                    return (use, effects)
                }
                (region, advise) = use
                perform(effects)
            } catch {
                unpin(slot: hit.slot, chunk: hit.chunk)
                throw error
            }
        }
        if advise {
            // The first hand-out of an entry from this mapping: ask for all its pages in one read-ahead (a no-op
            // for cached pages), instead of one fault-driven read-around per 128 KiB when the pixels are touched.
            _ = madvise(
                region.base + layout.offsetInChunk(of: hit.slot), layout.bytesPerRow * hit.height, MADV_WILLNEED)
        }
        if let ahead = hit.readAhead {
            // A sequential run (a scroll over entries written in order): ask for the next chunk's worth now.
            _ = posix_fadvise(
                fd, off_t(layout.fileOffset(ofSlot: ahead.lowerBound)),
                off_t(ahead.count * layout.entryBytes), POSIX_FADV_WILLNEED)
        }
        let storage = TableEntryStorage(
            core: self, slot: hit.slot, chunk: hit.chunk, region: region,
            offset: layout.offsetInChunk(of: hit.slot), byteCount: layout.pixelBytes)
        do {
            return try Bitmap(
                width: hit.width, height: hit.height, format: layout.pixelFormat,
                bytesPerRow: layout.bytesPerRow, isOpaque: hit.isOpaque, storage: storage)
        } catch {
            throw ImageTableError(.corrupt, "entry \(entity) has an impossible geometry", underlying: error)
        }
    }

    /// Drops a pin taken by ``entry(for:touch:)`` or ``set(entity:source:draw:)`` (from a storage's deinit).
    func unpin(slot: Int, chunk: Int?) {
        perform(state.withLock { $0.unpin(slot: slot, chunk: chunk) })
    }

    /// Does what a state change asked for outside the lock: clears freed slots' trailers (then frees them) and
    /// lets go of unmapped chunks' mappings.
    func perform(_ effects: consuming TableState.Effects) {
        guard !effects.clear.isEmpty else { return }
        let zeros = [UInt8](repeating: 0, count: EntryTrailer.headerBytes)
        for slot in effects.clear {
            // A failed clear leaves an old, still valid trailer: at worst the entry comes back on the next open.
            try? TableFile.write(fd, zeros, at: layout.trailerOffset(ofSlot: slot))
        }
        let cleared = effects.clear
        state.withLock { $0.finishClearing(cleared) }
    }

    // MARK: Writing

    /// Writes a new entry for `entity` (see ``ImageTable/set(entity:source:draw:)``).
    func set(entity: String, source: String, draw: (TableEntryWriter) throws -> Bitmap) throws(ImageTableError) {
        guard !readOnly else { throw ImageTableError(.readOnly, "the table at \(path) was opened read-only") }
        let entityBytes = entity.utf8.count
        let sourceBytes = source.utf8.count
        guard (1...EntryTrailer.maximumEntityBytes).contains(entityBytes) else {
            throw ImageTableError(
                .invalidArgument,
                "an entity id must be 1...\(EntryTrailer.maximumEntityBytes) UTF-8 bytes, got \(entityBytes)")
        }
        guard sourceBytes <= EntryTrailer.maximumSourceBytes else {
            throw ImageTableError(
                .invalidArgument,
                "a source id must be at most \(EntryTrailer.maximumSourceBytes) UTF-8 bytes, got \(sourceBytes)")
        }
        try prepareToModify()
        let (slot, generation, evicted) = try state.withLock { (s) throws(ImageTableError) in try s.beginWrite(entity) }
        perform(evicted)
        // From here the writer's pin (taken by beginWrite) belongs to `storage`: its deinit releases it, so a
        // bitmap the draw closure leaks keeps the slot pinned (never reused) instead of dangling.
        let region: MappedRegion
        do {
            try ensureFile(holdsSlot: slot)
            region = try MappedRegion(
                fd: fd, offset: layout.fileOffset(ofSlot: slot), length: layout.entryBytes, writable: true)
        } catch {
            perform(state.withLock { $0.abortWrite(slot: slot) })
            unpin(slot: slot, chunk: nil)
            throw error
        }
        let storage = TableEntryStorage(
            core: self, slot: slot, chunk: nil, region: region, offset: 0,
            byteCount: layout.pixelBytes)
        let placed: TableEntryWriter.Placed = try withExtendedLifetime(storage) { () throws(ImageTableError) in
            let trailer = region.base + layout.pixelBytes
            EntryTrailer.beginWrite(trailer, generation: generation)
            let placed: TableEntryWriter.Placed
            do throws(ImageTableError) {
                let writer = TableEntryWriter(format: format, layout: layout, storage: storage)
                let bitmap: Bitmap
                do { bitmap = try draw(writer) } catch {
                    throw ImageTableError(.drawFailed, "drawing the entry for \(entity) failed", underlying: error)
                }
                placed = try writer.place(bitmap)
            } catch {
                perform(state.withLock { $0.abortWrite(slot: slot) })
                throw error  // the trailer is cleared; the storage's release frees the slot
            }
            let checksum = EntryTrailer.pixelChecksum(
                storage.baseAddress, bytesPerRow: layout.bytesPerRow, height: placed.height)
            EntryTrailer(
                generation: generation, width: placed.width, height: placed.height, isOpaque: placed.isOpaque,
                pixelChecksum: checksum, entity: entity, source: source
            ).commit(trailer, fingerprint: fingerprint)
            return placed
        }
        let interval = indexSaveInterval
        let (effects, saveDue) = state.withLock {
            $0.commitWrite(
                slot: slot, entity: entity, source: source, width: placed.width, height: placed.height,
                isOpaque: placed.isOpaque, saveInterval: interval)
        }
        // The writer's pin lasts until the entry is live, so the commit's own eviction pass cannot pick it.
        withExtendedLifetime(storage) {}
        perform(effects)
        if saveDue {
            do { try saveIndex(onlyIfDue: true) } catch {
                // The entry is committed in its trailer; the next save or open picks it up.
                saves.withLock {
                    $0.failures += 1
                    $0.lastError = error
                }
            }
        }
    }

    /// Grows the file (whole chunks) so that it holds `slot`.
    private func ensureFile(holdsSlot slot: Int) throws(ImageTableError) {
        let needed = layout.chunk(of: slot) + 1
        let layout = self.layout
        let fd = self.fd
        try fileChunks.withLock { (chunks) throws(ImageTableError) in
            guard chunks < needed else { return }
            try TableFile.truncate(fd, to: layout.fileBytes(chunks: needed))
            chunks = needed
        }
    }

    /// Removes `entity`'s entry; `false` when absent.
    func remove(_ entity: String) throws(ImageTableError) -> Bool {
        guard !readOnly else { throw ImageTableError(.readOnly, "the table at \(path) was opened read-only") }
        try prepareToModify()
        let (removed, effects) = try state.withLock { (s) throws(ImageTableError) in
            guard !s.closed else { throw ImageTableError(.closed, "the table is closed") }
            var effects = TableState.Effects()
            let removed = s.remove(entity, effects: &effects)
            return (removed, effects)
        }
        perform(effects)
        return removed
    }

    // MARK: Index

    /// Before the first change after an open that trusted a clean index: rewrite the index as not clean, so a
    /// crash from here on makes the next open reconcile with the trailers. Free after the first call.
    func prepareToModify() throws(ImageTableError) {
        guard !indexMarkedDirty.load(ordering: .acquiring) else { return }
        // (A closed table keeps its clean index; the change itself will fail with `.closed`.)
        guard !state.withLock({ $0.closed }) else { throw ImageTableError(.closed, "the table is closed") }
        try saveIndex()
    }

    /// Writes the index: a snapshot of the LRU order under the lock, then (outside it) `fdatasync` of the table
    /// so every entry the index names is on disk, then the index file by atomic rename. Saves are serialized.
    /// `clean` is honoured only when the table is closed and no write is in flight (see ``IndexFile``).
    func saveIndex(onlyIfDue: Bool = false, clean: Bool = false) throws(ImageTableError) {
        guard !readOnly else { return }
        let interval = indexSaveInterval
        let fingerprint = self.fingerprint
        let path = self.path
        let fd = self.fd
        try saves.withLock { (_) throws(ImageTableError) in
            let snapshot: IndexFile? = state.withLock { s in
                if onlyIfDue && s.commitsSinceSave < interval { return nil }
                s.commitsSinceSave = 0
                s.counters.indexSaves += 1
                return IndexFile(
                    fingerprint: fingerprint, maximumCount: s.maximumCount, nextGeneration: s.nextGeneration,
                    clean: clean && s.closed && s.writingCount == 0, records: s.lruOrder())
            }
            guard let snapshot else { return }
            try TableFile.sync(fd)
            try snapshot.save(forTable: path)
            if !snapshot.clean { indexMarkedDirty.store(true, ordering: .releasing) }
        }
    }

    /// Saves the index (writable tables) and stops handing out entries; bitmaps still alive stay valid.
    func close() throws(ImageTableError) {
        let wasOpen = state.withLock { s in
            defer { s.closed = true }
            return !s.closed
        }
        guard wasOpen else { return }
        try saveIndex(clean: true)
        let (released, pinned) = state.withLock { s in
            (s.releaseUnpinnedChunks(), s.slots.contains { $0.pins > 0 } || s.writingCount > 0)
        }
        _ = consume released
        // With no bitmap out and no write in flight, nothing can pin the table again (every call now throws
        // `.closed`), so the file lock is released here rather than whenever the object happens to be freed; a
        // writer's next open must not depend on when the last reference goes. Otherwise deinit releases it.
        if !pinned { _ = flock(fd, LOCK_UN) }
    }
}
