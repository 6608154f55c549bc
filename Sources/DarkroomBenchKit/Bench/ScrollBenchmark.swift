import ArgumentParser
import DarkroomImage
import DarkroomSupport
import Foundation

/// `darkroom bench scroll`: a simulated photo grid scrolled in real time with five ways of getting its images,
/// side by side. Each strategy runs in a child process of its own (this command re-invoked with `--strategy`), so
/// peak RSS and thread counts are per strategy.
package struct ScrollBenchmark: ParsableArguments {
    /// The defaults below; `darkroom bench` parses the options into them.
    package init() {}

    static let strategies = ["naive", "background", "downsampled", "pipeline", "table"]

    @Option(help: "Folder of photos, cycled over the cells (default: ../shared/photos/jpeg-12mp).") package var photos:
        String?
    @Option(help: "Cells in the grid.") package var count: Int = 1_000
    @Option(help: "Columns (cells are 1080/columns px square on a 1080×1920 viewport).") package var columns: Int = 4
    @Option(help: "Frames per second (60 or 120).") package var fps: Int = 120
    @Option(help: "Scroll speed in rows per second.") package var speed: Double = 10
    @Option(help: "Run only this strategy, in this process (what the parent runs in each child).") package var strategy:
        String?
    @Flag(help: "Print JSON.") package var json = false
    @Option(help: "Write an SVG chart here.") package var chart: String?

    /// Checks the settings before a run.
    package func validate() throws {
        guard count > 0, columns > 0, speed > 0 else { throw BenchError("count, columns and speed must be positive") }
        guard fps == 60 || fps == 120 else { throw BenchError("--fps must be 60 or 120") }
        if let strategy, !Self.strategies.contains(strategy) {
            throw BenchError("--strategy must be one of \(Self.strategies.joined(separator: ", "))")
        }
    }

    /// Runs the benchmark and prints its report (JSON with ``json``).
    package func run() throws {
        let geometry = ScrollGeometry.phone(count: count, columns: columns)
        if let strategy {
            print(JSONLine.encode(try runOne(strategy, geometry: geometry)))
            return
        }
        var results: [[String: Any]] = []
        for name in Self.strategies {
            if !json { FileHandle.standardError.write(Data("scroll: \(name)…\n".utf8)) }
            results.append(try runChild(name))
        }
        let summary: [String: Any] = [
            "benchmark": "scroll", "count": count, "columns": columns, "fps": fps, "speed_rows_per_s": speed,
            "cell_pixels": geometry.cellPixels, "visible_rows": geometry.visibleRows, "budget_ms": 1000.0 / Double(fps),
            "photos": photoDir(), "cores": ProcessStats.activeCores, "strategies": results,
        ]
        if let chart {
            let rows = results.map { r in
                ScrollChart.Row(
                    name: r["name"] as? String ?? "?",
                    values: [
                        num(r["frames_over_budget_percent"]), num(r["frame_ms_p99"]), num(r["visible_to_shown_ms_p99"]),
                        num(r["peak_rss_bytes"]) / 1_048_576,
                    ])
            }
            let svg = ScrollChart.svg(
                title: "darkroom bench scroll: \(count) cells, \(columns) columns, \(fps) fps, \(speed) rows/s",
                panels: [
                    "frames over budget (%)", "render-thread frame p99 (ms)", "visible → shown p99 (ms)",
                    "peak RSS (MiB)",
                ],
                rows: rows, budgetMs: 1000.0 / Double(fps))
            try svg.write(toFile: chart, atomically: true, encoding: .utf8)
        }
        if json {
            print(JSONLine.encode(summary))
        } else {
            printTable(results)
        }
    }

    func photoDir() -> String {
        photos ?? (BenchPhotos.root() ?? "../shared/photos") + "/jpeg-12mp"
    }

    /// Runs `name` here and returns its JSON-ready numbers.
    func runOne(_ name: String, geometry: ScrollGeometry) throws -> [String: Any] {
        let files = BenchPhotos.files(in: photoDir())
        guard !files.isEmpty else { throw BenchError("no photos in \(photoDir())") }
        let set = PhotoSet(try files.map { try FileBytes.read($0) })
        let workers = ProcessStats.activeCores
        var scratch: String?
        let strategy: any ScrollStrategy
        switch name {
        case "naive": strategy = NaiveStrategy(photos: set)
        case "background": strategy = BackgroundStrategy(photos: set, cellPixels: nil, workers: workers)
        case "downsampled":
            strategy = BackgroundStrategy(photos: set, cellPixels: geometry.cellPixels, workers: workers)
        case "pipeline": strategy = PipelineStrategy(photos: set, geometry: geometry, maxConcurrent: workers)
        default:
            let dir = NSTemporaryDirectory() + "/darkroom-bench-scroll-\(getpid())"
            try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
            scratch = dir
            strategy = try TableStrategy(
                photos: set, geometry: geometry, path: dir + "/scroll.table", clock: MonotonicClock.seconds)
        }
        defer { if let scratch { try? FileManager.default.removeItem(atPath: scratch) } }
        let rssBefore = ProcessStats.currentRSSBytes
        PixelMemory.resetPeak()
        let decodedBase = PixelMemory.currentBytes
        var peakThreads = Self.threadCount()
        var simulator = ScrollSimulator(
            geometry: geometry, fps: Double(fps), speed: speed, clock: MonotonicClock.seconds)
        simulator.sample = { peakThreads = max(peakThreads, Self.threadCount()) }
        var result = simulator.run(strategy)
        result.peakDecodedBytes = PixelMemory.peakBytes - decodedBase
        result.peakThreads = peakThreads
        if let table = strategy as? TableStrategy { result.extra["table_build_seconds"] = table.buildSeconds }
        var d = result.dictionary()
        d["peak_rss_bytes"] = ProcessStats.peakRSSBytes
        d["rss_before_scroll_bytes"] = rssBefore
        return d
    }

    /// Re-invokes this executable with `--strategy name --json` and parses its line.
    func runChild(_ name: String) throws -> [String: Any] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        process.arguments = [
            "bench", "scroll", "--strategy", name, "--json", "--photos", photoDir(), "--count", "\(count)",
            "--columns", "\(columns)", "--fps", "\(fps)", "--speed", "\(speed)",
        ]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0,
            let object = try JSONSerialization.jsonObject(with: data) as? [String: Any]
        else {
            throw BenchError("strategy \(name) failed (status \(process.terminationStatus))")
        }
        return object
    }

    /// Threads in this process now (/proc/self/task).
    static func threadCount() -> Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task").count) ?? 0
    }

    func printTable(_ results: [[String: Any]]) {
        let budget = 1000.0 / Double(fps)
        print(
            String(
                format: "%ld cells, %ld columns (%ld px cells), %ld fps (budget %.2f ms), %.1f rows/s, photos %@",
                count, columns, 1080 / columns, fps, budget, speed, photoDir()))
        let header = [
            "strategy", "frames", "over", "over %", "p50 ms", "p99 ms", "max ms", "shown p50", "shown p99",
            "bound", "blank", "never", "peak RSS MiB", "decoded MiB", "threads",
        ]
        print(header.map { $0.padding(toLength: max(8, $0.count), withPad: " ", startingAt: 0) }.joined(separator: " "))
        for r in results {
            let cells: [String] = [
                r["name"] as? String ?? "?", "\(Int(num(r["frames"])))", "\(Int(num(r["frames_over_budget"])))",
                String(format: "%.1f", num(r["frames_over_budget_percent"])),
                String(format: "%.2f", num(r["frame_ms_p50"])),
                String(format: "%.2f", num(r["frame_ms_p99"])), String(format: "%.1f", num(r["frame_ms_max"])),
                String(format: "%.1f", num(r["visible_to_shown_ms_p50"])),
                String(format: "%.1f", num(r["visible_to_shown_ms_p99"])),
                "\(Int(num(r["cells_bound"])))", "\(Int(num(r["cells_shown_blank"])))",
                "\(Int(num(r["cells_never_shown"])))",
                String(format: "%.0f", num(r["peak_rss_bytes"]) / 1_048_576),
                String(format: "%.0f", num(r["peak_decoded_bytes"]) / 1_048_576),
                "\(Int(num(r["peak_threads"])))",
            ]
            print(
                zip(cells, header).map { $0.padding(toLength: max(8, $1.count), withPad: " ", startingAt: 0) }.joined(
                    separator: " "))
        }
    }
}

/// A JSON number as a Double (0 if absent).
private func num(_ value: Any?) -> Double {
    (value as? NSNumber)?.doubleValue ?? 0
}
