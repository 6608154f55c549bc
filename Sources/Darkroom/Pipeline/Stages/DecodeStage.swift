import CoreMetrics
import DarkroomImage
import DarkroomSupport
import Logging

/// The decode job's product: the image at the requested size, before processors.
struct DecodeOutput: Sendable {
    var container: ImageContainer
    var origin: ImageResponse.Origin
    var timings: ImageResponse.Timings
}

/// The decode stage: a source's image at the request's geometry, once per source and geometry (requests that differ
/// only in processors share it).
///
/// Waits for the fetch stage's bytes, then decodes on a processing thread at the job's priority; with progressive
/// previews, a partial JPEG is decoded at low priority as it arrives. Animated requests also get the frames' player.
final class DecodeStage: Sendable {
    let context: PipelineContext
    let fetch: FetchStage
    /// Decodes in flight, one per source and geometry.
    let jobs = JobPool<String, DecodeOutput>()

    init(context: PipelineContext, fetch: FetchStage) {
        self.context = context
        self.fetch = fetch
    }

    private var configuration: ImagePipeline.Configuration { context.configuration }
    private var counters: PipelineCounters { context.counters }
    /// Joins or starts the decode of `request`'s source at its size (shared by requests that differ only in
    /// processors).
    func subscribe(
        _ request: ImageRequest, priority: ImageRequest.Priority,
        handler: @escaping SharedJob<DecodeOutput>.Handler
    ) -> JobSubscription {
        let (subscription, joined) = jobs.subscribe(
            key: context.sharingKey(FetchStage.key(for: request) + "|" + request.cacheKey.decodeKey),
            priority: priority, handler: handler,
            start: { job in self.start(job, request: request) })
        if joined { counters.add(.sharedRequests) }
        return subscription
    }

    private func start(_ job: SharedJob<DecodeOutput>, request: ImageRequest) {
        let previews =
            request.options.contains(.progressivePreviews)
            ? PreviewThrottle(interval: configuration.progressivePreviewInterval) : nil
        // A progressive JPEG's scans are read once, as they arrive; its previews and final image are output passes.
        let stream =
            previews == nil
            ? nil
            : ProgressiveJPEGStream(
                limits: configuration.decodeOptions.limits, previewShare: configuration.progressivePreviewCPUShare)
        job.link(
            fetch.subscribe(request, priority: job.priority) { [self] event in
                switch event {
                case .progress(let c, let t):
                    job.send(.progress(completed: c, total: t))
                case .preview(let partial):
                    guard let previews, !job.isCancelled, let now = previews.offer(partial) else { return }
                    decodePreview(now, job: job, request: request, throttle: previews, stream: stream)
                case .finished(.failure(let error)):
                    job.finish(.failure(error))
                case .finished(.success(let fetched)):
                    guard !job.isCancelled else { return }
                    if request.options.contains(.embeddedThumbnailPreview), !request.options.contains(.animated) {
                        decodeEmbeddedThumbnail(fetched, job: job, request: request)
                    }
                    job.link(
                        context.decodeQueue.enqueue(priority: job.priority.queueLevel) { [self] wait in
                            guard !job.isCancelled else { return }
                            var timings = fetched.timings
                            timings.queueWait += wait
                            counters.queueWaitTimer.recordSeconds(wait)
                            let result =
                                stream.flatMap {
                                    decodeFromStream(
                                        $0, fetched.bytes, isComplete: true, for: request, timings: &timings)
                                }.map { .success($0) }
                                ?? decode(
                                    fetched.bytes, file: fetched.file, ranges: fetched.ranges, for: request,
                                    timings: &timings)
                            job.finish(
                                result.map { DecodeOutput(container: $0, origin: fetched.origin, timings: timings) })
                        })
                }
            })
    }

