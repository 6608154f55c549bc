import ArgumentParser
import Darkroom
import DarkroomBenchKit
import DarkroomCache
import DarkroomImage
import DarkroomSupport
import DarkroomVideo
import Foundation
import Synchronization

/// `darkroom fetch URL|PATH... [--max-pixel-size N | --sizes N,N,...] [--out DIR] [--repeat K] [--concurrency C]
/// [--json]`: runs requests through one pipeline and reports where each answer came from and what it cost.
struct FetchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fetch",
        abstract:
            "Load images and videos (http(s) URLs or files) through one pipeline: sharing, caches, bounded decoding.")

    @Argument(help: "http(s) URLs, file URLs or file paths.") var sources: [String]
    @Option(help: "Decode so the longest side is at most N pixels.") var maxPixelSize: Int?
    @Option(help: "Request each source once per size (comma-separated max pixel sizes), e.g. 128,256,512.")
    var sizes: String?
    @Option(help: "Which page of a multi-page file (TIFF) to load, from 0; a source without it fails.")
    var page: Int = 0
    @Option(help: "Write each result here as PNG (alpha) or JPEG.") var out: String?
    @Option(name: .customLong("repeat"), help: "Issue each request K times.") var repeatCount: Int = 1
    @Option(help: "Requests in flight at once.") var concurrency: Int = 8
    @Option(help: "Most decodes at once (default: active cores).") var decodeLimit: Int?
    @OptionGroup var decoding: DecodingOptions
    @Option(help: "Disk cache directory for original and processed bytes (created if missing; default: none).")
    var diskCache: String?
    @Flag(help: "Skip the memory cache (every repeat that is not in flight at once goes to the next layer).")
    var noMemoryCache = false
    @Flag(help: "One JSON object per request; the last line is a JSON summary.") var json = false
    @Flag(
        help: """
            Progressive previews while http(s) JPEGs and interlaced PNGs download: at complete scans (progressive \
            JPEG), at a quarter, half and three quarters of the bytes (baseline JPEG), as Adam7 passes arrive \
            (interlaced PNG); reported as they come and, with --out, written as NAME-preview-N files.
            """)
    var progress = false
    @Flag(help: "With --progress, blur each preview by a radius that shrinks as more arrives (YYWebImage's style).")
    var blurPreviews = false

    func validate() throws {
        if maxPixelSize != nil && sizes != nil { throw ValidationError("use --max-pixel-size or --sizes, not both") }
        guard repeatCount >= 1, concurrency >= 1 else {
            throw ValidationError("--repeat and --concurrency must be ≥ 1")
        }
        guard page >= 0 else { throw ValidationError("--page must be 0 or more") }
        if blurPreviews && !progress { throw ValidationError("--blur-previews needs --progress") }
        if let sizes, parsedSizes(sizes) == nil {
            throw ValidationError("--sizes must be positive integers, e.g. 128,256")
        }
    }

    private func parsedSizes(_ text: String) -> [Int]? {
        let values = text.split(separator: ",").map { Int($0.trimmingCharacters(in: .whitespaces)) }
        guard !values.isEmpty, values.allSatisfy({ ($0 ?? 0) > 0 }) else { return nil }
        return values.map { $0! }
    }

    func run() throws {
        let targets: [TargetSize] =
            sizes.flatMap(parsedSizes)?.map { .maxPixelSize($0) }
            ?? [maxPixelSize.map { .maxPixelSize($0) } ?? .original]
        var requests: [ImageRequest] = []
        for source in sources {
            for size in targets {
                var request = ImageRequest(source: Self.source(source), size: size)
                request.geometry.page = page
                if progress { request.options.insert(.progressivePreviews) }
                if progress && blurPreviews { request.options.insert(.progressiveBlur) }
                requests += Array(repeating: request, count: repeatCount)
            }
        }
        if let out { try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true) }

        var config = ImagePipeline.Configuration(imageCache: noMemoryCache ? nil : FetchCommand.makeMemoryCache())
        if let diskCache {
            do {
                config.dataCache = try DiskCache(directory: diskCache)
            } catch {
                throw ValidationError("cannot open the disk cache at \(diskCache): \(error)")
            }
        }
        if let decodeLimit { config.processingLimit = max(1, decodeLimit) }
        // Videos too: a file by its decoder where it lies, a remote one by ranges; in confined workers unless
        // --in-process
        config.decoder = try decoding.decoder(workers: decodeLimit ?? ProcessStats.activeCores)
        let pipeline = ImagePipeline(configuration: config)
        let start = MonotonicClock.seconds()
        let all = requests
        var onPreview: (@Sendable (Int, ImageResponse) -> Void)?
        if progress {
            let counts = Locked<[Int: Int]>([:])
            onPreview = { index, response in
                let number = counts.withLock { counts -> Int in
                    counts[index, default: 0] += 1
                    return counts[index, default: 0]
                }
                self.reportPreview(index, number, all[index], response, elapsed: MonotonicClock.seconds() - start)
            }
        }
        let results = FetchRunner.run(all, pipeline: pipeline, concurrency: concurrency, preview: onPreview) {
            index, result in
            self.report(index, all[index], result)
        }
        let elapsed = MonotonicClock.seconds() - start
        if let out { try write(results, requests: requests, to: out) }

        let stats = pipeline.statistics
        let hitNS = FetchRunner.memoryHitNanoseconds(pipeline, requests.first { pipeline.cachedImage(for: $0) != nil })
        let summary: [String: Any] = [
            "requests": requests.count, "network_fetches": stats.networkFetches, "decodes": stats.decodes,
            "failures": results.filter { $0 == nil }.count, "file_reads": stats.fileReads,
            "memory_hits": stats.memoryHits, "disk_hits": stats.diskOriginalHits + stats.diskProcessedHits,
            "shared_requests": stats.sharedRequests, "bytes_fetched": stats.bytesFetched,
            "elapsed_s": elapsed, "peak_rss_bytes": ProcessStats.peakRSSBytes,
            "memory_hit_ns": hitNS.map { $0 as Any } ?? NSNull(),
            "concurrency": concurrency, "decode_limit": config.processingLimit,
        ]
        if json {
            print(JSONLine.encode(summary))
        } else {
            print(
                "\(requests.count) requests: \(stats.networkFetches) network fetches, \(stats.fileReads) file reads, "
                    + "\(stats.decodes) decodes, \(stats.memoryHits) memory hits, \(stats.sharedRequests) shared, "
                    + "\(summary["failures"]!) failures in \(String(format: "%.3f", elapsed)) s"
                    + (hitNS.map { String(format: "; memory hit %.0f ns", $0) } ?? ""))
        }
        if results.contains(where: { $0 == nil }) { throw ExitCode(1) }
    }

    static func source(_ text: String) -> ImageRequest.Source {
        if let url = URL(string: text), let scheme = url.scheme?.lowercased(),
            ["http", "https", "file"].contains(scheme)
        {
            return .url(url)
        }
        return .file(text)
    }

    private func report(_ index: Int, _ request: ImageRequest, _ result: Result<ImageResponse, DarkroomError>) {
        let size = request.geometry.size
        switch result {
        case .success(let r):
            let t = r.timings
            let b = r.bitmap
            if json {
                print(
                    JSONLine.encode([
                        "index": index, "source": request.source.key, "size": "\(size)", "origin": r.origin.rawValue,
                        "width": b?.width ?? 0, "height": b?.height ?? 0, "total_ms": t.total * 1e3,
                        "fetch_ms": t.fetch * 1e3,
                        "cache_read_ms": t.cacheRead * 1e3, "queue_wait_ms": t.queueWait * 1e3,
                        "decode_ms": t.decode * 1e3,
                        "process_ms": t.process * 1e3,
                    ]))
            } else {
                print(
                    String(
                        format: "%@ [%@] %@ %dx%d total %.2f ms (fetch %.2f, wait %.2f, decode %.2f, process %.2f)",
                        request.source.key, "\(size)", r.origin.rawValue, b?.width ?? 0, b?.height ?? 0,
                        t.total * 1e3, t.fetch * 1e3, t.queueWait * 1e3, t.decode * 1e3, t.process * 1e3))
            }
        case .failure(let e):
            if json {
                print(
                    JSONLine.encode([
                        "index": index, "source": request.source.key, "size": "\(size)",
                        "error": ["code": e.code.rawValue, "message": e.message],
                    ]))
            } else {
                FileHandle.standardError.write(Data("\(request.source.key): error: \(e)\n".utf8))
            }
        }
    }

    /// Reports (and with `--out` writes) the `number`th preview of request `index`.
    private func reportPreview(
        _ index: Int, _ number: Int, _ request: ImageRequest, _ response: ImageResponse, elapsed: Double
    ) {
        guard let bitmap = response.bitmap else { return }
        var written: String?
        if let out {
            let stem = Self.stem(request)
            let name = "\(stem)-\(bitmap.width)x\(bitmap.height)-preview-\(number).\(bitmap.isOpaque ? "jpg" : "png")"
            do {
                try FileBytes.writeAtomically(
                    try ImageEncoder.encode(bitmap, as: bitmap.isOpaque ? .jpeg : .png), to: out + "/" + name)
                written = name
            } catch {
                FileHandle.standardError.write(Data("\(request.source.key): cannot write preview: \(error)\n".utf8))
            }
        }
        if json {
            print(
                JSONLine.encode([
                    "index": index, "source": request.source.key, "preview": number, "width": bitmap.width,
                    "height": bitmap.height, "elapsed_ms": elapsed * 1e3, "decode_ms": response.timings.decode * 1e3,
                    "file": written.map { $0 as Any } ?? NSNull(),
                ]))
        } else {
            print(
                String(
                    format: "%@ preview %d: %dx%d at %.0f ms (decode %.2f ms)%@", request.source.key, number,
                    bitmap.width, bitmap.height, elapsed * 1e3, response.timings.decode * 1e3,
                    written.map { " → \($0)" } ?? ""))
        }
    }

    /// The name of a request's output files: its file or URL path's last component without the extension (a URL's
    /// query left out).
    private static func stem(_ request: ImageRequest) -> String {
        let key = request.source.key
        let base =
            URL(string: key).flatMap { $0.scheme == nil ? nil : $0.lastPathComponent }
            ?? (key as NSString).lastPathComponent
        let stem = (base as NSString).deletingPathExtension
        return stem.isEmpty ? "image" : stem
    }

    private func write(_ results: [ImageResponse?], requests: [ImageRequest], to dir: String) throws {
        var written = Set<String>()
        for (i, response) in results.enumerated() {
            guard let bitmap = response?.bitmap else { continue }
            let stem = Self.stem(requests[i])
            let format: ImageFileFormat = bitmap.isOpaque ? .jpeg : .png
            let name = "\(stem)-\(bitmap.width)x\(bitmap.height).\(format.fileExtension)"
            guard written.insert(name).inserted else { continue }
            try FileBytes.writeAtomically(try ImageEncoder.encode(bitmap, as: format), to: dir + "/" + name)
        }
    }
}

extension FetchCommand {
    /// The CLI's memory cache: DarkroomCache's `MemoryCache` with its default limits (1/8 of available memory).
    static func makeMemoryCache() -> (any ImageCaching)? { MemoryCache<ImageCacheKey, ImageContainer>() }
}
