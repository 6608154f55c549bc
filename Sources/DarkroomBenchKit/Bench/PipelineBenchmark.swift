import ArgumentParser
import Darkroom
import DarkroomCache
import DarkroomImage
import DarkroomSupport
import Foundation
import Synchronization

/// `darkroom bench pipeline`: the synchronous memory-hit path (key hashing included), and what the pipeline's
/// machinery costs per request over decoding directly on a thread pool.
package struct PipelineBenchmark: ParsableArguments {
    /// The defaults below; `darkroom bench` parses the options into them.
    package init() {}

    @Option(help: "Folder of JPEGs to decode (default: ../shared/photos/jpeg).") package var photos: String?
    @Option(help: "Thumbnail size.") package var size: Int = 256
    @Option(help: "Requests per decode round (distinct images, cycled).") package var requests: Int = 64
    @Flag(help: "Print JSON.") package var json = false

    /// Runs the benchmark and prints its report (JSON with ``json``).
    package func run() throws {
        var results: [String: Any] = ["benchmark": "pipeline", "size": size]

        // 1. Memory hits: median ns per `cachedImage(for:)` over 9 × 200,000 calls, per cache and key shape.
        let bitmap = try Bitmap(width: size, height: size, format: .bgra8Premultiplied)
        let url = URL(string: "https://images.example.com/photos/2026/11/21/eveningglow-4032x3024.jpg")!
        let plain = ImageRequest(url: url, size: .maxPixelSize(size))
        let processed = ImageRequest(
            url: url, size: .maxPixelSize(size),
            processors: [
                ImageProcessors.Crop(x: 0, y: 0, width: 128, height: 128), ImageProcessors.RoundedCorners(radius: 12),
            ])
        for (name, cache) in PipelineBenchmark.caches() {
            let pipeline = ImagePipeline(configuration: .init(imageCache: cache))
            for (shape, request) in [("plain", plain), ("two_processors", processed)] {
                pipeline.storeCachedImage(ImageContainer(bitmap: bitmap), for: request)
                results["memory_hit_ns_\(name)_\(shape)"] = Self.hitNanoseconds(pipeline, request)
            }
            results["memory_hit_ns_\(name)_threads2"] = Self.hitNanosecondsTwoThreads(pipeline, plain)
        }

        // 2. Pipeline vs direct: the same thumbnails through `image(for:)` (in-memory sources, no caches) and
        //    through ImageDecoder on a fixed pool of the same size.
        guard let root = BenchPhotos.root() else { throw BenchError("sample photos not found; set DARKROOM_PHOTOS") }
        let files = BenchPhotos.files(in: photos ?? root + "/jpeg").filter {
            $0.hasSuffix(".jpg") || $0.hasSuffix(".jpeg")
        }
        guard !files.isEmpty else { throw BenchError("no JPEGs found") }
        let inputs = try files.map { try FileBytes.read($0) }
        let cores = ProcessStats.activeCores
        var direct: [Double] = []
        var piped: [Double] = []
        for round in 0..<5 {
            let d = { () -> Double in
                let t0 = MonotonicClock.seconds()
                WorkQueue.run(count: requests, workers: cores) { i in
                    _ = try? ImageDecoder().decode(
                        inputs[i % inputs.count], options: DecodeOptions(size: .maxPixelSize(size)))
                }
                return MonotonicClock.seconds() - t0
            }
            let p = { () -> Double in
                let pipeline = ImagePipeline(configuration: .init())
                let reqs = (0..<requests).map { i in
                    ImageRequest(
                        source: .data(id: "\(round)-\(i)", bytes: inputs[i % inputs.count]), size: .maxPixelSize(size))
                }
                let t0 = MonotonicClock.seconds()
                _ = FetchRunner.run(reqs, pipeline: pipeline, concurrency: requests) { _, _ in }
                return MonotonicClock.seconds() - t0
            }
            if round % 2 == 0 {
                direct.append(d())
                piped.append(p())
            } else {
                piped.append(p())
                direct.append(d())
            }
        }
        // 3. Per-request overhead where decoding is nearly free: 4,000 requests for a 16×16 PNG.
        let tiny = try ImageEncoder.encode(try Bitmap(width: 16, height: 16, format: .bgra8Premultiplied), as: .png)
        let tinyCount = 4_000
        var tinyDirect: [Double] = []
        var tinyPiped: [Double] = []
        for round in 0..<5 {
            let t0 = MonotonicClock.seconds()
            WorkQueue.run(count: tinyCount, workers: cores) { _ in _ = try? ImageDecoder().decode(tiny) }
            tinyDirect.append(MonotonicClock.seconds() - t0)
            let pipeline = ImagePipeline(configuration: .init())
            let reqs = (0..<tinyCount).map { ImageRequest(source: .data(id: "t\(round)-\($0)", bytes: tiny)) }
            let t1 = MonotonicClock.seconds()
            _ = FetchRunner.run(reqs, pipeline: pipeline, concurrency: 64) { _, _ in }
            tinyPiped.append(MonotonicClock.seconds() - t1)
        }
        results["tiny_requests"] = tinyCount
        results["tiny_direct_us_per_request"] = median(tinyDirect) / Double(tinyCount) * 1e6
        results["tiny_pipeline_us_per_request"] = median(tinyPiped) / Double(tinyCount) * 1e6

        results["decode_requests"] = requests
        results["direct_pool_ms"] = median(direct) * 1e3
        results["pipeline_ms"] = median(piped) * 1e3
        results["pipeline_overhead_us_per_request"] = (median(piped) - median(direct)) / Double(requests) * 1e6
        results["threads"] = cores

        if json {
            print(JSONLine.encode(results))
        } else {
            for key in results.keys.sorted() { print("\(key): \(results[key]!)") }
        }
    }

    /// Median ns per hit over 9 runs of 200,000.
    static func hitNanoseconds(_ pipeline: ImagePipeline, _ request: ImageRequest) -> Double {
        var samples: [Double] = []
        for _ in 0..<9 {
            let n = 200_000
            var hits = 0
            let t0 = MonotonicClock.seconds()
            for _ in 0..<n where pipeline.cachedImage(for: request) != nil { hits += 1 }
            samples.append((MonotonicClock.seconds() - t0) / Double(n) * 1e9)
            precondition(hits == n, "expected a hit")
        }
        return median(samples)
    }

    /// Median ns per hit with two threads hitting the same key at once.
    static func hitNanosecondsTwoThreads(_ pipeline: ImagePipeline, _ request: ImageRequest) -> Double {
        var samples: [Double] = []
        for _ in 0..<5 {
            let n = 200_000
            let t0 = MonotonicClock.seconds()
            WorkQueue.run(count: 2, workers: 2) { _ in
                for _ in 0..<n { precondition(pipeline.cachedImage(for: request) != nil) }
            }
            samples.append((MonotonicClock.seconds() - t0) / Double(n) * 1e9)
        }
        return median(samples)
    }

    /// The memory caches compared.
    static func caches() -> [(String, any ImageCaching)] {
        [
            ("memory_cache", MemoryCache<ImageCacheKey, ImageContainer>()),
            ("locked_dictionary", LockedDictionaryImageCache()),
        ]
    }
}

/// Baseline for the memory-hit benchmark: a `Mutex`-guarded dictionary with no eviction.
final class LockedDictionaryImageCache: ImageCaching {
    private let images = Mutex<[ImageCacheKey: ImageContainer]>([:])
    func image(for key: ImageCacheKey) -> ImageContainer? { images.withLock { $0[key] } }
    func store(_ image: ImageContainer, for key: ImageCacheKey) { images.withLock { $0[key] = image } }
    func removeImage(for key: ImageCacheKey) { _ = images.withLock { $0.removeValue(forKey: key) } }
}
