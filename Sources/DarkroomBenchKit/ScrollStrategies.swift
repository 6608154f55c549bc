import Darkroom
import DarkroomImage
import DarkroomTables
import Foundation
import Synchronization

/// The encoded photos cells cycle through: cell `i` shows `photos[i % photos.count]`, as a distinct image
/// (every strategy does the work for every cell; none gets a free hit from a repeated photo).
public struct PhotoSet: Sendable {
    /// Encoded bytes per photo.
    public let photos: [[UInt8]]
    /// Creates the set (at least one photo).
    public init(_ photos: [[UInt8]]) {
        precondition(!photos.isEmpty, "no photos")
        self.photos = photos
    }
    /// The bytes for cell `index`.
    public func bytes(for index: Int) -> [UInt8] { photos[index % photos.count] }
}

/// `naive`: read and fully decode on the render thread when a cell is bound.
public final class NaiveStrategy: ScrollStrategy {
    public let name = "naive"
    let photos: PhotoSet
    /// Creates the strategy.
    public init(photos: PhotoSet) { self.photos = photos }
    public func bind(index: Int, slot: Int, generation: UInt64, inbox: DeliveryInbox) -> Bitmap? {
        try? ImageDecoder().decode(photos.bytes(for: index)).bitmap
    }
}

/// `background` (full decode) and `downsampled` (decode to the cell's size): decode on a background queue, post
/// the result tagged with the cell's generation; the render thread shows it only if the cell still wants it.
/// Nothing is cancelled: a job for a cell that scrolled away still runs, and its result is refused by the tag check.
public final class BackgroundStrategy: ScrollStrategy {
    public let name: String
    let photos: PhotoSet
    let options: DecodeOptions
    let queue: BackgroundQueue

    /// Full decodes (`cellPixels == nil`) or decodes to `cellPixels`² (fill) on `workers` threads.
    public init(photos: PhotoSet, cellPixels: Int?, workers: Int) {
        self.photos = photos
        self.name = cellPixels == nil ? "background" : "downsampled"
        self.options = cellPixels.map { DecodeOptions(size: .fill(width: $0, height: $0)) } ?? DecodeOptions()
        self.queue = BackgroundQueue(workers: workers)
    }

    public func bind(index: Int, slot: Int, generation: UInt64, inbox: DeliveryInbox) -> Bitmap? {
        let bytes = photos.bytes(for: index)
        let options = options
        queue.async {
            guard let image = try? ImageDecoder().decode(bytes, options: options) else { return }
            inbox.post(Delivery(slot: slot, generation: generation, bitmap: image.bitmap))
        }
        return nil
    }

    public func finish() { queue.stop() }
    public var workThreads: Int { 1 + queue.threadsUsed }
}

/// `pipeline`: `ImagePipeline` at the cell's size with its memory cache; a synchronous cache check at bind, a
/// load (cancelled when the cell leaves) otherwise, and an `ImagePrefetcher` working `prefetchScreens` ahead.
public final class PipelineStrategy: ScrollStrategy {
    public let name = "pipeline"
    let photos: PhotoSet
    let geometry: ScrollGeometry
    let pipeline: ImagePipeline
    let prefetcher: ImagePrefetcher
    let prefetchScreens: Double
    private var tasks: [Int: ImageTask] = [:]
    private var prefetched: Range<Int> = 0..<0
    private let threads = ThreadRecorder()

    /// Creates the pipeline and prefetcher (`maxConcurrent` prefetches).
    public init(photos: PhotoSet, geometry: ScrollGeometry, maxConcurrent: Int, prefetchScreens: Double = 2) {
        self.photos = photos
        self.geometry = geometry
        self.pipeline = ImagePipeline(configuration: .init())
        self.prefetcher = ImagePrefetcher(pipeline: pipeline, maxConcurrent: maxConcurrent)
        self.prefetchScreens = prefetchScreens
    }

    /// The request for cell `index` (a distinct image per cell).
    public func request(_ index: Int) -> ImageRequest {
        ImageRequest(
            source: .data(id: "cell-\(index)", bytes: photos.bytes(for: index)),
            size: .fill(width: geometry.cellPixels, height: geometry.cellPixels))
    }

    public func bind(index: Int, slot: Int, generation: UInt64, inbox: DeliveryInbox) -> Bitmap? {
        let request = request(index)
        if let hit = pipeline.cachedImage(for: request) { return hit.bitmap }
        let threads = threads
        tasks[index] = pipeline.loadImage(with: request) { result in
            threads.record()
            if case .success(let response) = result, let bitmap = response.container?.bitmap {
                inbox.post(Delivery(slot: slot, generation: generation, bitmap: bitmap))
            }
        }
        return nil
    }

    public func unbind(index: Int) { tasks.removeValue(forKey: index)?.cancel() }

    public func scrolled(visible: Range<Int>) {
        let ahead = geometry.cellsAhead(of: visible, screens: prefetchScreens)
        guard ahead != prefetched else { return }
        let behind = prefetched.lowerBound..<max(prefetched.lowerBound, min(prefetched.upperBound, visible.lowerBound))
        if !behind.isEmpty { prefetcher.stopPrefetching(with: behind.map(request)) }
        let new = max(ahead.lowerBound, prefetched.upperBound)..<ahead.upperBound
        if !new.isEmpty { prefetcher.startPrefetching(with: new.map(request)) }
        prefetched = ahead
    }

    public func finish() {
        prefetcher.stopPrefetching()
        for task in tasks.values { task.cancel() }
        tasks = [:]
    }

    public var workThreads: Int { 1 + threads.count }
}

/// `table`: thumbnails pre-built in an `ImageTable`; bind reads the entry straight from the mapping.
public final class TableStrategy: ScrollStrategy {
    public let name = "table"
    let table: ImageTable
    /// Seconds spent building the table before the scroll.
    public let buildSeconds: Double

    /// Builds a table at `path` with one entry per cell (`cell-i`), decoding each distinct photo once and copying
    /// it into every entry that shows it.
    public init(photos: PhotoSet, geometry: ScrollGeometry, path: String, clock: () -> Double) throws {
        let t0 = clock()
        let side = geometry.cellPixels
        let format = ImageTableFormat(
            name: "scroll", width: side, height: side, pixelFormat: .bgra8Premultiplied,
            maximumCount: max(1, geometry.count))
        let table = try ImageTable(path: path, format: format, options: .init(indexSaveInterval: 0))
        let options = DecodeOptions(size: .fill(width: side, height: side), pixelFormat: .exactly(.bgra8Premultiplied))
        let thumbnails = try photos.photos.map { try ImageDecoder().decode($0, options: options).bitmap }
        for i in 0..<geometry.count {
            let thumbnail = thumbnails[i % thumbnails.count]
            try table.set(entity: "cell-\(i)", source: "photo-\(i % thumbnails.count)") { _ in thumbnail }
        }
        try table.flush()
        self.table = table
        self.buildSeconds = clock() - t0
    }

    public func bind(index: Int, slot: Int, generation: UInt64, inbox: DeliveryInbox) -> Bitmap? {
        try? table.entry(for: "cell-\(index)")
    }

    public func finish() { try? table.close() }
}