    /// Decodes the first part of a JPEG or PNG into a preview at the request's size, at low priority: the scans so
    /// far of a progressive JPEG (an output pass of `stream`, which reads each scan once), the rows so far of a
    /// baseline one (the rest gray), the whole passes of an interlaced PNG. Dropped if the final decode finished
    /// first or the bytes are neither; when it is done, the throttle's waiting body (if any) goes next.
    private func decodePreview(
        _ partial: FetchOutput, job: SharedJob<DecodeOutput>, request: ImageRequest, throttle: PreviewThrottle,
        stream: ProgressiveJPEGStream?
    ) {
        guard partial.bytes.starts(with: [0xFF, 0xD8]) || partial.bytes.starts(with: [0x89, 0x50, 0x4E, 0x47]) else {
            if let next = throttle.finished() {
                decodePreview(next, job: job, request: request, throttle: throttle, stream: stream)
            }
            return
        }
        job.link(
            context.decodeQueue.enqueue(priority: .low) { [self] _ in
                defer {
                    if let next = throttle.finished(), !job.isCancelled {
                        decodePreview(next, job: job, request: request, throttle: throttle, stream: stream)
                    }
                }
                guard !job.isCancelled else { return }
                var timings = ImageResponse.Timings()
                var container: ImageContainer?
                if let stream, !stream.isAbandoned, partial.bytes.starts(with: [0xFF, 0xD8]) {
                    container = decodeFromStream(
                        stream, partial.bytes, isComplete: false, expected: partial.expected, for: request,
                        timings: &timings)
                    // Nothing new to show yet; a stream that gave up (not a progressive JPEG) falls through.
                    if container == nil && !stream.isAbandoned { return }
                }
                if container == nil {
                    // Decoded again from the start, cut after its last whole scan when progressive: a cut inside
                    // the next marker segment would make libjpeg refuse the file
                    var scans = JPEGScanCounter()
                    partial.bytes.withUnsafeBytes { scans.advance($0) }
                    let bytes =
                        scans.isProgressive && scans.completeScans > 0
                        ? Array(partial.bytes[..<scans.endOfCompleteScans]) : partial.bytes
                    guard
                        case .success(let decoded) = decode(
                            bytes, for: request, timings: &timings, acceptTruncated: true)
                    else { return }
                    container = decoded
                }
                guard var preview = container else { return }
                preview.isPreview = true
                if request.options.contains(.progressiveBlur) {
                    let t0 = MonotonicClock.seconds()
                    let sigma = progressiveBlurSigma(
                        received: partial.bytes.count, expected: partial.expected, number: throttle.started)
                    guard let blurred = try? BoxBlur.blurred(preview.bitmap, sigma: sigma) else { return }
                    preview.bitmap = blurred
                    timings.decode += MonotonicClock.seconds() - t0
                }
                job.send(.preview(DecodeOutput(container: preview, origin: partial.origin, timings: timings)))
            })
    }

    /// The next image of `stream` at the request's size: a preview of the scans so far, or the final image once
    /// `isComplete`. Nil when it has nothing new to show, or gave up (not a progressive JPEG it serves, or an
    /// error: the caller then decodes the bytes directly, which reports the error as usual).
    private func decodeFromStream(
        _ stream: ProgressiveJPEGStream, _ bytes: [UInt8], isComplete: Bool, expected: Int64? = nil,
        for request: ImageRequest, timings: inout ImageResponse.Timings
    ) -> ImageContainer? {
        guard !stream.isAbandoned, !isComplete || stream.hasStarted else { return nil }
        var options = decodeOptions(for: request)
        options.acceptTruncated = !isComplete || options.acceptTruncated
        let t0 = MonotonicClock.seconds()
        let decoded = bytes.withUnsafeBytes { raw in
            try? stream.image(
                raw, isComplete: isComplete, expectedBytes: expected.map { Int(clamping: $0) }, options: options)
        }
        let elapsed = MonotonicClock.seconds() - t0
        timings.decode += elapsed
        guard let decoded else { return nil }
        counters.add(.decodes)
        counters.decodeTimer.recordSeconds(elapsed)
        return ImageContainer(bitmap: decoded.bitmap, probe: decoded.probe, colorProfile: decoded.colorProfile)
    }

