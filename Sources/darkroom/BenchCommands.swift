import ArgumentParser
import DarkroomBenchKit

/// `darkroom bench cache`: the memory cache against NSCache and a Dictionary behind a Mutex (1 and 2 threads), and
/// the disk cache against one file per key (how SDWebImage, Kingfisher and Nuke store), side by side in one run.
///
/// Fairness: on the disk side neither store fsyncs a value of ≤ 20 KiB per write — the disk cache commits to its
/// SQLite WAL with `synchronous=NORMAL` (fsync at checkpoints only), one file per key writes a temporary file and
/// renames it (`Data.write(options: .atomic)`). Both survive `kill -9`; neither makes each write power-loss durable.
/// Larger values: the disk cache fsyncs each value file before renaming it (its crash guarantee needs it); one
/// file per key is measured both without fsync (as those libraries do) and with (`files_fsync_*`). Reads of both
/// come from the page cache (values just written); the disk cache also verifies size and XXH64 on every read.
struct BenchCacheCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cache",
        abstract: "Memory and disk cache speed against NSCache, a locked Dictionary and one file per key.")

    @Option(help: "Memory-cache operations per thread per measurement.") var memoryOps: Int = 1_000_000
    @Option(help: "Repetitions of each measurement (the median is reported).") var repeats: Int = 5
    @Option(help: "Scratch directory for the disk measurements (default: a fresh one under the temporary directory).")
    var dir: String?
    @Flag(help: "Also measure write/read speed of inline vs file storage per size (the inline-threshold sweep).")
    var thresholdSweep = false
    @Option(help: "Disk value sizes to measure, comma-separated (2k, 20k, 100k, 1m; default: all).") var diskSizes:
        String?
    @Flag(help: "Print JSON.") var json = false

    private var benchmark: CacheBenchmark {
        var b = CacheBenchmark()
        b.memoryOps = memoryOps
        b.repeats = repeats
        b.dir = dir
        b.thresholdSweep = thresholdSweep
        b.diskSizes = diskSizes?.split(separator: ",").map(String.init) ?? []
        b.json = json
        return b
    }

    func run() throws { try benchmark.run() }
}

/// `darkroom bench decode`: Darkroom's decoders against libjpeg-turbo's own TurboJPEG API on the same bytes,
/// interleaved in one run, plus PNG/WebP thumbnails, peak decoded bytes and the shrink-on-load quality rule.
struct BenchDecodeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "decode", abstract: "Decode speed and memory against libjpeg-turbo's own decode (the floor).")

    @Option(help: "Folder of 12 MP JPEGs (default: ../shared/photos/jpeg-12mp).") var photos: String?
    @Option(help: "Timed iterations per file and variant (the median is reported).") var iterations: Int = 7
    @Option(help: "Thumbnail size for the shrink-on-load measurements.") var size: Int = 256
    @Flag(help: "Print JSON.") var json = false

    private var benchmark: DecodeBenchmark {
        var b = DecodeBenchmark()
        b.photos = photos
        b.iterations = iterations
        b.size = size
        b.json = json
        return b
    }

    func run() throws { try benchmark.run() }
}

/// `darkroom bench pipeline`: the synchronous memory-hit path (key hashing included), and what the pipeline's
/// machinery costs per request over decoding directly on a thread pool.
struct BenchPipelineCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pipeline", abstract: "Memory-hit latency and per-request pipeline overhead over direct decodes.")

    @Option(help: "Folder of JPEGs to decode (default: ../shared/photos/jpeg).") var photos: String?
    @Option(help: "Thumbnail size.") var size: Int = 256
    @Option(help: "Requests per decode round (distinct images, cycled).") var requests: Int = 64
    @Flag(help: "Print JSON.") var json = false

    private var benchmark: PipelineBenchmark {
        var b = PipelineBenchmark()
        b.photos = photos
        b.size = size
        b.requests = requests
        b.json = json
        return b
    }

    func run() throws { try benchmark.run() }
}

