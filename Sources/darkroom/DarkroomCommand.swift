import ArgumentParser

/// The `darkroom` command-line tool.
@main
struct DarkroomCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "darkroom",
        abstract: "Fast, memory-lean image decoding and thumbnailing.",
        subcommands: [
            ProbeCommand.self, ThumbCommand.self, BenchCommand.self, CacheCommand.self, TableCommand.self,
            FetchCommand.self, ServeCommand.self, SignCommand.self,
        ])
}
