import ArgumentParser

/// `darkroom bench ...`: benchmarks that print JSON and compare side by side in one run.
struct BenchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench", abstract: "Benchmarks (side by side, one run; --json for machine-readable output).",
        subcommands: [
            BenchDecodeCommand.self, BenchCacheCommand.self, BenchTableCommand.self, BenchPipelineCommand.self,
            BenchScrollCommand.self, BenchAnimationCommand.self, BenchSmartCropCommand.self,
        ])
}