/// `darkroom bench scroll`: a simulated photo grid scrolled in real time with five ways of getting its images,
/// side by side. Each strategy runs in a child process of its own (this command re-invoked with `--strategy`), so
/// peak RSS and thread counts are per strategy.
struct BenchScrollCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scroll",
        abstract: "Frame-budget scroll simulation: naive, background, downsampled, pipeline, table.")

    @Option(help: "Folder of photos, cycled over the cells (default: ../shared/photos/jpeg-12mp).") var photos: String?
    @Option(help: "Cells in the grid.") var count: Int = 1_000
    @Option(help: "Columns (cells are 1080/columns px square on a 1080×1920 viewport).") var columns: Int = 4
    @Option(help: "Frames per second (60 or 120).") var fps: Int = 120
    @Option(help: "Scroll speed in rows per second.") var speed: Double = 10
    @Option(help: "Run only this strategy, in this process (what the parent runs in each child).") var strategy: String?
    @Flag(help: "Print JSON.") var json = false
    @Option(help: "Write an SVG chart here.") var chart: String?

    private var benchmark: ScrollBenchmark {
        var b = ScrollBenchmark()
        b.photos = photos
        b.count = count
        b.columns = columns
        b.fps = fps
        b.speed = speed
        b.strategy = strategy
        b.json = json
        b.chart = chart
        return b
    }

    func validate() throws { try benchmark.validate() }

    func run() throws { try benchmark.run() }
}

/// `darkroom bench table`: a hot 256×256 BGRA table entry against decoding the same thumbnail from JPEG, PNG and
/// WebP and against `read()` + copy of its raw pixels from one file per thumbnail; the same reads with a cold page
/// cache; and a sequential scroll over every entry of a large table. One run, side by side.
struct BenchTableCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "table",
        abstract: "Table entries against thumbnail decodes and raw-file reads (hot, cold, scroll).")

    @Option(help: "Entries in the table (the scroll goes over all of them).") var entries: Int = 10_000
    @Option(help: "Raw pixel files, one per thumbnail, for the read()+copy comparison.") var files: Int = 1_000
    @Option(help: "Calls per timed batch of entry gets.") var gets: Int = 200_000
    @Option(help: "Decodes per timed batch of thumbnail decodes.") var decodes: Int = 200
    @Option(help: "Timed batches (medians are reported; gets, decodes and reads alternate).") var batches: Int = 5
    @Option(help: "Random entries read per cold-cache measurement.") var coldReads: Int = 300
    @Option(help: "Scratch folder (default: a new folder in the temporary directory; removed afterwards).") var dir:
        String?
    @Flag(help: "Print JSON.") var json = false

    private var benchmark: TableBenchmark {
        var b = TableBenchmark()
        b.entries = entries
        b.files = files
        b.gets = gets
        b.decodes = decodes
        b.batches = batches
        b.coldReads = coldReads
        b.dir = dir
        b.json = json
        return b
    }

    func validate() throws { try benchmark.validate() }

    func run() throws { try benchmark.run() }
}

/// `darkroom bench animation`: a 60 fps render loop over many animated thumbnails sharing one frame budget.
struct BenchAnimationCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "animation",
        abstract: "Play many animated thumbnails at once in a real-time loop; count late and skipped frames.")

    @Option(help: "Folder of animations, cycled over the players (default: ../shared/photos/animated).")
    var photos: String?
    @Option(help: "Players at once.") var players: Int = 20
    @Option(help: "Frame budget shared by all players, in MiB.") var budgetMb: Int = 16
    @Option(help: "Render-loop rate.") var fps: Int = 60
    @Option(help: "Seconds to play.") var seconds: Double = 10
    @Option(help: "Thumbnail size (longest side).") var size: Int = 128
    @Flag(help: "Print JSON.") var json = false

    func validate() throws {
        guard players > 0, budgetMb > 0, fps > 0, seconds > 0, size > 0 else {
            throw ValidationError("--players, --budget-mb, --fps, --seconds and --size must be positive")
        }
    }

    private var benchmark: AnimationBenchmark {
        var b = AnimationBenchmark()
        b.photos = photos
        b.players = players
        b.budgetBytes = budgetMb << 20
        b.fps = fps
        b.seconds = seconds
        b.size = size
        b.json = json
        return b
    }

    func run() throws { try benchmark.run() }
}

struct BenchSmartCropCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "smartcrop",
        abstract: "Where the smart crop lands on each photo (source pixels), and its cost on 12 MP thumbnails.")

    @Option(name: .customLong("folder"), help: "A folder of photos (repeatable; default: the sample set's).")
    var folders: [String] = []
    @Option(help: "Box width.") var width = 256
    @Option(help: "Box height.") var height = 256
    @Option(help: "Rounds of the rate comparison.") var rounds = 5
    @Flag(help: "Print JSON.") var json = false

    func validate() throws {
        guard width > 0, height > 0, rounds >= 0 else { throw ValidationError("sizes must be positive") }
    }

    func run() throws {
        var b = SmartCropBenchmark()
        b.folders = folders
        b.width = width
        b.height = height
        b.rounds = rounds
        b.json = json
        try b.run()
    }
}
