import DarkroomImage

#if canImport(Glibc)
    import Glibc
#endif

/// The worker's side of animations: each opened on its own input (a file or a memory file the parent made for it, so
/// later requests' inputs never touch it), kept under the parent's number until closed, one frame per request.
/// Several may be open at once: the parent's frame sources share a worker between their frames.
extension DecodeWorker {
    /// An animation open in the worker: its frame source, and the mapping or file it reads, given back (in that
    /// order) when it goes.
    final class OpenAnimation {
        private(set) var source: (any AnimationFrameSource)?
        private let mapping: UnsafeRawBufferPointer?
        private let file: Int32?

        init(source: any AnimationFrameSource, mapping: UnsafeRawBufferPointer?, file: Int32?) {
            self.source = source
            self.mapping = mapping
            self.file = file
        }

        deinit {
            source = nil
            if let mapping { munmap(UnsafeMutableRawPointer(mutating: mapping.baseAddress), mapping.count) }
            if let file { close(file) }
        }
    }

    /// The most animations a worker keeps open at once: past it, opening another is refused (the parent opens it in
    /// another worker or fails the request), so a caller that never closes cannot grow a worker without bound.
    static let maxOpenAnimations = 64

    static func animationStep(_ request: WorkerRequest, input: Int32?, kept: inout Kept, motion: MotionOpener?)
        -> WorkerReply
    {
        do throws(DarkroomImageError) {
            let id = request.animationID
            if request.step == .openAnimation || request.step == .openMotion {
                kept.animations[id] = nil
                guard let input, let options = kept.options, request.input == .file,
                    kept.animations.count < maxOpenAnimations
                else {
                    if request.input == .file, let input { close(input) }
                    return .failure("invalid_argument", "an animation needs a file of its own, options and room")
                }
                let open =
                    request.step == .openMotion
                    ? try openMotion(input, request, options: options, motion: motion)
                    : try open(input, length: request.inputLength, options: options, frameLimit: request.frameLimit)
                kept.animations[id] = open
                let source = open.source!
                return WorkerReply(
                    animation: .init(
                        info: source.info, frameCount: source.frameCount, outputWidth: source.outputWidth,
                        outputHeight: source.outputHeight))
            }
            if request.step == .closeAnimation {
                kept.animations[id] = nil
                return WorkerReply()
            }
            guard let animation = kept.animations[id]?.source else {
                return .failure("invalid_argument", "no animation \(id) is open")
            }
            switch request.step {
            case .nextFrame:
                guard let frame = try animation.nextFrame() else { return WorkerReply() }
                var reply = write(frame.bitmap, profile: nil, kept: kept)
                reply.frameIndex = frame.index
                reply.frameDuration = frame.duration
                return reply
            case .skipFrame:
                return WorkerReply(skipped: try animation.skipFrame())
            default:
                try animation.rewind()
                return WorkerReply()
            }
        } catch {
            return .failure(error.code.rawValue, error.message)
        }
    }

    /// The motion preview of the clip in the input file, read by ranges: the file is kept for as long as the
    /// animation is open.
    private static func openMotion(
        _ input: Int32, _ request: WorkerRequest, options: DecodeOptions, motion: MotionOpener?
    ) throws(DarkroomImageError) -> OpenAnimation {
        guard let motion, let preview = request.preview else {
            close(input)
            throw DarkroomImageError(.unsupportedFormat, "this worker makes no motion previews")
        }
        guard request.clipOffset >= 0, request.inputLength > 0 else {
            close(input)
            throw DarkroomImageError(.invalidArgument, "the clip's range is empty")
        }
        let ranges = DescriptorRanges(descriptor: input, start: request.clipOffset, size: Int64(request.inputLength))
        do throws(DarkroomImageError) {
            return OpenAnimation(source: try motion(ranges, options, preview), mapping: nil, file: input)
        } catch {
            close(input)
            throw error
        }
    }

    /// The animation decoder of the input file, read where it lies: the file is mapped for as long as the animation
    /// is open (and closed at once: the mapping keeps it), so opening a still to learn it has one frame costs a
    /// header walk, not a copy.
    private static func open(_ input: Int32, length: Int, options: DecodeOptions, frameLimit: Int?)
        throws(DarkroomImageError) -> OpenAnimation
    {
        defer { close(input) }
        guard length > 0, let source = mmap(nil, length, PROT_READ, MAP_SHARED, input, 0), source != MAP_FAILED else {
            throw DarkroomImageError(.io, "the input could not be mapped")
        }
        let bytes = UnsafeRawBufferPointer(start: source, count: length)
        do throws(DarkroomImageError) {
            let encoded = try EncodedAnimation(borrowing: bytes, limits: options.limits)
            let decoder = try AnimatedImageDecoder(encoded, options: options, frameLimit: frameLimit)
            return OpenAnimation(source: decoder, mapping: bytes, file: nil)
        } catch {
            munmap(source, length)
            throw error
        }
    }
}
