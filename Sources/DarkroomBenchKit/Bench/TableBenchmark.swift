import ArgumentParser
import DarkroomImage
import DarkroomSupport
import DarkroomTables
import Foundation

/// `darkroom bench table`: a hot 256×256 BGRA table entry against decoding the same thumbnail from JPEG, PNG and
/// WebP and against `read()` + copy of its raw pixels from one file per thumbnail; the same reads with a cold page
/// cache; and a sequential scroll over every entry of a large table. One run, side by side.
package struct TableBenchmark: ParsableArguments {
    /// The defaults below; `darkroom bench` parses the options into them.
    package init() {}

    @Option(help: "Entries in the table (the scroll goes over all of them).") package var entries: Int = 10_000
    @Option(help: "Raw pixel files, one per thumbnail, for the read()+copy comparison.") package var files: Int = 1_000
    @Option(help: "Calls per timed batch of entry gets.") package var gets: Int = 200_000
    @Option(help: "Decodes per timed batch of thumbnail decodes.") package var decodes: Int = 200
    @Option(help: "Timed batches (medians are reported; gets, decodes and reads alternate).") package var batches: Int =
        5
    @Option(help: "Random entries read per cold-cache measurement.") package var coldReads: Int = 300
    @Option(help: "Scratch folder (default: a new folder in the temporary directory; removed afterwards).") package
        var dir: String?
    @Flag(help: "Print JSON.") package var json = false

    /// Checks the settings before a run.
    package func validate() throws {
        guard entries >= 16, files >= 16, gets > 0, decodes > 0, batches > 0, coldReads > 0 else {
            throw BenchError("counts must be positive (entries and files at least 16)")
        }
    }

    /// Runs the benchmark and prints its report (JSON with ``json``).
    package func run() throws {
        guard let root = BenchPhotos.root() else { throw BenchError("sample photos not found; set DARKROOM_PHOTOS") }
        let photos = BenchPhotos.files(in: root + "/jpeg")
        guard let photo = photos.first else { throw BenchError("no JPEGs in \(root)/jpeg") }
        let scratch = dir ?? NSTemporaryDirectory() + "/darkroom-bench-table-\(getpid())"
        try FileManager.default.createDirectory(atPath: scratch + "/raw", withIntermediateDirectories: true)
        defer { if dir == nil { try? FileManager.default.removeItem(atPath: scratch) } }
        let decoder = ImageDecoder()
        let side = 256
        let thumbOptions = DecodeOptions(
            size: .fill(width: side, height: side), pixelFormat: .exactly(.bgra8Premultiplied))
        let bgra = DecodeOptions(pixelFormat: .exactly(.bgra8Premultiplied))

        // The thumbnail, and the same thumbnail encoded as JPEG, PNG and WebP (what a disk cache of thumbnails holds).
        let photoBytes = try FileBytes.read(photo)
        let thumbnail = try decoder.decode(photoBytes, options: thumbOptions).bitmap
        let encoded: [(String, [UInt8])] = try [
            ("jpeg", ImageEncoder.encode(thumbnail, as: .jpeg)),
            ("png", ImageEncoder.encode(thumbnail, as: .png)),
            ("webp", ImageEncoder.encode(thumbnail, as: .webp)),
        ]
        // A few distinct thumbnails to fill the table and the raw files with.
        let sources = try photos.prefix(8).map { try decoder.decode(FileBytes.read($0), options: thumbOptions).bitmap }

        // The table: `entries` entries copied in, plus timing of decode-in-place writes.
        let tablePath = scratch + "/bench.table"
        let format = ImageTableFormat(
            name: "bench", width: side, height: side, pixelFormat: .bgra8Premultiplied, maximumCount: entries)
        var table: ImageTable? = try ImageTable(path: tablePath, format: format, options: .init(indexSaveInterval: 0))
        let tBuild = MonotonicClock.seconds()
        for i in 0..<entries {
            let source = sources[i % sources.count]
            try table!.set(entity: "e\(i)", source: "s\(i % sources.count)") { _ in source }
        }
        let setCopyNs = (MonotonicClock.seconds() - tBuild) * 1e9 / Double(entries)
        let setDecodeNs = try TableBench.nanosecondsPerCall(20) {
            try table!.set(entity: "e0", source: "photo") { try $0.decode(photoBytes, mode: .fill) }
        }
        try table!.flush()
        let buildSeconds = MonotonicClock.seconds() - tBuild

        // One raw pixel file per thumbnail.
        let rawBytes = thumbnail.cost
        for i in 0..<files {
            let source = sources[i % sources.count]
            let bytes = source.withUnsafeBytes { Array($0) }
            try FileBytes.writeAtomically(bytes, to: scratch + "/raw/\(i).bgra")
        }

        // Hot: gets, decodes and reads alternate batch by batch so machine drift hits all alike.
        let hot = "e1"
        _ = try table!.entry(for: hot).map(TableBench.touch)
        var getNs = [Double]()
        var getReadNs = [Double]()
        var readCopyNs = [Double]()
        var photoNs = [Double]()
        var decodeNs: [String: [Double]] = [:]
        for _ in 0..<batches {
            getNs.append(try TableBench.nanosecondsPerCall(gets) { blackHole(try table!.entry(for: hot)) })
            getReadNs.append(
                try TableBench.nanosecondsPerCall(max(1, gets / 100)) {
                    blackHole(TableBench.touch(try table!.entry(for: hot)!))
                })
            for (name, bytes) in encoded {
                decodeNs[name, default: []].append(
                    try TableBench.nanosecondsPerCall(decodes) {
                        blackHole(try decoder.decode(bytes, options: bgra))
                    })
            }
            photoNs.append(
                try TableBench.nanosecondsPerCall(max(1, decodes / 20)) {
                    blackHole(try decoder.decode(photoBytes, options: thumbOptions))
                })
            var i = 0
            readCopyNs.append(
                TableBench.nanosecondsPerCall(max(1, gets / 100)) {
                    blackHole(TableBench.readCopy(scratch + "/raw/\(i % files).bgra", bytes: rawBytes))
                    i += 1
                })
        }
        var stats = table!.statistics

        // Hot scroll: every entry in order, each read whole (as drawing it would), then let go.
        let scrollHot = try scroll(table!)
        let mappedAfterScroll = table!.statistics.mappedChunks
        try table!.close()
        table = nil

        // Opening: trusting the clean index, and reading every trailer (what an open after a crash does), hot and cold.
        func openMs(reconcile: Bool) throws -> Double {
            let t0 = MonotonicClock.seconds()
            let t = try ImageTable(readingExisting: tablePath, options: .init(alwaysReconcile: reconcile))
            let ms = (MonotonicClock.seconds() - t0) * 1000
            try t.close()
            return ms
        }
        let hotOpenMs = try openMs(reconcile: false)
        let hotReconcileMs = try openMs(reconcile: true)
        TableBench.dropFromPageCache(tablePath)
        TableBench.dropFromPageCache(tablePath + ".index")
        let coldReconcileMs = try openMs(reconcile: true)

        // Cold: unmapped and dropped from the page cache (fdatasync + POSIX_FADV_DONTNEED; checked with mincore).
        TableBench.dropFromPageCache(tablePath)
        TableBench.dropFromPageCache(tablePath + ".index")
        let residentBefore = TableBench.residentFraction(tablePath)
        let tOpen = MonotonicClock.seconds()
        var cold: ImageTable? = try ImageTable(readingExisting: tablePath)
        let coldOpenMs = (MonotonicClock.seconds() - tOpen) * 1000
        var rng = SystemRandomNumberGenerator()
        let picks = (0..<coldReads).map { _ in Int.random(in: 0..<entries, using: &rng) }
        var coldGet = [Double]()
        for p in picks {
            let t0 = MonotonicClock.seconds()
            blackHole(TableBench.touch(try cold!.entry(for: "e\(p)")!))
            coldGet.append((MonotonicClock.seconds() - t0) * 1e9)
        }
        try cold!.close()
        cold = nil
        for i in 0..<files { TableBench.dropFromPageCache(scratch + "/raw/\(i).bgra") }
        let rawResident = TableBench.residentFraction(scratch + "/raw/0.bgra")
        var coldRead = [Double]()
        for _ in 0..<min(coldReads, files) {
            let f = Int.random(in: 0..<files, using: &rng)
            let t0 = MonotonicClock.seconds()
            blackHole(TableBench.readCopy(scratch + "/raw/\(f).bgra", bytes: rawBytes))
            coldRead.append((MonotonicClock.seconds() - t0) * 1e9)
        }

        // Cold scroll over the whole table, and the same over the raw files (fewer: one pass over all of them).
        TableBench.dropFromPageCache(tablePath)
        let scrollTable = try ImageTable(readingExisting: tablePath)
        let scrollCold = try scroll(scrollTable)
        try scrollTable.close()
        for i in 0..<files { TableBench.dropFromPageCache(scratch + "/raw/\(i).bgra") }
        let tFiles = MonotonicClock.seconds()
        for i in 0..<files { blackHole(TableBench.readCopy(scratch + "/raw/\(i).bgra", bytes: rawBytes)) }
        let filesColdNs = (MonotonicClock.seconds() - tFiles) * 1e9 / Double(files)
        let tFilesHot = MonotonicClock.seconds()
        for i in 0..<files { blackHole(TableBench.readCopy(scratch + "/raw/\(i).bgra", bytes: rawBytes)) }
        let filesHotNs = (MonotonicClock.seconds() - tFilesHot) * 1e9 / Double(files)
        stats.mappedChunks = mappedAfterScroll

        let get = median(getNs)
        let jpeg = median(decodeNs["jpeg"] ?? [])
        let result: [String: Any] = [
            "benchmark": "table", "entries": entries, "files": files, "thumbnail": "\(side)x\(side) bgra8",
            "photo": (photo as NSString).lastPathComponent,
            "entry_get_ns": get, "entry_get_and_read_ns": median(getReadNs),
            "jpeg_thumbnail_decode_ns": jpeg, "png_thumbnail_decode_ns": median(decodeNs["png"] ?? []),
            "webp_thumbnail_decode_ns": median(decodeNs["webp"] ?? []),
            "jpeg_photo_to_thumbnail_ns": median(photoNs), "read_copy_ns": median(readCopyNs),
            "speedup_vs_jpeg_thumbnail": jpeg / get,
            "encoded_bytes": Dictionary(uniqueKeysWithValues: encoded.map { ($0.0, $0.1.count) }),
            "cold_method":
                "fdatasync + posix_fadvise(POSIX_FADV_DONTNEED), table unmapped; residency checked with mincore",
            "cold_resident_fraction_before": residentBefore, "cold_raw_resident_fraction_before": rawResident,
            "cold_open_ms": coldOpenMs, "hot_open_ms": hotOpenMs, "reconcile_open_hot_ms": hotReconcileMs,
            "reconcile_open_cold_ms": coldReconcileMs, "cold_entry_get_and_read_ns": median(coldGet),
            "cold_read_copy_ns": median(coldRead),
            "scroll_hot_ns_per_entry": scrollHot.nsPerEntry, "scroll_cold_ns_per_entry": scrollCold.nsPerEntry,
            "scroll_hot_seconds": scrollHot.seconds, "scroll_cold_seconds": scrollCold.seconds,
            "scroll_files_hot_ns_per_file": filesHotNs, "scroll_files_cold_ns_per_file": filesColdNs,
            "set_copy_ns": setCopyNs, "set_decode_in_place_ns": setDecodeNs, "build_seconds": buildSeconds,
            "table_file_bytes": stats.fileBytes, "entry_bytes": stats.entryBytes,
            "entries_per_chunk": stats.entriesPerChunk,
            "chunk_bytes": stats.chunkBytes, "mapped_chunks_after_scroll": mappedAfterScroll,
            "maximum_mapped_chunks": stats.maximumMappedChunks, "peak_rss_bytes": ProcessStats.peakRSSBytes,
        ]
        if json {
            print(JSONLine.encode(result))
        } else {
            print(
                String(
                    format: "hot entry get (pointer + pin, no copy): %.0f ns; get + read all 256 KiB: %.0f ns", get,
                    median(getReadNs)))
            print(
                String(
                    format:
                        "decode the 256×256 thumbnail: JPEG %.0f ns (%.0f× the get), PNG %.0f ns, WebP %.0f ns; photo → thumbnail %.2f ms",
                    jpeg, jpeg / get, median(decodeNs["png"] ?? []), median(decodeNs["webp"] ?? []),
                    median(photoNs) / 1e6))
            print(String(format: "read() + copy of one raw pixel file: %.0f ns", median(readCopyNs)))
            print(
                String(
                    format:
                        "open (clean index): hot %.1f ms, cold %.1f ms; reading every trailer (after a crash): hot %.1f ms, cold %.1f ms",
                    hotOpenMs, coldOpenMs, hotReconcileMs, coldReconcileMs))
            print(
                String(
                    format: "cold (resident before: table %.3f, files %.3f): get + read %.0f ns; read() + copy %.0f ns",
                    residentBefore, rawResident, median(coldGet), median(coldRead)))
            print(
                String(
                    format:
                        "scroll over %ld entries: hot %.0f ns/entry (%.2f s), cold %.0f ns/entry (%.2f s); files: hot %.0f, cold %.0f ns/file",
                    entries, scrollHot.nsPerEntry, scrollHot.seconds, scrollCold.nsPerEntry, scrollCold.seconds,
                    filesHotNs, filesColdNs))
            print(
                String(format: "writes: copy in %.0f ns/entry, decode in place %.2f ms; ", setCopyNs, setDecodeNs / 1e6)
                    + "file \(stats.fileBytes) bytes, \(mappedAfterScroll) mapped chunks after scroll (bound \(stats.maximumMappedChunks)), "
                    + String(format: "peak RSS %.1f MiB", Double(ProcessStats.peakRSSBytes) / 1_048_576))
        }
    }

    /// Reads every entry in order (get, read all pixels, release).
    private func scroll(_ table: ImageTable) throws -> (nsPerEntry: Double, seconds: Double) {
        let t0 = MonotonicClock.seconds()
        var sum: UInt64 = 0
        for i in 0..<entries {
            guard let b = try table.entry(for: "e\(i)") else { throw BenchError("entry e\(i) missing") }
            sum &+= TableBench.touch(b)
        }
        blackHole(sum)
        let seconds = MonotonicClock.seconds() - t0
        return (seconds * 1e9 / Double(entries), seconds)
    }
}
