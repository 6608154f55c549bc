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
            ThumbnaildCommand.self, ViewCommand.self,
        ])

    /// Sets the process's memory policy (large blocks go back to the system when freed, unless the command keeps
    /// glibc's own), then runs the command as ArgumentParser's own `main` does.
    static func main() async {
        do {
            var command = try parseAsRoot()
            if !(type(of: command) is any KeepsFreedMemory.Type) { ProcessMemory.returnLargeAllocationsToSystem() }
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

/// A command that leaves glibc's allocator its own policy (a dynamic mmap threshold: blocks freed once come from the
/// heap afterwards) instead of ``ProcessMemory/returnLargeAllocationsToSystem()``: a batch where throughput matters
/// more than peak RSS (faster, for a higher peak; docs/PERFORMANCE.md, "Desktop thumbnails").
protocol KeepsFreedMemory {}
