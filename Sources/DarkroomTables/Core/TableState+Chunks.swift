/// The mapped-chunk half of ``TableState`` (``TableState/install(chunk:_:for:effects:)`` lives with the readers):
/// read-ahead hints, unmapping the least recently used unpinned chunks beyond the bound, releasing them on close.
extension TableState {
    /// When `s` follows the previously advised slot, the next chunk's worth of slots not yet read ahead: a
    /// scroll through entries written in order then streams from the disk instead of waiting entry by entry.
    mutating func readAhead(after s: Int) -> Range<Int>? {
        defer { lastAdvised = s }
        guard s == lastAdvised + 1 else { return nil }
        let end = min(s + 1 + entriesPerChunk, slots.count)
        let start = max(s + 1, readAheadEnd)
        guard start < end else { return nil }
        readAheadEnd = end
        return start..<end
    }

    /// Forgets every mapped chunk no bitmap points into (on close); returns the mappings to drop.
    mutating func releaseUnpinnedChunks() -> [MappedRegion] {
        var released: [MappedRegion] = []
        for (c, chunk) in chunks where chunk.pins == 0 {
            if let region = chunk.region {
                released.append(region)
                mappedChunks -= 1
            }
            chunks[c] = nil
        }
        return released
    }

    /// Unmaps least recently used chunks that no bitmap points into until at most ``maximumMappedChunks`` are mapped.
    mutating func evictChunks(_ effects: inout Effects) {
        while mappedChunks > maximumMappedChunks {
            var victim: Int?
            var oldest = UInt64.max
            for (c, chunk) in chunks where chunk.region != nil && chunk.pins == 0 && chunk.lastUse < oldest {
                victim = c
                oldest = chunk.lastUse
            }
            guard let victim, let region = chunks[victim]?.region else { return }  // the rest are pinned
            effects.release.append(region)
            chunks[victim] = nil
            mappedChunks -= 1
        }
    }
}