    /// Decodes the file's embedded thumbnail at the request's size and sends it as a preview, on the preview lane (a
    /// thread of its own: it costs a thumbnail's pixels, so a screenful of them is done before one image, and it never
    /// waits for a full decode to finish), in its request's priority order. Nothing is sent when the file has none of
    /// the image's shape, or once the image itself is done.
    private func decodeEmbeddedThumbnail(_ fetched: FetchOutput, job: SharedJob<DecodeOutput>, request: ImageRequest) {
        job.link(
            context.previewQueue.enqueue(priority: job.priority.queueLevel) { [self] _ in
                guard !job.isCancelled else { return }
                let t0 = MonotonicClock.seconds()
                guard
                    let decoded = try? configuration.decoder.decodeEmbeddedThumbnail(
                        fetched.bytes, options: decodeOptions(for: request))
                else {
                    return
                }
                var timings = fetched.timings
                timings.decode = MonotonicClock.seconds() - t0
                var container = ImageContainer(bitmap: decoded.bitmap, probe: decoded.probe)
                container.isPreview = true
                job.send(.preview(DecodeOutput(container: container, origin: fetched.origin, timings: timings)))
            })
    }

    /// The pipeline's decode options (limits, colour) with `request`'s geometry.
    private func decodeOptions(for request: ImageRequest) -> DecodeOptions {
        var options = configuration.decodeOptions
        options.geometry = request.geometry
        return options
    }

    /// Decodes `request`'s image on the calling (pipeline-owned) thread, adding the time to `timings.decode`: from
    /// `bytes`, or from `file` when the fetch left it to the decoder (a video).
    func decode(
        _ bytes: [UInt8], file: String? = nil, ranges: (any ByteRangeReading)? = nil, for request: ImageRequest,
        timings: inout ImageResponse.Timings, acceptTruncated: Bool? = nil
    ) -> Result<ImageContainer, DarkroomError> {
        let animated = request.options.contains(.animated)
        var options = decodeOptions(for: request)
        if let acceptTruncated { options.acceptTruncated = acceptTruncated }
        let t0 = MonotonicClock.seconds()
        counters.add(.decodes)
        defer {
            let elapsed = MonotonicClock.seconds() - t0
            timings.decode += elapsed
            counters.decodeTimer.recordSeconds(elapsed)
        }
        do throws(DarkroomImageError) {
            let decoded =
                if let file {
                    try configuration.decoder.decode(fileAt: file, options: options)
                } else if let ranges {
                    try configuration.decoder.decode(ranges: ranges, options: options)
                } else {
                    try configuration.decoder.decode(bytes, options: options)
                }
            if let problem = decoded.colorProblem {
                configuration.logger.notice(
                    "colour profile ignored, image treated as sRGB", metadata: ["reason": "\(problem)"])
            }
            var container = ImageContainer(
                bitmap: decoded.bitmap, probe: decoded.probe, colorProfile: decoded.colorProfile)
            if animated && decoded.probe.frameCount > 1 {
                // The first frame is the still; the animation keeps the bytes (checked against the frame limits
                // now, so a player cannot fail on them later).
                let encoded = try EncodedAnimation(bytes, limits: options.limits)
                var animationOptions = options
                animationOptions.geometry.pixelFormat = .exactly(.bgra8Premultiplied)
                // Isolated, no animation decoder opens here: the first frame's size is the still's
                let frameBytes: Int
                if configuration.decoder.isolation == nil {
                    let frame = try AnimatedImageDecoder(encoded, options: animationOptions)
                    frameBytes = frame.outputWidth * frame.outputHeight * 4
                } else {
                    frameBytes = decoded.bitmap.width * decoded.bitmap.height * 4
                }
                container.animation = AnimatedImage(
                    encoded: encoded, options: animationOptions, bufferBudget: configuration.animationBufferBytes,
                    frameBytes: frameBytes, queue: context.decodeQueue, decoder: configuration.decoder)
            }
            return .success(container)
        } catch {
            let code: DarkroomError.Code = error.code == .unsupportedFormat ? .notAnImage : .decodeFailed
            return .failure(DarkroomError(code, "decode failed: \(error.message)", underlying: error))
        }
    }
}
