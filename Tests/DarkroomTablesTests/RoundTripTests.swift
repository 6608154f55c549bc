import DarkroomImage
import DarkroomTestSupport
import Foundation
import Testing

@testable import DarkroomTables

@Suite("Image table round trips")
struct RoundTripTests {
    @Test(
        "every pixel format: drawn pixels come back byte for byte, before and after a clean reopen",
        arguments: PixelFormat.allCases)
    func everyPixelFormat(_ pixelFormat: PixelFormat) throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let format = ImageTableFormat(name: "rt", width: 96, height: 40, pixelFormat: pixelFormat, maximumCount: 10)
        var expected: [String: [UInt8]] = [:]
        do {
            // Given a table with entries drawn by hand (in place), copied from heap bitmaps, and smaller than the format
            let table = try ImageTable(path: dir.file("t.table"), format: format)
            try table.set(entity: "canvas", source: "c") { writer in
                let canvas = try writer.canvas(isOpaque: true)
                let pattern = try TestImages.pattern(width: 96, height: 40, format: pixelFormat, seed: 1, version: 1)
                for y in 0..<40 {
                    canvas.row(y).copyMemory(from: pattern.row(y), byteCount: 96 * pixelFormat.bytesPerPixel)
                }
                return canvas
            }
            try table.setPattern("copied", seed: 2, version: 1)
            try table.setPattern("small", seed: 3, version: 1, width: 17, height: 9)
            // When they are read back
            for (entity, size) in [("canvas", (96, 40)), ("copied", (96, 40)), ("small", (17, 9))] {
                let b = try #require(try table.entry(for: entity))
                // Then the size, format, stride and pixels are the ones written
                #expect(b.width == size.0 && b.height == size.1 && b.format == pixelFormat)
                #expect(b.bytesPerRow == Bitmap.alignedBytesPerRow(width: 96, format: pixelFormat))
                #expect(TestImages.isConsistent(b) != nil, "\(entity) is not the pattern it was written with")
                expected[entity] = TestImages.visibleBytes(b)
            }
            try table.close()
        }
        // And after a clean close and reopen (writable, then read-only) every entry is still byte-equal
        for readOnly in [false, true] {
            let table =
                readOnly
                ? try ImageTable(readingExisting: dir.file("t.table"))
                : try ImageTable(path: dir.file("t.table"), format: format)
            #expect(table.count == 3)
            let stats = table.statistics
            #expect(
                stats.indexFound && stats.checksummedAtOpen == 0 && stats.tornAtOpen == 0 && stats.rebuildReason == nil)
            for (entity, bytes) in expected {
                let b = try #require(try table.entry(for: entity), "\(entity) missing after reopen")
                #expect(TestImages.visibleBytes(b) == bytes, "\(entity) changed across reopen")
            }
            #expect(table.format.width == 96 && table.format.height == 40 && table.format.pixelFormat == pixelFormat)
            try table.close()
        }
    }

    @Test(
        "decoded entries (BGRA8 and Gray8, fill and fit) equal a fresh decode byte for byte",
        arguments: [PixelFormat.bgra8Premultiplied, .gray8], TableContentMode.allCases)
    func decodedEntriesEqualFreshDecodes(_ pixelFormat: PixelFormat, _ mode: TableContentMode) throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        // JPEG (plain and rotated: orientation 6 and 8 go through the transform pass), PNG with alpha, WebP, GIF.
        let inputs = [
            SamplePhotos.files("jpeg").first, SamplePhotos.files("orientation").first { $0.contains("-6.") },
            SamplePhotos.files("orientation").first { $0.contains("-8.") },
            SamplePhotos.files("png").first { $0.contains("alpha") }, SamplePhotos.files("webp").first,
            SamplePhotos.files("gif").first,
        ].compactMap { $0 }
        try #require(inputs.count == 6, "sample photos missing under \(SamplePhotos.root)")
        let format = ImageTableFormat(
            name: "thumbs", width: 160, height: 120, pixelFormat: pixelFormat, maximumCount: 100)
        let table = try ImageTable(path: dir.file("t.table"), format: format)
        for path in inputs {
            // Given an entry decoded straight into the table
            let bytes = try FileBytes.read(path)
            var drawnInPlace = false
            try table.set(entity: path, source: "s") { writer in
                let b = try writer.decode(bytes, mode: mode)
                drawnInPlace = b.storage === writer.storage
                return b
            }
            #expect(drawnInPlace, "the decoder did not write into the entry's memory for \(path)")
            // When it is read back, Then it equals a fresh decode with the same size, mode and format
            let entry = try #require(try table.entry(for: path))
            let fresh = try TestImages.freshDecode(path, width: 160, height: 120, format: pixelFormat, mode: mode)
            #expect(
                entry.width == fresh.width && entry.height == fresh.height,
                "\(path): \(entry.width)×\(entry.height) vs \(fresh.width)×\(fresh.height)")
            #expect(entry.pixelsEqual(fresh), "\(path) differs from a fresh decode")
            #expect(entry.isOpaque == fresh.isOpaque)
            if mode == .fill { #expect(entry.width == 160 && entry.height == 120) }
        }
    }

    @Test("a hit is zero-copy: the bitmap points into the table's mapping, the same bytes every time")
    func hitsAreZeroCopy() throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let table = try ImageTable(
            path: dir.file("t.table"), format: ImageTableFormat(name: "z", width: 64, height: 64, maximumCount: 8))
        try table.setPattern("a", seed: 9, version: 1)
        try table.setPattern("b", seed: 10, version: 1)
        // Given two reads of one entry and one of another
        let first = try #require(try table.entry(for: "a"))
        let second = try #require(try table.entry(for: "a"))
        let other = try #require(try table.entry(for: "b"))
        // Then both reads of "a" share the very same memory, which is the entry's slot in a shared chunk mapping
        #expect(first.storage.baseAddress == second.storage.baseAddress)
        let storage = try #require(first.storage as? TableEntryStorage)
        #expect(storage.region.length == table.core.layout.chunkBytes)
        #expect(storage.baseAddress == storage.region.base + table.core.layout.offsetInChunk(of: storage.slot))
        // And neighbours in a chunk are one entry apart
        #expect(abs(other.storage.baseAddress - first.storage.baseAddress) == table.core.layout.entryBytes)
        // And a miss is nil, not an error
        #expect(try table.entry(for: "nope") == nil)
    }

    @Test("layout: 256×256 BGRA entries are 65 pages (pixels + trailer), 8 to a ~2 MiB chunk; small ones ≥ 4 per chunk")
    func layoutArithmetic() {
        let big = TableLayout(width: 256, height: 256, pixelFormat: .bgra8Premultiplied, pageSize: 4096)
        #expect(big.bytesPerRow == 1024 && big.pixelBytes == 262_144 && big.entryBytes == 266_240)
        #expect(big.entriesPerChunk == 8 && big.chunkBytes == 2_129_920)
        let huge = TableLayout(width: 2048, height: 2048, pixelFormat: .bgra8Premultiplied, pageSize: 4096)
        #expect(huge.entriesPerChunk == TableLayout.minimumEntriesPerChunk)
        let odd = TableLayout(width: 100, height: 3, pixelFormat: .gray8, pageSize: 4096)
        #expect(odd.bytesPerRow == 128 && odd.entryBytes == 4096 && odd.chunkBytes == 2 << 20)
        for l in [big, huge, odd] {
            #expect(l.entryBytes % 4096 == 0 && l.chunkBytes % 4096 == 0 && l.headerBytes == 4096)
            #expect(l.pixelBytes + EntryTrailer.capacity <= l.entryBytes)
        }
    }

    @Test("header, trailer and index encodings round-trip and reject damage")
    func encodings() throws {
        let layout = TableLayout(width: 32, height: 16, pixelFormat: .gray8, pageSize: 4096)
        let header = TableHeader(layout: layout, name: "héllo")
        #expect(TableHeader(decoding: header.encoded()) == header)
        var damaged = header.encoded()
        damaged[20] ^= 1
        #expect(TableHeader(decoding: damaged) == nil)

        let index = IndexFile(
            fingerprint: 7, maximumCount: 3, nextGeneration: 99, clean: true,
            records: [
                .init(slot: 4, generation: 5, width: 3, height: 2, isOpaque: true, entity: "ä/b", source: "s1"),
                .init(slot: 0, generation: 9, width: 32, height: 16, isOpaque: false, entity: "c", source: ""),
            ])
        #expect(IndexFile(decoding: index.encoded()) == index)
        var truncated = index.encoded()
        truncated.removeLast(3)
        #expect(IndexFile(decoding: truncated) == nil)

        let raw = UnsafeMutableRawBufferPointer.allocate(byteCount: EntryTrailer.capacity, alignment: 64)
        defer { raw.deallocate() }
        raw.initializeMemory(as: UInt8.self, repeating: 0)
        let fp = layout.fingerprint
        #expect(EntryTrailer.parse(UnsafeRawPointer(raw.baseAddress!), layout: layout, fingerprint: fp) == .empty)
        EntryTrailer.beginWrite(raw.baseAddress!, generation: 12)
        #expect(EntryTrailer.parse(UnsafeRawPointer(raw.baseAddress!), layout: layout, fingerprint: fp) == .torn)
        let t = EntryTrailer(
            generation: 12, width: 30, height: 16, isOpaque: true, pixelChecksum: 42, entity: "e", source: "s")
        t.commit(raw.baseAddress!, fingerprint: fp)
        #expect(
            EntryTrailer.parse(UnsafeRawPointer(raw.baseAddress!), layout: layout, fingerprint: fp) == .committed(t))
        #expect(EntryTrailer.parse(UnsafeRawPointer(raw.baseAddress!), layout: layout, fingerprint: fp ^ 1) == .torn)
        raw[EntryTrailer.headerBytes] ^= 0xFF  // a flipped entity byte
        #expect(EntryTrailer.parse(UnsafeRawPointer(raw.baseAddress!), layout: layout, fingerprint: fp) == .torn)
    }
}
