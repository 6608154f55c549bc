import DarkroomImage
import DarkroomSupport

extension ImageTable {
    /// A snapshot of a table's size, layout, traffic and what its last open found.
    public struct Statistics: Sendable {
        /// Entries held now.
        public var count: Int
        /// The format's maximum count.
        public var maximumCount: Int
        /// Entries at least one live bitmap pins.
        public var pinnedCount: Int
        /// Slots the file has room for (free, live, being written or retired).
        public var slots: Int
        /// Bytes of the table file.
        public var fileBytes: Int
        /// Bytes of one entry: pixels plus trailer, rounded up to the page size.
        public var entryBytes: Int
        /// Bytes of one entry's pixel rows (`bytesPerRow × height`).
        public var pixelBytes: Int
        /// Bytes from one row to the next (a multiple of 64).
        public var bytesPerRow: Int
        /// Entries per chunk (at least 4; chunks aim at 2 MiB).
        public var entriesPerChunk: Int
        /// Bytes per chunk: the unit of mapping and of file growth.
        public var chunkBytes: Int
        /// Chunks mapped now.
        public var mappedChunks: Int
        /// The bound on mapped chunks that hold no pinned entry (``ImageTable/Options/maximumMappedChunks``).
        public var maximumMappedChunks: Int
        /// `entry(for:)` calls that found an entry, since open.
        public var hits: Int
        /// `entry(for:)` calls that found none, since open.
        public var misses: Int
        /// Entries committed since open.
        public var writes: Int
        /// Entries evicted (least recently used, unpinned) since open.
        public var evictions: Int
        /// Index saves since open (automatic, `flush`, `close`, and the one marking a clean index dirty).
        public var indexSaves: Int
        /// Automatic index saves that failed (the entries are safe in their trailers; the next save retries).
        public var indexSaveFailures: Int
        /// Why the open rebuilt the table from empty (new file, damaged header, format change); `nil` if it did not.
        public var rebuildReason: String?
        /// Whether the open found a usable index.
        public var indexFound: Bool
        /// Whether the open read every trailer (false when it trusted an index left by a clean close).
        public var reconciled: Bool
        /// Slots the open found torn (an interrupted write, or pixels failing their checksum).
        public var tornAtOpen: Int
        /// Entries the open checksummed because the index did not vouch for them.
        public var checksummedAtOpen: Int
        /// Older committed copies of an entity the open found superseded by a newer generation.
        public var supersededAtOpen: Int
        /// Index records whose entity the open no longer found.
        public var missingAtOpen: Int
        /// How long the open took, in seconds.
        public var openSeconds: Double
    }

    /// Counts and layout now. O(slots) (to count pinned entries).
    public var statistics: Statistics {
        let core = self.core
        let s = core.state.withLock { s in
            (
                s.liveCount, s.maximumCount, s.pinnedLiveCount, s.slots.count, s.mappedChunks, s.maximumMappedChunks,
                s.counters
            )
        }
        let report = core.openReport
        let layout = core.layout
        return Statistics(
            count: s.0, maximumCount: s.1, pinnedCount: s.2, slots: s.3,
            fileBytes: (try? TableFile.size(core.fd)) ?? 0, entryBytes: layout.entryBytes,
            pixelBytes: layout.pixelBytes,
            bytesPerRow: layout.bytesPerRow, entriesPerChunk: layout.entriesPerChunk, chunkBytes: layout.chunkBytes,
            mappedChunks: s.4, maximumMappedChunks: s.5, hits: s.6.hits, misses: s.6.misses, writes: s.6.writes,
            evictions: s.6.evictions, indexSaves: s.6.indexSaves,
            indexSaveFailures: core.saves.withLock { $0.failures },
            rebuildReason: report.rebuildReason, indexFound: report.indexFound, reconciled: report.scanned,
            tornAtOpen: report.tornSlots,
            checksummedAtOpen: report.checksummed, supersededAtOpen: report.superseded, missingAtOpen: report.missing,
            openSeconds: report.seconds)
    }

