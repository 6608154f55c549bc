import ArgumentParser
import DarkroomBenchKit

/// `darkroom bench cache`: ``CacheBenchmark`` (where its measurement and options are described).
struct BenchCacheCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cache",
        abstract: "Memory and disk cache speed against NSCache, a locked Dictionary and one file per key.")

    @OptionGroup var benchmark: CacheBenchmark

    func run() throws { try benchmark.run() }
}

/// `darkroom bench decode`: ``DecodeBenchmark`` (where its measurement and options are described).
struct BenchDecodeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "decode", abstract: "Decode speed and memory against libjpeg-turbo's own decode (the floor).")

    @OptionGroup var benchmark: DecodeBenchmark

    func run() throws { try benchmark.run() }
}

/// `darkroom bench pipeline`: ``PipelineBenchmark`` (where its measurement and options are described).
struct BenchPipelineCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pipeline", abstract: "Memory-hit latency and per-request pipeline overhead over direct decodes.")

    @OptionGroup var benchmark: PipelineBenchmark

    func run() throws { try benchmark.run() }
}

/// `darkroom bench scroll`: ``ScrollBenchmark`` (where its measurement and options are described).
struct BenchScrollCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scroll",
        abstract: "Frame-budget scroll simulation: naive, background, downsampled, pipeline, table.")

    @OptionGroup var benchmark: ScrollBenchmark

    func run() throws { try benchmark.run() }
}

/// `darkroom bench table`: ``TableBenchmark`` (where its measurement and options are described).
struct BenchTableCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "table",
        abstract: "Table entries against thumbnail decodes and raw-file reads (hot, cold, scroll).")

    @OptionGroup var benchmark: TableBenchmark

    func run() throws { try benchmark.run() }
}

/// `darkroom bench animation`: ``AnimationBenchmark`` (where its measurement and options are described).
struct BenchAnimationCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "animation",
        abstract: "Play many animated thumbnails at once in a real-time loop; count late and skipped frames.")

    @OptionGroup var benchmark: AnimationBenchmark

    func run() throws { try benchmark.run() }
}

/// `darkroom bench smartcrop`: ``SmartCropBenchmark`` (where its measurement and options are described).
struct BenchSmartCropCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "smartcrop",
        abstract: "Where the smart crop lands on each photo (source pixels), and its cost on 12 MP thumbnails.")

    @OptionGroup var benchmark: SmartCropBenchmark

    func run() throws { try benchmark.run() }
}
