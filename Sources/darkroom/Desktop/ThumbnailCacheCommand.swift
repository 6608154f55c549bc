import ArgumentParser
import DarkroomDesktop
import DarkroomImage
import DarkroomSupport
import Foundation

/// `darkroom thumbnail-cache fill PATH...`: the desktop's shared thumbnail cache, filled in bulk.
struct ThumbnailCacheCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "thumbnail-cache",
        abstract: "The freedesktop.org thumbnail cache (~/.cache/thumbnails) that file managers share.",
        subcommands: [Fill.self])

    /// Thumbnails every image under the paths that has no valid thumbnail yet, on a bounded pool of threads.
    struct Fill: ParsableCommand, KeepsFreedMemory {
        static let configuration = CommandConfiguration(
            abstract: "Write a thumbnail for every image under the paths that lacks a valid one.")

        @Argument(help: "Image files and folders (searched recursively).") var paths: [String]
        @Option(help: "normal (128 px), large (256), x-large (512) or xx-large (1024).") var size = "large"
        @Option(help: "The cache folder (default: $XDG_CACHE_HOME/thumbnails or ~/.cache/thumbnails).")
        var cacheDir: String?
        @Option(help: "Worker threads (default: active cores).") var jobs: Int?
        @Flag(help: "Print the summary as JSON.") var json = false
        @OptionGroup var decoding: DecodingOptions

        func validate() throws {
            guard DesktopThumbnailCache.Size(rawValue: size) != nil else {
                throw ValidationError("--size must be normal, large, x-large or xx-large")
            }
            if let jobs, jobs < 1 { throw ValidationError("--jobs must be at least 1") }
        }

        func run() throws {
            let start = MonotonicClock.seconds()
            let workers = jobs ?? ProcessStats.activeCores
            let decoder = try decoding.decoder(workers: workers)
            let size = DesktopThumbnailCache.Size(rawValue: size)!
            let cache = cacheDir.map { DesktopThumbnailCache(root: $0) } ?? DesktopThumbnailCache()
            // The plan's inputs only: the cache names its own files, so no output folder is made
            let files = try ThumbPlan(paths: paths, outputDirectory: cache.root, format: .png).jobs.map {
                URL(fileURLWithPath: $0.input).standardizedFileURL.path
            }
            let counts = Locked<[String: Int]>([:])
            // One read buffer a worker, kept across files (as `thumb` does)
            let buffers = Locked<[FileReadBuffer]>([])
            WorkQueue.run(count: files.count, workers: workers) { i in
                let buffer = buffers.withLock { $0.popLast() } ?? FileReadBuffer()
                defer { buffers.withLock { $0.append(buffer) } }
                let outcome = Self.fill(files[i], decoder: decoder, cache: cache, size: size, buffer: buffer)
                counts.withLock { $0[outcome, default: 0] += 1 }
            }
            let wall = MonotonicClock.seconds() - start
            let tally = counts.withLock { $0 }
            let summary: [String: Any] = decoder.decodingSummary.merging([
                "files": files.count, "rendered": tally["rendered"] ?? 0, "valid": tally["valid"] ?? 0,
                "failed": tally["failed"] ?? 0, "known_failures": tally["known_failure"] ?? 0, "wall_seconds": wall,
                "files_per_second": wall > 0 ? Double(files.count) / wall : 0, "cache": cache.root,
                "size": size.rawValue, "peak_rss_bytes": ProcessStats.peakRSSBytes,
            ]) { first, _ in first }
            if json {
                print(JSONLine.encode(summary))
            } else {
                print(
                    String(
                        format:
                            "%d files: %d rendered, %d already valid, %d failed (%d known), %.3f s, %.1f files/s → %@",
                        files.count, tally["rendered"] ?? 0, tally["valid"] ?? 0, tally["failed"] ?? 0,
                        tally["known_failure"] ?? 0, wall, wall > 0 ? Double(files.count) / wall : 0,
                        cache.root + "/" + size.rawValue))
            }
        }

        /// One file: `valid`, `known_failure`, `rendered`, or `failed`.
        static func fill(
            _ file: String, decoder: ImageDecoder, cache: DesktopThumbnailCache, size: DesktopThumbnailCache.Size,
            buffer: FileReadBuffer
        ) -> String {
            switch cache.render(file, size: size, decoder: decoder, buffer: buffer) {
            case .valid: "valid"
            case .knownFailure: "known_failure"
            case .rendered: "rendered"
            case .failed, .notSaved: "failed"
            }
        }
    }
}

/// `darkroom thumbnailer -s SIZE INPUT OUTPUT`: one thumbnail as a desktop thumbnailer writes it (GNOME's
/// `.thumbnailer` entries call `Exec=darkroom thumbnailer -s %s %u %o`): INPUT a path or `file://` URI, OUTPUT a
/// PNG at most SIZE px a side. Exits 1 with a message when the image cannot be read.
struct ThumbnailerCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "thumbnailer", abstract: "Write one PNG thumbnail, as the desktop's thumbnailers are called.")

    @Option(name: .short, help: "Longest side in pixels.") var s: Int = 256
    @Argument(help: "The image: a path or a file:// URI.") var input: String
    @Argument(help: "The PNG to write.") var output: String
    @OptionGroup var decoding: DecodingOptions

    func validate() throws {
        guard (1...4096).contains(s) else { throw ValidationError("-s must be 1...4096") }
    }

    func run() throws {
        var path = input
        if input.hasPrefix("file://") {
            guard let url = URL(string: input), url.isFileURL else {
                throw ValidationError("\(input) is not a file URI")
            }
            path = url.path
        }
        do {
            let image = try decoding.decoder(workers: 1).decode(
                fileAt: path, options: DecodeOptions(size: .maxPixelSize(s)))
            try FileBytes.writeAtomically(ImageEncoder.encode(image.bitmap, as: .png), to: output)
        } catch {
            FileHandle.standardError.write(Data("\(path): error: \(error)\n".utf8))
            throw ExitCode(1)
        }
    }
}