    /// What ``verify()`` found.
    public struct Verification: Sendable {
        /// Entries the table serves whose trailer is committed, names them, and whose pixels match the checksum.
        public var valid: Int
        /// Slots holding a write that never committed or pixels that fail their checksum, not served.
        public var torn: Int
        /// Entries the table *would hand out* that are torn (trailer not committed, naming another entity or
        /// generation, or pixels failing the checksum). Must be 0.
        public var tornServed: Int
        /// Entries the saved index listed that the table no longer has (lost to a crash mid-rewrite or evicted
        /// after the last save).
        public var missing: Int
        /// Committed, checksum-valid slots the table does not serve (an older copy, or a removed entry whose slot
        /// is not cleared yet).
        public var unreferenced: Int
        /// Free slots.
        public var empty: Int
        /// Slots examined.
        public var slots: Int
        /// Pixel bytes read and checksummed.
        public var checkedBytes: Int
        /// The first few problems, for people.
        public var problems: [String]
    }

    /// Checks every slot of the table: each served entry is pinned and its trailer and pixel checksum are
    /// verified; every other slot's trailer (and, when committed, its pixels) is classified. Reads the whole
    /// file. Meant for a quiet table (the CLI opens read-only, so no writer can run); concurrent writers can make
    /// unserved slots change class mid-check but never make a served entry look torn.
    /// - Throws: `.closed`, `.io`.
    public func verify() throws(ImageTableError) -> Verification {
        let core = self.core
        let layout = core.layout
        let served = core.state.withLock { s in (s.lruOrder(), s.slots.count) }
        let servedSlots = Set(served.0.map(\.slot))
        var result = Verification(
            valid: 0, torn: 0, tornServed: 0, missing: core.openReport.missing, unreferenced: 0,
            empty: 0, slots: served.1, checkedBytes: 0, problems: [])
        func problem(_ text: String) { if result.problems.count < 20 { result.problems.append(text) } }
        let trailer = UnsafeMutableRawBufferPointer.allocate(byteCount: EntryTrailer.capacity, alignment: 64)
        defer { trailer.deallocate() }
        let pixels = UnsafeMutableRawBufferPointer.allocate(byteCount: layout.pixelBytes, alignment: 64)
        defer { pixels.deallocate() }
        func readTrailer(_ slot: Int) throws(ImageTableError) -> EntryTrailer.State {
            let n = try TableFile.read(
                core.fd, into: trailer.baseAddress!, count: EntryTrailer.capacity,
                at: layout.trailerOffset(ofSlot: slot))
            guard n == EntryTrailer.capacity else { return .empty }
            return EntryTrailer.parse(
                UnsafeRawPointer(trailer.baseAddress!), layout: layout, fingerprint: core.fingerprint)
        }

        for slot in 0..<served.1 where !servedSlots.contains(slot) {
            switch try readTrailer(slot) {
            case .empty: result.empty += 1
            case .torn: result.torn += 1
            case .committed(let t):
                let count = layout.bytesPerRow * t.height
                let n = try TableFile.read(
                    core.fd, into: pixels.baseAddress!, count: count, at: layout.fileOffset(ofSlot: slot))
                result.checkedBytes += n
                if n == count
                    && EntryTrailer.pixelChecksum(
                        pixels.baseAddress!, bytesPerRow: layout.bytesPerRow, height: t.height)
                        == t.pixelChecksum
                {
                    result.unreferenced += 1
                } else {
                    result.torn += 1
                }
            }
        }

        for record in served.0 {
            // Pin it as a reader would, without touching the LRU order.
            guard let bitmap = try core.entry(for: record.entity, touch: false),
                let storage = bitmap.storage as? TableEntryStorage
            else { continue }
            guard case .committed(let t) = try readTrailer(storage.slot) else {
                result.tornServed += 1
                problem("\(record.entity): served from slot \(storage.slot) whose trailer is not committed")
                continue
            }
            let checksum = EntryTrailer.pixelChecksum(
                storage.baseAddress, bytesPerRow: layout.bytesPerRow, height: bitmap.height)
            result.checkedBytes += layout.bytesPerRow * bitmap.height
            if t.entity != record.entity || t.width != bitmap.width || t.height != bitmap.height
                || checksum != t.pixelChecksum
            {
                result.tornServed += 1
                problem("\(record.entity): served from slot \(storage.slot) but its trailer or pixels do not match")
            } else {
                result.valid += 1
            }
        }
        return result
    }
}
