import CDarkroomSandbox
import DarkroomImage
import DarkroomSupport
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The decode worker's side: a process started by the parent's `WorkerProcess` confines itself, then answers decode
/// requests on its channel (descriptor 3) until the parent closes it.
///
/// Each request's input is read through the descriptor the parent passed or the input memory file it keeps (mapped,
/// never copied; a video file by ranges, as its decoder asks) and the bitmap and colour profile are written into the
/// output memory file it keeps (see `WorkerRequest`). Confined before the first request: what a hostile input
/// makes a decoder do cannot open a file, a socket or a program (``Confinement``).
public enum DecodeWorker {
    /// Opens a motion preview of the video a reader reads, for a worker that makes videos' motion (DarkroomVideo's
    /// `VideoAnimation`).
    public typealias MotionOpener =
        @Sendable (any ByteRangeReading, DecodeOptions, MotionPreview) throws(DarkroomImageError) ->
        any AnimationFrameSource

    /// Runs a worker with `decoder` (and `motion`, for videos' motion previews; without it they are refused):
    /// confines the process as the JSON of a ``Confinement`` in `arguments[1]` says (the defaults when absent), then
    /// serves requests; exits 0 when the parent closes the channel, 70 when the confinement cannot be applied (a
    /// worker never runs unconfined).
    public static func run(
        decoder: ImageDecoder, motion: MotionOpener? = nil, arguments: [String] = CommandLine.arguments
    ) -> Never {
        let confinement =
            arguments.count > 1
            ? (try? JSONDecoder().decode(Confinement.self, from: Data(arguments[1].utf8))) ?? .default : .default
        guard case .success(let filter) = SeccompFilter.shared else { exit(70) }
        var namespaces: Int32 = 0
        guard confinement.withLimits({ dr_sandbox_confine(filter.pointer, &$0, &namespaces) }) == 0 else { exit(70) }
        var buffer = [UInt8](repeating: 0, count: WorkerReply.maxBytes)
        var kept = Kept()
        while true {
            var fds: [Int32] = [-1, -1]
            var count: Int32 = 0
            let length = dr_channel_receive(3, &buffer, buffer.count, &fds, 2, &count, -1)
            guard length > 0 else { exit(0) }
            let received = Array(fds.prefix(Int(count)))
            let reply: WorkerReply
            if let request = try? JSONDecoder().decode(WorkerRequest.self, from: Data(buffer[..<length])),
                request.descriptorCount == received.count
            {
                reply = handle(request, descriptors: received, kept: &kept, decoder: decoder, motion: motion)
            } else {
                for fd in received { close(fd) }
                reply = .failure("invalid_argument", "the request could not be read")
            }
            let encoded = (try? JSONEncoder().encode(reply)).map { [UInt8]($0) } ?? []
            guard dr_channel_send(3, encoded, encoded.count, nil, 0) == 0 else { exit(0) }
        }
    }

    /// What a worker keeps between requests: the parent's memory files for inputs and bitmaps, the last options and
    /// output capacity, and the open animations by the parent's numbers.
    struct Kept {
        var input: Int32?
        var output: Int32?
        var options: DecodeOptions?
        var outputCapacity = 0
        var animations: [Int: OpenAnimation] = [:]

        mutating func replaceInput(with fd: Int32?) {
            if let input { close(input) }
            input = fd
        }

        mutating func replaceOutput(with fd: Int32?) {
            if let output { close(output) }
            output = fd
        }
    }

    /// Answers one request: takes the descriptors it hands over (a file only for this request; memory files kept),
    /// then does its step.
    private static func handle(
        _ request: WorkerRequest, descriptors: [Int32], kept: inout Kept, decoder: ImageDecoder,
        motion: MotionOpener?
    ) -> WorkerReply {
        var next = descriptors.makeIterator()
        let input: Int32? =
            switch request.input {
            case .file?, .newMemory?: next.next()
            case .keptMemory?: kept.input
            case nil: nil
            }
        if request.input == .newMemory { kept.replaceInput(with: input) }
        if request.newOutput { kept.replaceOutput(with: next.next()) }
        if let options = request.options { kept.options = options }
        if request.outputCapacity > 0 { kept.outputCapacity = request.outputCapacity }
        // A file is this request's alone, but for an animation's, kept (or mapped) until the animation closes
        let keepsFile = request.step == .openMotion || request.step == .openAnimation
        defer { if request.input == .file, !keepsFile, let input { close(input) } }
        guard [.decode, .decodeEmbeddedThumbnail, .encodeHDR, .probe].contains(request.step) else {
            return animationStep(request, input: input, kept: &kept, motion: motion)
        }
        guard let input, let options = kept.options else { return .failure("invalid_argument", "no input or options") }
        guard request.step != .encodeHDR else { return encodeHDR(request, options: options, input: input, kept: kept) }
        if request.readsRanges || request.step == .probe {
            return readRanges(request, options: options, input: input, kept: kept, decoder: decoder)
        }
        return decode(request, options: options, input: input, kept: kept, decoder: decoder)
    }

