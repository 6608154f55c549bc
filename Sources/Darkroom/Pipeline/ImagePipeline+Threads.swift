import DarkroomImage
import DarkroomSupport
import FoundationEssentials

extension ImagePipeline {
    /// The pipeline's two pools of threads, for work a caller must not run on Swift's cooperative pool.
    package enum Stage: Sendable {
        /// Disk and file reads and writes (``Configuration/ioLimit`` threads).
        case io
        /// Decoding, processing and encoding (``Configuration/processingLimit`` threads).
        case cpu
    }

    /// Queues `work` on one of the pipeline's own threads without waiting for it: work whose result nobody awaits
    /// (a cache write after the answer has gone). Cost: one enqueue.
    package func performDetached(
        on stage: Stage, priority: ImageRequest.Priority = .normal, _ work: @escaping @Sendable () -> Void
    ) {
        (stage == .io ? context.ioQueue : context.decodeQueue).enqueue(priority: priority.queueLevel) { _ in work() }
    }

    /// Runs `work` on one of the pipeline's own threads and returns its result, so blocking work (an encode, a
    /// SQLite read, a file probe) never occupies a cooperative-pool thread.
    ///
    /// Cost: one enqueue and one continuation resume (a few microseconds) plus the wait for a free thread at
    /// `priority`. Cancelling the calling task while `work` is still queued removes it (it never runs) and throws
    /// `CancellationError`; once started, `work` runs to the end.
    package func perform<T: Sendable>(
        on stage: Stage, priority: ImageRequest.Priority = .normal,
        _ work: @escaping @Sendable () throws -> T
    ) async throws -> T {
        let queue = stage == .io ? context.ioQueue : context.decodeQueue
        let resumed = Locked<CheckedContinuation<T, any Error>?>(nil)
        let item = Locked<WorkQueue.Item?>(nil)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
                resumed.withLock { $0 = continuation }
                let queued = queue.enqueue(priority: priority.queueLevel) { _ in
                    let result = Result { try work() }
                    resumed.withLock { $0.take() }?.resume(with: result)
                }
                item.withLock { $0 = queued }
            }
        } onCancel: {
            guard item.withLock({ $0 })?.cancel() == true else { return }
            resumed.withLock { $0.take() }?.resume(throwing: CancellationError())
        }
    }

    /// Whether this pipeline reads the remote `url` by ranges (a video by its name, ranges on, a video decoder):
    /// the rule its fetch and probe follow, for callers that must not read such a source whole.
    package func readsByRanges(_ url: URL) -> Bool { RemoteRanges.applies(to: url, configuration) }

    /// The header of `request`'s source: read from the file on an I/O thread (a few kilobytes, no decode), or, for
    /// a remote source, from its bytes fetched through the pipeline (shared with any fetch in flight and kept in
    /// the disk cache for the render that follows); a remote video (``Configuration/videoRangeBytes``) from the
    /// ranges its container's header needs, on an I/O thread, not shared. With `colorProfile`, the embedded profile and an animation's timing
    /// are read too (for a file, that reads the whole file), and the ThumbHash placeholder is computed from the
    /// smallest decode on a processing thread (a few milliseconds for a 12 MP JPEG; nil when the image cannot be
    /// decoded). Limits are the pipeline's decode limits.
    package func probe(_ request: ImageRequest, colorProfile: Bool = false) async throws -> ImageProbe {
        let limits = configuration.decodeOptions.limits
        let decoder = configuration.decoder
        let filePath: String? =
            switch request.source {
            case .file(let path): path
            case .url(let url) where url.isFileURL: url.path
            default: nil
            }
        if let filePath {
            let (probe, bytes) = try await probeFile(
                filePath, limits: limits, colorProfile: colorProfile, priority: request.priority)
            guard let bytes else { return probe }
            var detailed = probe
            detailed.thumbHash = try? await perform(on: .cpu, priority: request.priority) {
                try bytes.withUnsafeBytes { try ThumbHash.compute($0, limits: limits) }
            }
            return detailed
        }
        // A remote video is probed by ranges: its container's header, not the whole file
        if case .url(let url) = request.source, !url.isFileURL, readsByRanges(url) {
            let first = try await configuration.dataLoader.loadData(RemoteRanges.firstRequest(url, configuration)) {
                _ in
            }
            context.counters.add(.networkFetches)
            if let ranges = RemoteRanges.make(url, first: first, configuration, counters: context.counters) {
                return try await perform(on: .io, priority: request.priority) {
                    do throws(DarkroomImageError) {
                        return try decoder.probe(ranges: ranges, limits: limits)
                    } catch {
                        throw DarkroomError(.decodeFailed, error.message, underlying: error)
                    }
                }
            }
            // An origin that ignores ranges sent the whole file
            if first.statusCode == 200 {
                context.counters.add(.bytesFetched, first.data.count)
                return try await perform(on: .cpu, priority: request.priority) {
                    try first.data.withUnsafeBytes { try Self.probeBytes($0, decoder: decoder, limits: limits) }
                }
            }
        }
        var dataRequest = request
        dataRequest.options.insert(.returnData)
        let bytes = try await image(for: dataRequest).data ?? []
        return try await perform(on: .cpu, priority: request.priority) {
            try bytes.withUnsafeBytes { raw in
                var probe = try Self.probeBytes(raw, decoder: decoder, limits: limits)
                if colorProfile {
                    probe.colorProfile = ImageProber.colorProfile(of: raw, limits: limits)
                    probe.gainMap = ImageProber.gainMap(of: raw, limits: limits)
                    if probe.frameCount > 1 { probe.animation = try? ImageProber.animationInfo(raw, limits: limits) }
                    probe.thumbHash = try? ThumbHash.compute(raw, limits: limits)
                }
                return probe
            }
        }
    }

    private func probeFile(
        _ path: String, limits: DecodeLimits, colorProfile: Bool,
        priority: ImageRequest.Priority
    ) async throws -> (ImageProbe, [UInt8]?) {
        let decoder = configuration.decoder
        return try await perform(on: .io, priority: priority) {
            do throws(DarkroomImageError) {
                var probe = try decoder.probe(fileAt: path, limits: limits)
                // A video's header is all there is to read (it is not read whole)
                guard colorProfile, probe.format != .video else { return (probe, nil) }
                let bytes = try FileBytes.read(path, limit: limits.maxInputBytes)
                bytes.withUnsafeBytes { raw in
                    probe.colorProfile = ImageProber.colorProfile(of: raw, limits: limits)
                    probe.gainMap = ImageProber.gainMap(of: raw, limits: limits)
                }
                if probe.frameCount > 1 { probe.animation = try EncodedAnimation(bytes, limits: limits).info }
                return (probe, bytes)
            } catch {
                let code: DarkroomError.Code =
                    switch error.code {
                    case .notFound: .notFound
                    case .io: .fileIO
                    default: .decodeFailed
                    }
                throw DarkroomError(code, error.message, underlying: error)
            }
        }
    }

    private static func probeBytes(_ raw: UnsafeRawBufferPointer, decoder: ImageDecoder, limits: DecodeLimits)
        throws(DarkroomError) -> ImageProbe
    {
        do throws(DarkroomImageError) {
            return try decoder.probe(raw, limits: limits)
        } catch {
            throw DarkroomError(.decodeFailed, error.message, underlying: error)
        }
    }
}
