import CDarkroomJPEG
import DarkroomSupport

/// A progressive JPEG decoded while it downloads: each scan is entropy-decoded once, as its bytes arrive (libjpeg's
/// buffered-image mode), and each image out of it is one output pass over the scans so far, at the display size.
///
/// Decoding the whole body again for every preview costs the entropy decoding of every byte so far each time;
/// here the previews cost only their output passes (IDCT, colour conversion and the resample), and the final image
/// is the last pass, equal to a direct decode's. Previews spend at most ``previewShare`` of the decode's own CPU
/// (see ``image(_:isComplete:options:)``). Memory: libjpeg's whole-image coefficient buffer (about 2 bytes a
/// sample, as any progressive decode) and the bytes not consumed yet.
///
/// Only for progressive JPEGs decoded with DCT scaling of 1/1 to 1/4: at 1/8 a direct decode of the first scans is
/// cheaper than reading every scan, and a sequential file shows nothing before it ends. Such files, and any error,
/// make the stream refuse (``isAbandoned``), and the caller decodes the body directly instead. Thread-safe: calls
/// are serialised.
package final class ProgressiveJPEGStream: Sendable {
    /// The libjpeg stream and what this side knows of it; only touched under the lock.
    private final class State {
        let stream: OpaquePointer
        var appended = 0
        var atEnd = false
        var header: dr_jpeg_info?
        var started: (denominator: Int, output: dr_jpeg_output)?
        var shownScans = 0
        var finalShown = false
        var abandoned = false
        var nothingNew = false
        /// Seconds spent reading scans (work the final image needs anyway) and in preview passes (the extra).
        var consumeSeconds = 0.0
        var previewSeconds = 0.0
        var lastPassSeconds = 0.0

        init(_ stream: OpaquePointer) { self.stream = stream }
        deinit { dr_jpeg_stream_destroy(stream) }
    }

    private let state: Locked<State>
    /// The share of the decode's own time (reading the scans, plus one output pass) that previews may spend on
    /// their passes; the first preview is always made.
    package let previewShare: Double

    /// Creates a stream bounded by `limits` (`maxProgressiveScans`, and `maxDecodedBytes` for libjpeg's memory);
    /// nil when out of memory.
    package init?(limits: DecodeLimits, previewShare: Double) {
        guard
            let stream = dr_jpeg_stream_create(
                Int32(clamping: limits.maxProgressiveScans), limits.maxDecodedBytes)
        else { return nil }
        state = Locked(State(stream))
        self.previewShare = max(0, previewShare)
    }

    /// Whether the stream gave up (not a progressive JPEG, a scale it does not serve, or an error); decode
    /// directly instead.
    package var isAbandoned: Bool { state.withLock { $0.abandoned } }

    /// Whether the stream has read part of an image (its final image then costs only the rest).
    package var hasStarted: Bool { state.withLock { $0.started != nil && !$0.abandoned } }

    /// Takes in `body` — the whole body so far; only the bytes past those already seen are read — and returns the
    /// image so far at `options`' geometry: the final image once `isComplete` (or the end of the image has arrived),
    /// else a preview of the last whole scan.
    ///
    /// Returns nil once the final image has been returned, and for a preview when no scan has completed since the
    /// last one, or when another preview pass would
    /// take previews over ``previewShare`` of the decode's own time (the bytes are read all the same), which
    /// `expectedBytes`, the announced length, helps estimate early. Cost: the
    /// entropy decoding of the new bytes plus, when it returns an image, one output pass and the resample.
    /// - Throws: ``DarkroomImageError``; after any error (and for files the stream does not serve) the stream is
    ///   abandoned.
    package func image(
        _ body: UnsafeRawBufferPointer, isComplete: Bool, expectedBytes: Int? = nil, options: DecodeOptions
    ) throws(DarkroomImageError) -> DecodedImage? {
        guard !isAbandoned else { throw DarkroomImageError(.invalidArgument, "the progressive stream was abandoned") }
        do throws(DarkroomImageError) {
            guard body.count <= options.limits.maxInputBytes else {
                throw DarkroomImageError(
                    .limitExceeded,
                    "input of \(body.count) bytes exceeds maxInputBytes (\(options.limits.maxInputBytes))")
            }
            let probe: ImageProbe
            do throws(DarkroomImageError) {
                probe = try ImageProber.probe(body, limits: options.limits)
            } catch  where error.code == .truncated && !isComplete {
                return nil  // the header has not all arrived
            }
            try ImageDecoder.checkSource(probe, options.limits)
            guard probe.format == .jpeg, probe.isProgressive, options.geometry.page == 0 else {
                throw DarkroomImageError(.unsupportedFeature, "only progressive JPEGs are decoded as a stream")
            }
            var decoded = try ImageDecoder().decode(
                .bytes(body, Codec(stream: self, isComplete: isComplete, expectedBytes: expectedBytes)), probe: probe,
                options: options,
                into: Bitmap.allocateOnHeap)
            decoded.probe = probe
            return decoded
        } catch {
            let nothingNew = state.withLock { s in
                defer { s.nothingNew = false }
                if !s.nothingNew { s.abandoned = true }
                return s.nothingNew
            }
            if nothingNew { return nil }
            throw error
        }
    }

    /// The codec step of ``image(_:isComplete:options:)``: appends, reads the scans and outputs one pass.
    private struct Codec: CodecDecoder {
        let format = ImageFileFormat.jpeg
        let stream: ProgressiveJPEGStream
        let isComplete: Bool
        let expectedBytes: Int?

        func decode(
            _ bytes: UnsafeRawBufferPointer, probe: ImageProbe, plan: DecodePlan, working: PixelFormat,
            options: DecodeOptions, allocate: BitmapAllocator
        ) throws(DarkroomImageError) -> CodecOutput {
            try stream.state.withLock { (s: inout State) throws(DarkroomImageError) -> CodecOutput in
                try stream.pass(
                    s, bytes, isComplete: isComplete, expectedBytes: expectedBytes, plan: plan, working: working,
                    options: options,
                    allocate: allocate)
            }
        }
    }

    /// Appends what is new, reads the scans that arrived and, if there is something new to show, outputs it.
    /// Sets `nothingNew` and throws when there is not.
    private func pass(
        _ s: State, _ bytes: UnsafeRawBufferPointer, isComplete: Bool, expectedBytes: Int?, plan: DecodePlan,
        working: PixelFormat,
        options: DecodeOptions, allocate: BitmapAllocator
    ) throws(DarkroomImageError) -> CodecOutput {
        let d = s.stream
        if bytes.count > s.appended || (isComplete && !s.atEnd) {
            let base = bytes.baseAddress.map { $0.assumingMemoryBound(to: UInt8.self) + s.appended }
            try Self.check(
                dr_jpeg_stream_append(d, base, max(0, bytes.count - s.appended), isComplete ? 1 : 0), d, "buffering")
            s.appended = max(s.appended, bytes.count)
            s.atEnd = isComplete
        }
        if s.header == nil {
            var info = dr_jpeg_info()
            let status = dr_jpeg_stream_read_header(d, &info)
            if status == Int32(DR_JPEG_NEED_DATA.rawValue) { throw nothingNew(s) }
            try Self.check(status, d, "reading the header")
            guard info.progressive != 0 else {
                throw DarkroomImageError(.unsupportedFeature, "a sequential JPEG is not decoded as a stream")
            }
            s.header = info
        }
        let (output, isCMYK) = JPEGDecoder.output(for: s.header!, working: working)
        let denominator = JPEGDecoder.shrinkDenominator(plan, options)
        if let started = s.started {
            guard started.denominator == denominator, started.output == output else {
                throw DarkroomImageError(.invalidArgument, "the stream was started at another scale or format")
            }
        } else {
            guard denominator < 8 else {
                throw DarkroomImageError(
                    .unsupportedFeature, "at 1/8 a progressive JPEG is decoded from its first scans")
            }
            var info = dr_jpeg_info()
            try Self.check(dr_jpeg_stream_start(d, Int32(denominator), Int32(output.rawValue), &info), d, "starting")
            s.header = info
            s.started = (denominator, output)
        }

        var progress = dr_jpeg_stream_state()
        let t0 = MonotonicClock.seconds()
        try Self.check(dr_jpeg_stream_consume(d, &progress), d, "reading the scans")
        s.consumeSeconds += MonotonicClock.seconds() - t0
        let isFinal = progress.finished != 0
        if isFinal && s.finalShown { throw nothingNew(s) }
        if !isFinal {
            guard progress.complete_scans > s.shownScans else { throw nothingNew(s) }
            // The first preview always; later ones while their passes stay within the share of the decode's own
            // time: reading every scan (estimated from the bytes read so far and the announced length) and one
            // pass, which the final image needs as well.
            let growth = expectedBytes.map { max(1, Double($0) / Double(max(1, s.appended))) } ?? 1
            let decode = s.consumeSeconds * growth + s.lastPassSeconds
            guard s.shownScans == 0 || s.previewSeconds + s.lastPassSeconds <= previewShare * decode else {
                throw nothingNew(s)
            }
        }
        let t1 = MonotonicClock.seconds()
        var info = s.header!
        let status = dr_jpeg_stream_start_pass(d, &info)
        if status == Int32(DR_JPEG_NEED_DATA.rawValue) { throw nothingNew(s) }
        try Self.check(status, d, "starting a pass")
        // A preview is resampled with the triangle filter: a third of Lanczos's taps, for an image soon replaced.
        var passOptions = options
        if !isFinal { passOptions.filter = .triangle }
        let rows = try JPEGDecoder.readRows(
            width: Int(info.output_width), height: Int(info.output_height), isCMYK: isCMYK, plan: plan,
            working: working, options: passOptions, allocate: allocate,
            read: { dst, stride, count, read throws(DarkroomImageError) in
                var got: Int32 = 0
                try Self.check(dr_jpeg_stream_read_rows(d, dst, stride, Int32(count), &got), d, "decoding rows")
                read = got
            }, skip: nil)
        try Self.check(dr_jpeg_stream_finish_pass(d, &info), d, "finishing a pass")
        if rows.read < rows.expected {
            throw DarkroomImageError(.corrupt, "the pass ended after \(rows.read) of \(rows.expected) rows")
        }
        if isFinal && info.truncated != 0 && !options.acceptTruncated {
            throw DarkroomImageError(
                .truncated, "the JPEG data ends early (reading the scans)", codecMessage: JPEGDecoder.message(stream: d)
            )
        }
        let bitmap = rows.destination.finish()
        s.shownScans = Int(progress.complete_scans)
        s.lastPassSeconds = MonotonicClock.seconds() - t1
        if isFinal { s.finalShown = true } else { s.previewSeconds += s.lastPassSeconds }
        return CodecOutput(bitmap: bitmap, shrinkDenominator: denominator, isCMYK: isCMYK)
    }

    /// Marks the call as having nothing new to show (not an error) and returns the error that unwinds it.
    private func nothingNew(_ s: State) -> DarkroomImageError {
        s.nothingNew = true
        return DarkroomImageError(.truncated, "no new scan to show yet")
    }

    private static func check(_ status: Int32, _ d: OpaquePointer, _ what: String) throws(DarkroomImageError) {
        guard status != Int32(DR_JPEG_OK.rawValue) else { return }
        try JPEGDecoder.check(status, message: JPEGDecoder.message(stream: d), what)
    }
}
