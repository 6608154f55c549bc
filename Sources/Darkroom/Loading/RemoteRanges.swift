import DarkroomImage
import DarkroomSupport
import Dispatch
import Foundation

/// A remote file read by HTTP byte ranges through the pipeline's loader, where it lies: what a video's decoder
/// reads instead of fetching the whole file (its header, then the frames one thumbnail needs).
///
/// Reads go by aligned blocks of ``blockBytes`` (a decoder's many small reads become few requests); the last few
/// blocks are kept. Each block is one `Range` request that blocks the calling thread (a pipeline decode thread,
/// never Swift's cooperative pool) for at most ``timeout`` seconds; the blocks fetched in all are held to
/// ``maxBytes``. Thread-safe (the block cache is `Locked`), though a decode reads from one thread.
final class RemoteRanges: ByteRangeReading {
    let size: Int64
    let name: String
    let blockBytes: Int
    let maxBytes: Int64
    let timeout: Double
    private let url: URL
    private let loader: any DataLoading
    private let counters: PipelineCounters
    private let state: Locked<State>

    private struct State {
        /// Blocks by index, the most recently used last in `order`.
        var blocks: [Int64: [UInt8]] = [:]
        var order: [Int64] = []
        var fetched: Int64 = 0
    }

    /// How many blocks are kept (an MP4's header at its end, the frames' data at its start, the next ones).
    static let keptBlocks = 4

    /// A reader of the `size` bytes at `url`, whose block 0 (the first `first.count` bytes, fetched to learn the
    /// size) is already here.
    init(
        url: URL, size: Int64, first: [UInt8], loader: any DataLoading, blockBytes: Int, maxBytes: Int64,
        timeout: Double, counters: PipelineCounters
    ) {
        self.url = url
        self.size = size
        self.name = url.absoluteString
        self.loader = loader
        self.blockBytes = max(1, blockBytes)
        self.maxBytes = maxBytes
        self.timeout = timeout
        self.counters = counters
        var initial = State()
        if first.count == min(Int64(self.blockBytes), size) {
            initial.blocks[0] = first
            initial.order = [0]
        }
        initial.fetched = Int64(first.count)
        state = Locked(initial)
    }

    /// Whether `configuration` reads `url` by ranges: a video by its name (the path's extension), when the decoder
    /// reads videos and ranges are on (``ImagePipeline/Configuration/videoRangeBytes``).
    static func applies(to url: URL, _ configuration: ImagePipeline.Configuration) -> Bool {
        let scheme = url.scheme?.lowercased() ?? ""
        return configuration.videoRangeBytes > 0 && !configuration.decoder.customDecoders.isEmpty
            && FileExtensions.isVideo(url.path)
            && (["http", "https"].contains(scheme) || configuration.loaderSchemes.contains(scheme))
    }

    /// The reader of the remote video whose first block `first` (a 206 answer to a request for the first
    /// `videoRangeBytes`) holds: its size from `Content-Range`. Nil when the answer does not give the size or its
    /// bytes are not a video's (the caller then fetches the whole file).
    static func make(
        _ url: URL, first: DataResponse, _ configuration: ImagePipeline.Configuration, counters: PipelineCounters
    ) -> RemoteRanges? {
        guard first.statusCode == 206, let range = first.headers["content-range"], let slash = range.lastIndex(of: "/"),
            let size = Int64(range[range.index(after: slash)...].trimmingCharacters(in: .whitespaces)), size > 0,
            first.data.withUnsafeBytes({ ImageProber.format(of: $0) }) == .video
        else { return nil }
        counters.add(.bytesFetched, first.data.count)
        return RemoteRanges(
            url: url, size: size, first: first.data, loader: configuration.dataLoader,
            blockBytes: configuration.videoRangeBytes, maxBytes: Int64(configuration.maxResponseBytes),
            timeout: configuration.rangeReadTimeout, counters: counters)
    }

