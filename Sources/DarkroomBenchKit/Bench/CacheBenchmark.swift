import ArgumentParser
import DarkroomCache
import DarkroomSupport
import Dispatch
import Foundation
import Synchronization

/// `darkroom bench cache`: the memory cache against NSCache and a Dictionary behind a Mutex (1 and 2 threads), and
/// the disk cache against one file per key (how SDWebImage, Kingfisher and Nuke store), side by side in one run.
///
/// Fairness: on the disk side neither store fsyncs a value of ≤ 20 KiB per write — the disk cache commits to its
/// SQLite WAL with `synchronous=NORMAL` (fsync at checkpoints only), one file per key writes a temporary file and
/// renames it (`Data.write(options: .atomic)`). Both survive `kill -9`; neither makes each write power-loss durable.
/// Larger values: the disk cache fsyncs each value file before renaming it (its crash guarantee needs it); one
/// file per key is measured both without fsync (as those libraries do) and with (`files_fsync_*`). Reads of both
/// come from the page cache (values just written); the disk cache also verifies size and XXH64 on every read.
package struct CacheBenchmark: ParsableArguments {
    /// The defaults below; `darkroom bench` parses the options into them.
    package init() {}

    @Option(help: "Memory-cache operations per thread per measurement.") package var memoryOps: Int = 1_000_000
    @Option(help: "Repetitions of each measurement (the median is reported).") package var repeats: Int = 5
    @Option(help: "Scratch directory for the disk measurements (default: a fresh one under the temporary directory).")
    package var dir: String?
    @Flag(help: "Also measure write/read speed of inline vs file storage per size (the inline-threshold sweep).")
    package var thresholdSweep = false
    @Option(help: "Disk value sizes to measure, comma-separated (2k, 20k, 100k, 1m; default: all).")
    package var diskSizes: String?
    @Flag(help: "Print JSON.") package var json = false

    /// Runs the benchmark and prints its report (JSON with ``json``).
    package func run() throws {
        var result: [String: Any] = ["benchmark": "cache", "memory_ops_per_thread": memoryOps, "repeats": repeats]
        for (k, v) in MemoryBench(ops: memoryOps, repeats: repeats).run() { result[k] = v }
        let scratch = dir ?? NSTemporaryDirectory() + "darkroom-bench-cache-\(getpid())"
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        let disk = DiskBench(
            root: scratch, repeats: repeats, only: Set(diskSizes?.split(separator: ",").map(String.init) ?? []))
        for (k, v) in try disk.run() { result[k] = v }
        if thresholdSweep { result["threshold_sweep"] = try disk.thresholdSweep() }
        if json {
            print(JSONLine.encode(result))
        } else {
            for key in result.keys.sorted() where key != "threshold_sweep" {
                let value = result[key]!
                print("\(key): \(value is Double ? String(format: "%.1f", value as! Double) : "\(value)")")
            }
            if let sweep = result["threshold_sweep"] as? [[String: Any]] {
                for row in sweep { print("sweep: \(row)") }
            }
        }
    }
}