    private static func decode(
        _ request: WorkerRequest, options: DecodeOptions, input: Int32, kept: Kept, decoder: ImageDecoder
    ) -> WorkerReply {
        guard request.inputLength > 0,
            let source = mmap(nil, request.inputLength, PROT_READ, MAP_SHARED, input, 0), source != MAP_FAILED
        else { return .failure("io", "the input could not be mapped") }
        defer { munmap(source, request.inputLength) }
        let bytes = UnsafeRawBufferPointer(start: source, count: request.inputLength)
        let decoded: DecodedImage
        do throws(DarkroomImageError) {
            if request.step == .decodeEmbeddedThumbnail {
                guard let thumbnail = try decoder.decodeEmbeddedThumbnail(bytes, options: options) else {
                    return WorkerReply(noImage: true)
                }
                decoded = thumbnail
            } else if request.input == .file,
                // A video file is read as its decoder asks, a part at a time, never through the mapping whole
                ImageProber.format(of: UnsafeRawBufferPointer(rebasing: bytes.prefix(4096))) == .video
            {
                decoded = try decoder.decode(
                    ranges: DescriptorRanges(descriptor: input, size: Int64(request.inputLength)),
                    options: options)
            } else {
                decoded = try decoder.decode(bytes, options: options)
            }
        } catch {
            return .failure(error.code.rawValue, error.message)
        }
        return reply(for: decoded, kept: kept)
    }

    /// The reply describing `decoded`, its bitmap and profile written into the output memory file.
    private static func reply(for decoded: DecodedImage, kept: Kept) -> WorkerReply {
        var reply = write(decoded.bitmap, profile: decoded.colorProfile, kept: kept)
        guard reply.failure == nil else { return reply }
        reply.probe = decoded.probe
        reply.shrinkDenominator = decoded.shrinkDenominator
        reply.convertedToSRGB = decoded.convertedToSRGB
        reply.colorProblem = decoded.colorProblem
        reply.usedEmbeddedThumbnail = decoded.usedEmbeddedThumbnail
        return reply
    }

    /// Decodes or probes a file by ranges: one the parent reads (each range the decoder asks for asked of the parent,
    /// arriving in the input memory file), or a video file the parent opened (its header read from it by ranges).
    private static func readRanges(
        _ request: WorkerRequest, options: DecodeOptions, input: Int32, kept: Kept, decoder: ImageDecoder
    ) -> WorkerReply {
        let size = Int64(request.inputLength)
        let ranges: any ByteRangeReading =
            request.readsRanges
            ? ParentRanges(memory: input, size: size)
            : DescriptorRanges(descriptor: input, start: max(0, request.clipOffset), size: size)
        do throws(DarkroomImageError) {
            guard request.step == .decode else {
                var reply = WorkerReply()
                reply.probe = try decoder.probe(ranges: ranges, limits: options.limits)
                return reply
            }
            return reply(for: try decoder.decode(ranges: ranges, options: options), kept: kept)
        } catch {
            return .failure(error.code.rawValue, error.message)
        }
    }

    /// Makes the HDR thumbnail the request names from the mapped input and writes the encoded file into the output
    /// memory file.
    private static func encodeHDR(_ request: WorkerRequest, options: DecodeOptions, input: Int32, kept: Kept)
        -> WorkerReply
    {
        guard let output = request.hdrOutput, let encode = request.encode else {
            return .failure("invalid_argument", "an HDR output needs its kind and encoding")
        }
        guard request.inputLength > 0,
            let source = mmap(nil, request.inputLength, PROT_READ, MAP_SHARED, input, 0), source != MAP_FAILED
        else { return .failure("io", "the input could not be mapped") }
        defer { munmap(source, request.inputLength) }
        let encoded: [UInt8]?
        do throws(DarkroomImageError) {
            encoded = try ImageEncoder.encodeHDRThumbnail(
                UnsafeRawBufferPointer(start: source, count: request.inputLength),
                HDRThumbnailRequest(output, options: options, encode: encode))
        } catch {
            return .failure(error.code.rawValue, error.message)
        }
        guard let encoded else { return WorkerReply() }
        guard !encoded.isEmpty,
            encoded.withUnsafeBytes({ bytes in
                writeOutput(bytes.count, kept: kept) { $0.copyMemory(from: bytes.baseAddress!, byteCount: bytes.count) }
            })
        else {
            return .failure("limit_exceeded", "the encoded file (\(encoded.count) bytes) does not fit the output")
        }
        var reply = WorkerReply()
        reply.encodedLength = encoded.count
        return reply
    }

    /// Writes `bitmap`'s rows and then `profile` into the output memory file: the reply that describes them, or a
    /// failure when they do not fit.
    static func write(_ bitmap: Bitmap, profile: ColorProfile?, kept: Kept) -> WorkerReply {
        let size = bitmap.bytesPerRow * bitmap.height
        let data = profile?.data ?? []
        let written = writeOutput(size + data.count, kept: kept) { target in
            bitmap.withUnsafeBytes { pixels in target.copyMemory(from: pixels.baseAddress!, byteCount: size) }
            data.withUnsafeBytes { data in
                if let base = data.baseAddress { (target + size).copyMemory(from: base, byteCount: data.count) }
            }
        }
        guard written else { return .failure("limit_exceeded", "the bitmap (\(size) bytes) does not fit the output") }
        return WorkerReply(
            width: bitmap.width, height: bitmap.height, format: bitmap.format, bytesPerRow: bitmap.bytesPerRow,
            isOpaque: bitmap.isOpaque, colorProfileLength: data.count, colorProfileSummary: profile?.summary)
    }
}

extension DecodeWorker {
    /// Maps the first `length` bytes of the output memory file and lets `fill` write them; false when they do not fit
    /// the output (or it cannot be mapped).
    static func writeOutput(_ length: Int, kept: Kept, _ fill: (UnsafeMutableRawPointer) -> Void) -> Bool {
        guard let output = kept.output, length <= kept.outputCapacity,
            let target = mmap(nil, max(1, length), PROT_READ | PROT_WRITE, MAP_SHARED, output, 0), target != MAP_FAILED
        else { return false }
        fill(target)
        munmap(target, max(1, length))
        return true
    }
}

extension WorkerReply {
    /// A reply that reports a failure.
    static func failure(_ code: String, _ message: String) -> WorkerReply {
        WorkerReply(failure: .init(code: code, message: message))
    }
}