    /// The request for the first block.
    static func firstRequest(_ url: URL, _ configuration: ImagePipeline.Configuration) -> DataRequest {
        DataRequest(url: url, headers: [("Range", "bytes=0-\(configuration.videoRangeBytes - 1)")])
    }

    func read(at offset: Int64, count: Int) throws(DarkroomImageError) -> [UInt8] {
        guard offset >= 0, offset < size, count > 0 else { return [] }
        let end = min(size, offset + Int64(count))
        var out: [UInt8] = []
        out.reserveCapacity(Int(end - offset))
        var position = offset
        while position < end {
            let index = position / Int64(blockBytes)
            let block = try self.block(index)
            let start = Int(position - index * Int64(blockBytes))
            let take = min(block.count - start, Int(end - position))
            guard take > 0 else { break }
            out += block[start..<(start + take)]
            position += Int64(take)
        }
        return out
    }

    /// Block `index`, from the kept ones or one range request.
    private func block(_ index: Int64) throws(DarkroomImageError) -> [UInt8] {
        let lower = index * Int64(blockBytes)
        let upper = min(size, lower + Int64(blockBytes))
        let kept = state.withLock { s -> [UInt8]? in
            guard let block = s.blocks[index] else { return nil }
            s.order.removeAll { $0 == index }
            s.order.append(index)
            return block
        }
        if let kept { return kept }
        let over = state.withLock { s -> Bool in
            guard s.fetched + (upper - lower) <= maxBytes else { return true }
            s.fetched += upper - lower
            return false
        }
        guard !over else {
            throw DarkroomImageError(
                .limitExceeded,
                "reading \(name) by ranges would fetch more than \(maxBytes) bytes (the pipeline's maxResponseBytes)")
        }
        let request = DataRequest(url: url, headers: [("Range", "bytes=\(lower)-\(upper - 1)")])
        let response = try fetch(request)
        // A server that answers the whole file (200) is cut to the block asked for
        let body: ArraySlice<UInt8>
        if response.statusCode == 206 {
            body = response.data[...]
        } else if response.statusCode == 200, Int64(response.data.count) == size {
            body = response.data[Int(lower)..<Int(upper)]
        } else {
            throw DarkroomImageError(
                .io, "\(name) answered bytes \(lower)-\(upper - 1) with status \(response.statusCode)")
        }
        guard Int64(body.count) == upper - lower else {
            throw DarkroomImageError(
                .truncated, "\(name) gave \(body.count) bytes for the range \(lower)-\(upper - 1) (the file changed?)")
        }
        counters.add(.bytesFetched, body.count)
        let block = Array(body)
        state.withLock { s in
            s.blocks[index] = block
            s.order.append(index)
            while s.order.count > Self.keptBlocks { s.blocks[s.order.removeFirst()] = nil }
        }
        return block
    }

    /// One request through the loader, waited for on this thread for at most ``timeout`` seconds.
    private func fetch(_ request: DataRequest) throws(DarkroomImageError) -> DataResponse {
        counters.add(.networkFetches)
        let result = Locked<Result<DataResponse, DarkroomError>?>(nil)
        let done = DispatchSemaphore(value: 0)
        let loader = loader
        let task = Task {
            do throws(DarkroomError) {
                let response = try await loader.loadData(request) { _ in }
                result.withLock { $0 = .success(response) }
            } catch {
                result.withLock { $0 = .failure(error) }
            }
            done.signal()
        }
        guard done.wait(timeout: .now() + timeout) == .success else {
            task.cancel()
            throw DarkroomImageError(.io, "\(name) did not answer a range within \(timeout) s")
        }
        switch result.withLock({ $0 }) {
        case .success(let response)?: return response
        case .failure(let error)?:
            throw DarkroomImageError(.io, "\(name): a range could not be read: \(error.message)", underlying: error)
        case nil: throw DarkroomImageError(.io, "\(name): a range could not be read")
        }
    }
}
