import ArgumentParser
import DarkroomCache
import DarkroomImage
import DarkroomSupport
import Foundation

/// `darkroom cache ...`: the disk cache from outside — put, get, remove, stat, trim.
struct CacheCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cache", abstract: "Inspect and change a Darkroom disk cache directory.",
        subcommands: [Put.self, Get.self, Remove.self, Stat.self, Trim.self, CacheTortureCommand.self])

    /// Opens the cache with no size, count or age limit, so a command never trims by itself (only `trim` does).
    static func open(_ dir: String) throws -> DiskCache {
        try DiskCache(directory: dir, configuration: DiskCacheConfiguration(sizeLimit: .max))
    }

    struct Put: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Store FILE's bytes under KEY.")
        @Option(help: "Cache directory (created if missing).") var dir: String
        @Argument(help: "The key.") var key: String
        @Argument(help: "The file whose bytes to store.") var file: String

        func run() throws {
            let bytes = try FileBytes.read(file, limit: .max)
            try CacheCommand.open(dir).set(bytes, forKey: key)
        }
    }

    struct Get: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write KEY's bytes to --out or standard output; exit 0 when found, 1 when absent or failed.")
        @Option(help: "Cache directory.") var dir: String
        @Option(help: "Write the value here (atomically) instead of standard output.") var out: String?
        @Argument(help: "The key.") var key: String

        func run() throws {
            do {
                guard let bytes = try CacheCommand.open(dir).data(forKey: key) else { throw ExitCode(1) }
                if let out {
                    try FileBytes.writeAtomically(bytes, to: out)
                } else {
                    FileHandle.standardOutput.write(Data(bytes))
                }
            } catch let exit as ExitCode {
                throw exit
            } catch {
                FileHandle.standardError.write(Data("darkroom cache get: \(error)\n".utf8))
                throw ExitCode(1)
            }
        }
    }

    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove KEY (succeeds when absent too).")
        @Option(help: "Cache directory.") var dir: String
        @Argument(help: "The key.") var key: String

        func run() throws { try CacheCommand.open(dir).removeValue(forKey: key) }
    }

    struct Stat: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Entry count, total value bytes, inline entries, manifest bytes.")
        @Option(help: "Cache directory.") var dir: String
        @Flag(help: "Print JSON.") var json = false

        func run() throws {
            let s = try CacheCommand.open(dir).statistics
            if json {
                print(
                    JSONLine.encode([
                        "directory": dir, "count": s.count, "total_size": s.totalSize,
                        "inline_count": s.inlineCount, "database_bytes": s.databaseBytes,
                    ]))
            } else {
                print(
                    "\(dir): \(s.count) entries, \(s.totalSize) bytes of values (\(s.inlineCount) inline), "
                        + "manifest \(s.databaseBytes) bytes")
            }
        }
    }

    struct Trim: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Remove least recently used values until at most --max-size bytes remain.")
        @Option(help: "Cache directory.") var dir: String
        @Option(help: "Bytes of values to keep at most.") var maxSize: Int

        func run() throws {
            guard maxSize >= 0 else { throw ValidationError("--max-size must be ≥ 0") }
            try CacheCommand.open(dir).trim(toSize: maxSize)
        }
    }
}
