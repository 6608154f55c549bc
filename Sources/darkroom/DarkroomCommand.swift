import ArgumentParser
import DarkroomSupport

/// The `darkroom` command-line tool.
@main
struct DarkroomCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "darkroom",
        abstract: "Fast, memory-lean image decoding and thumbnailing.",
        subcommands: [
            ProbeCommand.self, ThumbCommand.self, BenchCommand.self, CacheCommand.self, TableCommand.self,
            FetchCommand.self, ServeCommand.self, SignCommand.self, ThumbnailCacheCommand.self, ThumbnailerCommand.self,
            ViewCommand.self,
        ])

    /// Sets the process's memory policy (large blocks go back to the system when freed), then runs the command as
    /// ArgumentParser's own `main` does.
    static func main() async {
        ProcessMemory.returnLargeAllocationsToSystem()
        do {
            var command = try parseAsRoot()
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            exit(withError: error)
        }
    }
}
