import Metrics
import Synchronization

/// Counts of what a pipeline did since it was created. Read with ``ImagePipeline/statistics``.
public struct PipelineStatistics: Sendable, Equatable, Codable {
    /// Requests received (every API call, memory hits included).
    public var requests = 0
    /// Answered by each layer.
    public var memoryHits = 0, tableHits = 0, diskProcessedHits = 0, diskOriginalHits = 0
    /// Network transfers started (a retry is not a new transfer; a revalidation is).
    public var networkFetches = 0
    /// 304 answers to revalidations.
    public var revalidated = 0
    /// Files read.
    public var fileReads = 0
    /// Decodes run (previews included).
    public var decodes = 0
    /// Processor chains run.
    public var processings = 0
    /// Requests that joined work already in flight (image, decode or fetch level).
    public var sharedRequests = 0
    /// Requests that failed (cancellations excluded).
    public var failures = 0
    /// Requests cancelled by their caller.
    public var cancellations = 0
    /// Body bytes received from the network.
    public var bytesFetched = 0
    /// Images queued to be written to an image table (written at low priority after delivery).
    public var tableWrites = 0

    /// All zero.
    public init() {}
}

/// Lock-free counters behind ``PipelineStatistics``, mirrored to swift-metrics.
final class PipelineCounters: Sendable {
    enum Name: Int, CaseIterable {
        case requests, memoryHits, tableHits, diskProcessedHits, diskOriginalHits, networkFetches, revalidated,
            fileReads, decodes, processings, sharedRequests, failures, cancellations, bytesFetched, tableWrites
    }

    // One atomic per name (Atomic is ~Copyable, so no array of them): a fixed block of 16.
    private let a0 = Atomic(0), a1 = Atomic(0), a2 = Atomic(0), a3 = Atomic(0), a4 = Atomic(0), a5 = Atomic(0),
        a6 = Atomic(0), a7 = Atomic(0), a8 = Atomic(0), a9 = Atomic(0), a10 = Atomic(0), a11 = Atomic(0),
        a12 = Atomic(0), a13 = Atomic(0), a14 = Atomic(0)
    private let metrics: [Counter]
    let decodeTimer: Metrics.Timer
    let processTimer: Metrics.Timer
    let fetchTimer: Metrics.Timer
    let queueWaitTimer: Metrics.Timer

    init(prefix: String) {
        metrics = Name.allCases.map { name in
            switch name {
            case .memoryHits: Counter(label: "\(prefix)_cache_hits", dimensions: [("layer", "memory")])
            case .tableHits: Counter(label: "\(prefix)_cache_hits", dimensions: [("layer", "table")])
            case .diskProcessedHits: Counter(label: "\(prefix)_cache_hits", dimensions: [("layer", "disk_processed")])
            case .diskOriginalHits: Counter(label: "\(prefix)_cache_hits", dimensions: [("layer", "disk_original")])
            default: Counter(label: "\(prefix)_\(name)")
            }
        }
        decodeTimer = Metrics.Timer(label: "\(prefix)_decode_duration")
        processTimer = Metrics.Timer(label: "\(prefix)_process_duration")
        fetchTimer = Metrics.Timer(label: "\(prefix)_fetch_duration")
        queueWaitTimer = Metrics.Timer(label: "\(prefix)_queue_wait_duration")
    }

    @inline(__always)
    private func atomic<R>(_ name: Name, _ body: (borrowing Atomic<Int>) -> R) -> R {
        switch name {
        case .requests: body(a0)
        case .memoryHits: body(a1)
        case .tableHits: body(a2)
        case .diskProcessedHits: body(a3)
        case .diskOriginalHits: body(a4)
        case .networkFetches: body(a5)
        case .revalidated: body(a6)
        case .fileReads: body(a7)
        case .decodes: body(a8)
        case .processings: body(a9)
        case .sharedRequests: body(a10)
        case .failures: body(a11)
        case .cancellations: body(a12)
        case .bytesFetched: body(a13)
        case .tableWrites: body(a14)
        }
    }

    @inline(__always)
    func add(_ name: Name, _ amount: Int = 1) {
        _ = atomic(name) { $0.add(amount, ordering: .relaxed) }
        metrics[name.rawValue].increment(by: amount)
    }

    func get(_ name: Name) -> Int { atomic(name) { $0.load(ordering: .relaxed) } }

    var snapshot: PipelineStatistics {
        var s = PipelineStatistics()
        s.requests = get(.requests)
        s.memoryHits = get(.memoryHits)
        s.tableHits = get(.tableHits)
        s.diskProcessedHits = get(.diskProcessedHits)
        s.diskOriginalHits = get(.diskOriginalHits)
        s.networkFetches = get(.networkFetches)
        s.revalidated = get(.revalidated)
        s.fileReads = get(.fileReads)
        s.decodes = get(.decodes)
        s.processings = get(.processings)
        s.sharedRequests = get(.sharedRequests)
        s.failures = get(.failures)
        s.cancellations = get(.cancellations)
        s.bytesFetched = get(.bytesFetched)
        s.tableWrites = get(.tableWrites)
        return s
    }
}
