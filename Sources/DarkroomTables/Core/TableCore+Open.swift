import DarkroomImage
import DarkroomSupport

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension TableCore {
    /// Opens (writable: creates or rebuilds) the table at `path` and reconciles its saved index with its trailers.
    ///
    /// An index written by a clean close is exact and trusted as is (unless ``ImageTable/Options/alwaysReconcile``):
    /// O(entries) to read it, no trailer read. Otherwise reconciliation reads every slot's trailer (one `pread` of
    /// ~1 KiB per slot, page cache permitting):
    /// - a committed trailer whose slot and generation the saved index lists is trusted as is (*confirmed*);
    /// - any other committed trailer (written after the last index save) has its pixels checksummed; a mismatch
    ///   makes it torn;
    /// - of several committed copies of one entity, the highest generation wins;
    /// - torn and superseded slots are cleared (writable) and never served.
    /// LRU order: the index's for confirmed entries, then newer ones by generation. Writable opens then evict
    /// down to the format's maximum count.
    static func open(
        path: String, format requested: ImageTableFormat?, readOnly: Bool,
        options: ImageTable.Options
    ) throws(ImageTableError) -> TableCore {
        let start = MonotonicClock.seconds()
        let fd = Glibc.open(path, (readOnly ? O_RDONLY : O_RDWR | O_CREAT) | O_CLOEXEC, 0o644)
        guard fd >= 0 else {
            if errno == ENOENT { throw ImageTableError(.notFound, "no table at \(path)") }
            throw ImageTableError.ioError("cannot open the table \(path)")
        }
        var handedOver = false
        defer { if !handedOver { Glibc.close(fd) } }
        guard flock(fd, (readOnly ? LOCK_SH : LOCK_EX) | LOCK_NB) == 0 else {
            if errno == EWOULDBLOCK {
                throw ImageTableError(
                    .busy, "\(path) is open \(readOnly ? "for writing" : "") in another table instance or process")
            }
            throw ImageTableError.ioError("cannot lock \(path)")
        }

        var report = OpenReport()
        let headerBuffer = UnsafeMutableRawBufferPointer.allocate(byteCount: TableHeader.encodedBytes, alignment: 64)
        defer { headerBuffer.deallocate() }
        let headerRead = try TableFile.read(fd, into: headerBuffer.baseAddress!, count: headerBuffer.count, at: 0)
        let header = headerRead == TableHeader.encodedBytes ? TableHeader(decoding: Array(headerBuffer)) : nil
        let layout: TableLayout
        var format: ImageTableFormat
        if readOnly {
            guard let header, let stored = header.layout else {
                throw ImageTableError(
                    headerRead == 0 ? .notFound : .corrupt,
                    "\(path) is not an image table of layout version \(TableLayout.version)")
            }
            if let requested,
                requested.width != stored.width || requested.height != stored.height
                    || requested.pixelFormat != stored.pixelFormat
            {
                throw ImageTableError(
                    .formatMismatch,
                    "\(path) holds \(stored.width)×\(stored.height) \(stored.pixelFormat.rawValue), not \(requested.width)×\(requested.height) \(requested.pixelFormat.rawValue)"
                )
            }
            layout = stored
            format =
                requested
                ?? ImageTableFormat(
                    name: header.name, width: stored.width, height: stored.height,
                    pixelFormat: stored.pixelFormat, maximumCount: 1)
        } else {
            guard let requested else { throw ImageTableError(.invalidArgument, "a writable open needs a format") }
            try requested.validate()
            format = requested
            let wanted = TableLayout(requested, pageSize: TableFile.pageSize)
            if header?.layout != wanted {
                report.rebuildReason =
                    header == nil
                    ? (headerRead == 0 ? "new table" : "no valid table header (or another layout version)")
                    : "format changed from \(header!.width)×\(header!.height) \(header!.pixelFormat.rawValue) to \(wanted.width)×\(wanted.height) \(wanted.pixelFormat.rawValue)"
                try rebuild(fd: fd, path: path, layout: wanted, name: requested.name)
            }
            layout = wanted
        }

        let fingerprint = layout.fingerprint
        let size = try TableFile.size(fd)
        var chunks = layout.chunks(inFileOf: size)
        if !readOnly && size > layout.fileBytes(chunks: chunks) {
            chunks += 1  // a partial chunk at the end: round up so every slot is whole
            try TableFile.truncate(fd, to: layout.fileBytes(chunks: chunks))
        }
        let slotCount = chunks * layout.entriesPerChunk
        let index = report.rebuildReason == nil ? IndexFile.load(forTable: path, fingerprint: fingerprint) : nil
        report.indexFound = index != nil
        if readOnly { format.maximumCount = max(1, index?.maximumCount ?? slotCount) }

        var state: TableState
        var clear: [Int] = []
        let trustIndex =
            index.map { $0.clean && !options.alwaysReconcile && $0.isConsistent(slotCount: slotCount, layout: layout) }
            ?? false
        if let index, trustIndex {
            // A clean close left an exact index: no trailer needs reading.
            state = TableState(
                slotCount: slotCount, maximumCount: format.maximumCount, entriesPerChunk: layout.entriesPerChunk,
                maximumMappedChunks: options.maximumMappedChunks, nextGeneration: index.nextGeneration)
            for r in index.records {
                state.adopt(
                    slot: r.slot,
                    EntryTrailer(
                        generation: r.generation, width: r.width, height: r.height, isOpaque: r.isOpaque,
                        pixelChecksum: 0, entity: r.entity, source: r.source))
            }
            state.rebuildFreeList()
        } else {
            report.scanned = true
            state = try reconcile(
                fd: fd, layout: layout, slotCount: slotCount, index: index, format: format, options: options,
                report: &report, clear: &clear)
        }
        var trimmed = TableState.Effects()
        if !readOnly {
            // Clear what must never be served again; evict down to the maximum.
            let zeros = [UInt8](repeating: 0, count: EntryTrailer.headerBytes)
            for slot in clear { try TableFile.write(fd, zeros, at: layout.trailerOffset(ofSlot: slot)) }
            trimmed = state.enforceMaximum()
        }
        report.seconds = MonotonicClock.seconds() - start
        let core = TableCore(
            path: path, layout: layout, format: format, readOnly: readOnly, fd: fd,
            indexSaveInterval: options.indexSaveInterval, openReport: report, state: state,
            fileChunks: chunks, indexIsClean: index?.clean ?? false)
        handedOver = true
        if !trimmed.isEmpty {
            try core.prepareToModify()
            core.perform(trimmed)
        }
        return core
    }

    /// Rebuilds the state from every slot's trailer and the (possibly stale) index; see ``open(path:format:readOnly:options:)``.
    /// Appends slots to clear (torn, superseded) to `clear`.
    private static func reconcile(
        fd: Int32, layout: TableLayout, slotCount: Int, index: IndexFile?, format: ImageTableFormat,
        options: ImageTable.Options, report: inout OpenReport,
        clear: inout [Int]
    ) throws(ImageTableError) -> TableState {
        let fingerprint = layout.fingerprint
        // 1. Every trailer.
        var committed: [Int: EntryTrailer] = [:]
        var maxGeneration: UInt64 = 0
        _ = posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM)
        let trailerBuffer = UnsafeMutableRawBufferPointer.allocate(byteCount: EntryTrailer.capacity, alignment: 64)
        defer { trailerBuffer.deallocate() }
        for slot in 0..<slotCount {
            let n = try TableFile.read(
                fd, into: trailerBuffer.baseAddress!, count: EntryTrailer.capacity,
                at: layout.trailerOffset(ofSlot: slot))
            guard n == EntryTrailer.capacity else { continue }
            switch EntryTrailer.parse(
                UnsafeRawPointer(trailerBuffer.baseAddress!), layout: layout, fingerprint: fingerprint)
            {
            case .empty:
                break
            case .torn:
                report.tornSlots += 1
                clear.append(slot)
                maxGeneration = max(
                    maxGeneration, UnsafeRawPointer(trailerBuffer.baseAddress!).loadLE(8, as: UInt64.self))
            case .committed(let trailer):
                committed[slot] = trailer
                maxGeneration = max(maxGeneration, trailer.generation)
            }
        }
        _ = posix_fadvise(fd, 0, 0, POSIX_FADV_NORMAL)

        // 2. The newest committed copy of each entity wins.
        var winner: [String: Int] = [:]
        for (slot, trailer) in committed {
            if let other = winner[trailer.entity], committed[other]!.generation > trailer.generation {
                report.superseded += 1
                clear.append(slot)
            } else {
                if let other = winner[trailer.entity] {
                    report.superseded += 1
                    clear.append(other)
                }
                winner[trailer.entity] = slot
            }
        }

        // 3. Confirmed by the index, or checksummed now.
        var confirmedOrder: [Int] = []
        var confirmed = Set<Int>()
        for record in index?.records ?? [] {
            if let t = committed[record.slot], t.generation == record.generation, t.entity == record.entity,
                winner[t.entity] == record.slot, confirmed.insert(record.slot).inserted
            {
                confirmedOrder.append(record.slot)
            }
        }
        var newer: [Int] = []
        let pixels = UnsafeMutableRawBufferPointer.allocate(byteCount: layout.pixelBytes, alignment: 64)
        defer { pixels.deallocate() }
        for slot in winner.values where !confirmed.contains(slot) {
            let t = committed[slot]!
            report.checksummed += 1
            let count = layout.bytesPerRow * t.height
            let n = try TableFile.read(fd, into: pixels.baseAddress!, count: count, at: layout.fileOffset(ofSlot: slot))
            if n == count
                && EntryTrailer.pixelChecksum(pixels.baseAddress!, bytesPerRow: layout.bytesPerRow, height: t.height)
                    == t.pixelChecksum
            {
                newer.append(slot)
            } else {
                report.checksumFailures += 1
                report.tornSlots += 1
                clear.append(slot)
            }
        }
        newer.sort { committed[$0]!.generation < committed[$1]!.generation }

        // 4. The state, in LRU order.
        var state = TableState(
            slotCount: slotCount, maximumCount: format.maximumCount, entriesPerChunk: layout.entriesPerChunk,
            maximumMappedChunks: options.maximumMappedChunks,
            nextGeneration: max(index?.nextGeneration ?? 1, maxGeneration + 1))
        for slot in confirmedOrder + newer { state.adopt(slot: slot, committed[slot]!) }
        state.rebuildFreeList()
        report.missing = (index?.records ?? []).reduce(0) { $0 + (state.source(of: $1.entity) == nil ? 1 : 0) }
        return state
    }

    /// Empties the file and writes a fresh header (synced), removing any old index.
    private static func rebuild(fd: Int32, path: String, layout: TableLayout, name: String) throws(ImageTableError) {
        unlink(IndexFile.path(forTable: path))
        try TableFile.truncate(fd, to: 0)
        var page = TableHeader(layout: layout, name: name).encoded()
        page += [UInt8](repeating: 0, count: layout.headerBytes - page.count)
        try TableFile.write(fd, page, at: 0)
        try TableFile.sync(fd)
        POSIXIO.syncDirectory(of: path)
    }
}
