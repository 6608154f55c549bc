import DarkroomCache
import DarkroomImage
import DarkroomSupport
import DarkroomTestSupport
import Foundation
import Synchronization

@testable import Darkroom

/// Small synthetic images and in-memory cache doubles for pipeline tests.
enum TestImages {
    /// A JPEG of `width × height` with a diagonal gradient (seeded so distinct seeds give distinct bytes).
    static func jpeg(width: Int = 64, height: Int = 48, seed: Int = 0) -> [UInt8] {
        try! ImageEncoder.encode(bitmap(width: width, height: height, seed: seed), as: .jpeg)
    }

    /// A JPEG of noise: large for its size (~100+ KB at 300×300), so slow transfers of it last long enough to cancel.
    static func noisyJPEG(width: Int = 300, height: Int = 300, seed: UInt64 = 1) -> [UInt8] {
        let b = try! Bitmap(width: width, height: height, format: .bgra8Premultiplied, isOpaque: true)
        var state = seed &* 0x9E37_79B9_7F4A_7C15 | 1
        for y in 0..<height {
            let row = b.row(y).assumingMemoryBound(to: UInt8.self)
            for x in 0..<width * 4 {
                state ^= state << 13
                state ^= state >> 7
                state ^= state << 17
                row[x] = x % 4 == 3 ? 255 : UInt8(truncatingIfNeeded: state)
            }
        }
        return try! ImageEncoder.encode(b, as: .jpeg, options: EncodeOptions(quality: 95))
    }

    /// A PNG of `width × height`.
    static func png(width: Int = 32, height: Int = 32, seed: Int = 0) -> [UInt8] {
        try! ImageEncoder.encode(bitmap(width: width, height: height, seed: seed), as: .png)
    }

    static func bitmap(width: Int, height: Int, seed: Int) -> Bitmap {
        try! TestBitmaps.seeded(width: width, height: height, seed: seed)
    }
}

/// An unbounded memory cache for tests (the real one is DarkroomCache's `MemoryCache`).
final class TestImageCache: ImageCaching {
    private let images = Locked<[ImageCacheKey: ImageContainer]>([:])
    func image(for key: ImageCacheKey) -> ImageContainer? { images.withLock { $0[key] } }
    func store(_ image: ImageContainer, for key: ImageCacheKey) { images.withLock { $0[key] = image } }
    func removeImage(for key: ImageCacheKey) { images.withLock { $0[key] = nil } }
    var count: Int { images.withLock { $0.count } }
}

/// An in-memory disk-cache double that counts reads and writes.
final class TestDataCache: DataCaching {
    private let entries = Locked<[String: CachedData]>([:])
    let reads = Atomic(0), writes = Atomic(0)
    func cachedData(forKey key: String) -> CachedData? {
        reads.add(1, ordering: .relaxed)
        return entries.withLock { $0[key] }
    }
    func storeData(_ data: [UInt8], metadata: [UInt8]?, forKey key: String) {
        writes.add(1, ordering: .relaxed)
        entries.withLock { $0[key] = CachedData(data: data, metadata: metadata) }
    }
    func removeData(forKey key: String) { entries.withLock { $0[key] = nil } }
    func keys() -> [String] { entries.withLock { Array($0.keys) } }
    func entry(_ key: String) -> CachedData? { entries.withLock { $0[key] } }
}

/// Builds a pipeline for tests: test caches, an HTTP loader with short timeouts and fast retries.
func makePipeline(
    memory: Bool = true, disk: TestDataCache? = nil, processingLimit: Int = 2,
    perHostLimit: Int = 6, networkLimit: Int = 16,
    http: (inout HTTPDataLoader.Configuration) -> Void = { _ in },
    configure: (inout ImagePipeline.Configuration) -> Void = { _ in }
) -> ImagePipeline {
    var loaderConfig = HTTPDataLoader.Configuration()
    loaderConfig.connectTimeout = 2
    loaderConfig.readTimeout = 15
    loaderConfig.totalTimeout = 30
    loaderConfig.retryBaseDelay = 0.01
    loaderConfig.retryMaxDelay = 0.05
    http(&loaderConfig)
    var config = ImagePipeline.Configuration(
        imageCache: memory ? TestImageCache() : nil, dataCache: disk,
        dataLoader: HTTPDataLoader(configuration: loaderConfig))
    config.processingLimit = processingLimit
    config.perHostLimit = perHostLimit
    config.networkLimit = networkLimit
    config.activityDebounce = 0.02
    configure(&config)
    return ImagePipeline(configuration: config)
}

/// A processor that counts how many run at once and on which threads (for pool-bound tests).
final class CountingProcessor: ImageProcessing {
    let running = Atomic(0), maxRunning = Atomic(0), calls = Atomic(0)
    let threads = Locked<Set<UInt>>([])
    let threadNames = Locked<Set<String>>([])
    let work: Double
    init(work: Double = 0) { self.work = work }
    var identifier: String { "test.counting" }
    func process(_ bitmap: Bitmap) throws -> Bitmap {
        calls.add(1, ordering: .relaxed)
        let now = running.add(1, ordering: .relaxed).newValue
        var current = maxRunning.load(ordering: .relaxed)
        while now > current {
            let (exchanged, original) = maxRunning.compareExchange(expected: current, desired: now, ordering: .relaxed)
            if exchanged { break }
            current = original
        }
        threads.withLock { _ = $0.insert(UInt(bitPattern: Int(bitPattern: pthread_self()))) }
        threadNames.withLock { _ = $0.insert(WorkQueue.currentName ?? "not a pipeline thread") }
        if work > 0 { usleep(UInt32(work * 1e6)) }
        running.subtract(1, ordering: .relaxed)
        return bitmap
    }
}

/// Runs `iterations` copies of `body` at once on threads of their own (never Swift's cooperative pool, which
/// the pipeline's own awaiting tasks need), and returns when all are done.
func onThreads(_ iterations: Int, _ body: @escaping @Sendable (Int) -> Void) async {
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
        let thread = Thread {
            DispatchQueue.concurrentPerform(iterations: iterations, execute: body)
            continuation.resume()
        }
        thread.start()
    }
}

/// A processor that holds its thread until the test opens the gate (at most 10 s), for order-dependent tests.
final class GateProcessor: ImageProcessing {
    let gate = DispatchSemaphore(value: 0)
    let calls = Atomic(0)
    var identifier: String { "test.gate" }
    func process(_ bitmap: Bitmap) throws -> Bitmap {
        calls.add(1, ordering: .relaxed)
        _ = gate.wait(timeout: .now() + 10)
        return bitmap
    }
}
