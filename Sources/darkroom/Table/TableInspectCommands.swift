import ArgumentParser
import DarkroomImage
import DarkroomSupport
import DarkroomTables
import Foundation

/// Opens a table read-only for the inspection commands (exit 2 with the error when it cannot).
private func openReadOnly(_ path: String) throws -> ImageTable {
    do { return try ImageTable(readingExisting: path) } catch { throw TableCommand.fail(error) }
}

/// `darkroom table get --table PATH ENTITY --out FILE.png` (exit 1 when the entity is absent).
struct TableGetCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "get", abstract: "Write one entry as a PNG.")

    @Option(help: "The table file.") var table: String
    @Option(help: "The PNG to write.") var out: String
    @Argument(help: "The entity id (for `table build`, the input path as given).") var entity: String

    func run() throws {
        let handle = try openReadOnly(table)
        guard let bitmap = try handle.entry(for: entity) else {
            FileHandle.standardError.write(Data("\(entity): not in \(table)\n".utf8))
            throw ExitCode(1)
        }
        let png = try ImageEncoder.encode(bitmap, as: .png)
        try FileBytes.writeAtomically(png, to: out)
    }
}

/// `darkroom table list --table PATH`: one entity id per line, sorted.
struct TableListCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list", abstract: "Print every entity id, one per line.")

    @Option(help: "The table file.") var table: String

    func run() throws {
        let handle = try openReadOnly(table)
        for entity in handle.entities.sorted() { print(entity) }
    }
}

/// `darkroom table verify --table PATH [--json]`: checks every entry; exit 1 if any torn entry would be served.
struct TableVerifyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Check every slot's trailer and pixel checksum (exit 1 if a torn entry would be served).")

    @Option(help: "The table file.") var table: String
    @Flag(help: "Print JSON.") var json = false

    func run() throws {
        let start = MonotonicClock.seconds()
        let handle = try openReadOnly(table)
        let v: ImageTable.Verification
        do { v = try handle.verify() } catch { throw TableCommand.fail(error) }
        let stats = handle.statistics
        if json {
            print(
                JSONLine.encode([
                    "valid": v.valid, "torn": v.torn, "torn_served": v.tornServed, "missing": v.missing,
                    "unreferenced": v.unreferenced, "empty": v.empty, "slots": v.slots, "checked_bytes": v.checkedBytes,
                    "problems": v.problems, "index_found": stats.indexFound,
                    "checksummed_at_open": stats.checksummedAtOpen,
                    "seconds": MonotonicClock.seconds() - start,
                ]))
        } else {
            print(
                "\(v.valid) valid, \(v.torn) torn (not served), \(v.tornServed) torn served, \(v.missing) missing, "
                    + "\(v.unreferenced) unreferenced, \(v.empty) empty of \(v.slots) slots")
            for p in v.problems { print("  \(p)") }
        }
        if v.tornServed > 0 { throw ExitCode(1) }
    }
}

/// `darkroom table stats --table PATH [--json]`.
struct TableStatsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stats", abstract: "Print the table's format, layout and counts.")

    @Option(help: "The table file.") var table: String
    @Flag(help: "Print JSON.") var json = false

    func run() throws {
        let handle = try openReadOnly(table)
        let f = handle.format
        let s = handle.statistics
        let object: [String: Any] = [
            "name": f.name, "width": f.width, "height": f.height, "pixel_format": f.pixelFormat.rawValue,
            "entries": s.count, "maximum_count": s.maximumCount, "slots": s.slots, "file_bytes": s.fileBytes,
            "entry_bytes": s.entryBytes, "pixel_bytes": s.pixelBytes, "bytes_per_row": s.bytesPerRow,
            "entries_per_chunk": s.entriesPerChunk, "chunk_bytes": s.chunkBytes,
            "maximum_mapped_chunks": s.maximumMappedChunks, "index_found": s.indexFound,
            "torn_at_open": s.tornAtOpen, "checksummed_at_open": s.checksummedAtOpen,
            "superseded_at_open": s.supersededAtOpen, "missing_at_open": s.missingAtOpen, "open_seconds": s.openSeconds,
        ]
        if json {
            print(JSONLine.encode(object))
        } else {
            print(
                "\(f.name): \(f.width)×\(f.height) \(f.pixelFormat.rawValue), \(s.count) of \(s.maximumCount) entries, "
                    + "\(s.slots) slots, \(s.fileBytes) bytes")
            print(
                "entry \(s.entryBytes) bytes (\(s.pixelBytes) pixels, \(s.bytesPerRow) per row), "
                    + "\(s.entriesPerChunk) per \(s.chunkBytes)-byte chunk")
            print(
                String(
                    format: "open: %.1f ms, index %@, %ld torn, %ld checksummed, %ld superseded, %ld missing",
                    s.openSeconds * 1000, s.indexFound ? "found" : "absent", s.tornAtOpen, s.checksummedAtOpen,
                    s.supersededAtOpen, s.missingAtOpen))
        }
    }
}
