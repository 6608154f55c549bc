import ArgumentParser
import DarkroomImage
import DarkroomSupport
import DarkroomTables
import Foundation
import Synchronization

/// `darkroom table ...`: build and inspect image tables (thumbnails pre-decoded into a memory-mapped file).
struct TableCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "table", abstract: "Image tables: thumbnails pre-decoded into a memory-mapped file.",
        subcommands: [
            TableBuildCommand.self, TableGetCommand.self, TableListCommand.self, TableVerifyCommand.self,
            TableStatsCommand.self,
        ])

    /// Prints `error` to standard error and exits with `code`.
    static func fail(_ error: ImageTableError, code: Int32 = 2) -> ExitCode {
        FileHandle.standardError.write(Data("error: \(error)\n".utf8))
        return ExitCode(code)
    }
}

/// `darkroom table build --table PATH --size WxH [--pixel-format bgra8|gray8] [--fill|--fit] INPUT...`
///
/// Every entry is drawn at the table's size: `--fill` entries are exactly `--size` and `--fit` entries touch its
/// box, images smaller than the box being enlarged, so a reader never has to scale an entry on its way to the
/// screen. Entity id = the input path as given; source id = the XXH64 of its bytes plus how it was drawn (the
/// content mode, and `enlarged`), so a change of either redraws. Inputs whose entry is current are skipped.
/// Decodes on a bounded pool of threads, each straight into its entry's mapping.
struct TableBuildCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "build", abstract: "Decode images into a table (skipping entries that are already current).")

    enum Format: String, ExpressibleByArgument, CaseIterable {
        case bgra8, gray8
        var pixelFormat: PixelFormat { self == .gray8 ? .gray8 : .bgra8Premultiplied }
    }

    @Option(help: "The table file (created if missing; rebuilt if its size or pixel format differ).") var table: String
    @Option(help: "Entry size, WxH (e.g. 256x256).") var size: String
    @Option(help: "Pixel format: bgra8 or gray8.") var pixelFormat: Format = .bgra8
    @Flag(
        exclusivity: .exclusive,
        help: "Fill the entry and crop the center (default), or fit inside it; smaller images are enlarged.")
    var mode: TableContentMode = .fill
    @Option(help: "Most entries the table keeps (least recently used are replaced).") var maxCount: Int = 10_000
    @Option(help: "Worker threads (default: active cores).") var jobs: Int?
    @Option(help: ArgumentHelp("Commits between index saves.", visibility: .hidden)) var indexSaveInterval: Int = 64
    @Flag(
        help: ArgumentHelp(
            "Write a line to standard output as each entry commits (for the crash test).", visibility: .hidden))
    var progress = false
    @Flag(help: "Print the summary as JSON.") var json = false
    @Argument(help: "Image files; each path as given is its entity id.") var inputs: [String]

    func validate() throws {
        guard Self.parseSize(size) != nil else {
            throw ValidationError("--size must be WxH with positive sides, e.g. 256x256")
        }
        guard maxCount > 0 else { throw ValidationError("--max-count must be positive") }
        if let jobs, jobs < 1 { throw ValidationError("--jobs must be at least 1") }
    }

    static func parseSize(_ text: String) -> (Int, Int)? {
        let parts = text.lowercased().split(separator: "x")
        guard parts.count == 2, let w = Int(parts[0]), let h = Int(parts[1]), w > 0, h > 0 else { return nil }
        return (w, h)
    }

    func run() throws {
        let start = MonotonicClock.seconds()
        let (w, h) = Self.parseSize(size)!
        let name = (table as NSString).lastPathComponent
        let format = ImageTableFormat(
            name: name, width: w, height: h, pixelFormat: pixelFormat.pixelFormat, maximumCount: maxCount)
        let tableHandle: ImageTable
        do {
            tableHandle = try ImageTable(
                path: table, format: format, options: ImageTable.Options(indexSaveInterval: indexSaveInterval))
        } catch { throw TableCommand.fail(error) }
        let inputs = self.inputs
        let mode = self.mode
        let progress = self.progress
        let counts = Locked((written: 0, skipped: 0))
        let failures = Locked<[(String, String)]>([])
        WorkQueue.run(count: inputs.count, workers: jobs ?? ProcessStats.activeCores) { i in
            let path = inputs[i]
            do {
                let bytes = try FileBytes.read(path)
                let source =
                    bytes.withUnsafeBytes { ImageTable.sourceID(hashing: $0) } + "-" + mode.rawValue + "-enlarged"
                if tableHandle.sourceID(for: path) == source {
                    counts.withLock { $0.skipped += 1 }
                    return
                }
                try tableHandle.set(entity: path, source: source) { writer in
                    try writer.decode(bytes, mode: mode, options: DecodeOptions(allowsUpscaling: true))
                }
                counts.withLock { $0.written += 1 }
                if progress { FileHandle.standardOutput.write(Data("committed\n".utf8)) }
            } catch {
                failures.withLock { $0.append((path, "\(error)")) }
            }
        }
        do { try tableHandle.close() } catch { throw TableCommand.fail(error) }
        let failed = failures.withLock { $0 }
        let done = counts.withLock { $0 }
        let stats = tableHandle.statistics
        let wall = MonotonicClock.seconds() - start
        if json {
            print(
                JSONLine.encode([
                    "inputs": inputs.count, "written": done.written, "skipped": done.skipped, "failures": failed.count,
                    "entries": stats.count, "evictions": stats.evictions, "wall_seconds": wall,
                    "rebuilt": stats.rebuildReason as Any? ?? NSNull(),
                    "errors": failed.map { ["path": $0.0, "error": $0.1] },
                ]))
        } else {
            for (path, e) in failed { FileHandle.standardError.write(Data("\(path): error: \(e)\n".utf8)) }
            if let reason = stats.rebuildReason { print("table \(table): \(reason)") }
            print(
                String(
                    format:
                        "%ld inputs: %ld written, %ld current (skipped), %ld failed; %ld entries, %ld evicted; %.3f s",
                    inputs.count, done.written, done.skipped, failed.count, stats.count, stats.evictions, wall))
        }
        if !failed.isEmpty { throw ExitCode(1) }
    }
}

extension TableContentMode: EnumerableFlag {
    public static func name(for value: TableContentMode) -> NameSpecification { .long }
}
