import DarkroomImage

#if canImport(Glibc)
    import Glibc
#endif

/// The worker's side of an animation: the decoder opened on the input, kept until closed, one frame per request.
extension DecodeWorker {
    static func animationStep(_ request: WorkerRequest, input: Int32?, kept: inout Kept, motion: MotionOpener?)
        -> WorkerReply
    {
        do throws(DarkroomImageError) {
            if request.step == .openAnimation || request.step == .openMotion {
                kept.closeAnimation()
                guard let input, let options = kept.options else {
                    if request.step == .openMotion, let input { close(input) }
                    return .failure("invalid_argument", "an animation needs an input and options")
                }
                let decoder =
                    request.step == .openMotion
                    ? try openMotion(input, request, options: options, motion: motion, kept: &kept)
                    : try open(
                        input, length: request.inputLength, options: options, frameLimit: request.frameLimit,
                        kept: &kept)
                kept.animation = decoder
                return WorkerReply(
                    animation: .init(
                        info: decoder.info, frameCount: decoder.frameCount, outputWidth: decoder.outputWidth,
                        outputHeight: decoder.outputHeight))
            }
            if request.step == .closeAnimation {
                kept.closeAnimation()
                return WorkerReply()
            }
            guard let animation = kept.animation else { return .failure("invalid_argument", "no animation is open") }
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

    /// The motion preview of the clip in the input file, read by ranges: the file is kept (and closed by
    /// ``Kept/closeAnimation()``) for as long as the animation is open.
    private static func openMotion(
        _ input: Int32, _ request: WorkerRequest, options: DecodeOptions, motion: MotionOpener?, kept: inout Kept
    ) throws(DarkroomImageError) -> any AnimationFrameSource {
        kept.animationFile = input
        do throws(DarkroomImageError) {
            guard let motion, let preview = request.preview, request.input == .file else {
                throw DarkroomImageError(.unsupportedFormat, "this worker makes no motion previews")
            }
            guard request.clipOffset >= 0, request.inputLength > 0 else {
                throw DarkroomImageError(.invalidArgument, "the clip's range is empty")
            }
            let ranges = DescriptorRanges(
                descriptor: input, start: request.clipOffset, size: Int64(request.inputLength))
            return try motion(ranges, options, preview)
        } catch {
            kept.closeAnimation()
            throw error
        }
    }

    /// The animation decoder of the input, read where it lies: the input is mapped for as long as the animation is
    /// open (``Kept/closeAnimation()`` unmaps it; the parent leaves it unchanged until then), so opening a still to
    /// learn it has one frame costs a header walk, not a copy.
    private static func open(
        _ input: Int32, length: Int, options: DecodeOptions, frameLimit: Int?, kept: inout Kept
    ) throws(DarkroomImageError) -> AnimatedImageDecoder {
        guard length > 0, let source = mmap(nil, length, PROT_READ, MAP_SHARED, input, 0), source != MAP_FAILED else {
            throw DarkroomImageError(.io, "the input could not be mapped")
        }
        let bytes = UnsafeRawBufferPointer(start: source, count: length)
        kept.animationInput = bytes
        do throws(DarkroomImageError) {
            let encoded = try EncodedAnimation(borrowing: bytes, limits: options.limits)
            return try AnimatedImageDecoder(encoded, options: options, frameLimit: frameLimit)
        } catch {
            kept.closeAnimation()
            throw error
        }
    }
}
