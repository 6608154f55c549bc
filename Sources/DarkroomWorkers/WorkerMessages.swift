import DarkroomImage
import Foundation

/// What the parent asks a worker for: one decode or video header, one step of an animation's frames, one HDR
/// thumbnail made from the source's bytes, or (mid-request) a range the worker asked for. Sent as JSON with the
/// descriptors it names, in this order: the input when ``input`` is `.file` (a regular file the parent opened) or
/// `.newMemory` (a memory file the worker keeps for later `.keptMemory` requests), then the output when
/// ``newOutput`` (a memory file of ``outputCapacity`` bytes, kept for every later request, that the worker writes
/// the bitmap's rows into, then the colour profile: the pixels never pass through the socket). The input is
/// ``inputLength`` bytes.
///
/// A worker's memory files are made once, not per decode: a decode costs no file made, sized or closed, and the
/// pages a bitmap used are reused by the next. ``options`` is absent when it equals the previous request's, so a
/// batch of one geometry sends it once per worker.
struct WorkerRequest: Codable {
    /// What the request asks.
    enum Step: String, Codable {
        /// Decode the input (``WorkerReply`` describes the image).
        case decode
        /// Decode the small picture the input carries beside its image (the reply's `noImage` when it has none of
        /// the image's shape).
        case decodeEmbeddedThumbnail
        /// Open the frames of the input (a file of the animation's own), at most ``WorkerRequest/frameLimit`` (the
        /// reply's `animation`); the worker keeps the decoder under ``WorkerRequest/animationID`` for the steps below
        /// until `closeAnimation`.
        case openAnimation
        /// The next frame into the output (the reply's `frameIndex`; none after the last).
        case nextFrame
        /// Open the motion preview ``WorkerRequest/preview`` of the video clip at ``WorkerRequest/clipOffset`` of the
        /// input file (``WorkerRequest/inputLength`` bytes of it), read by ranges; the steps below then make its
        /// frames, as an animation's.
        case openMotion
        /// Move past the next frame without making it (the reply's `skipped`).
        case skipFrame
        /// Start again from the first frame.
        case rewind
        /// Drop the animation's decoder.
        case closeAnimation
        /// Read a video's header (the reply's `probe`): of the file the parent opened, from
        /// ``WorkerRequest/clipOffset``, or of the one it reads by ranges.
        case probe
        /// The parent's answer to the worker's `rangeWanted`, mid-request: the bytes (``WorkerRequest/inputLength`` of
        /// them) at the start of the input memory file, or ``WorkerRequest/rangeFailure``.
        case rangeBytes
        /// Make the HDR thumbnail ``WorkerRequest/hdrOutput`` names from the input at the options' geometry,
        /// encoded as ``WorkerRequest/encode`` says, into the output (the reply's `encodedLength`).
        case encodeHDR
    }

    enum Input: String, Codable {
        case file, newMemory, keptMemory
    }

    var step = Step.decode
    /// The animation an animation step is about: the parent's number for it, unique among the worker's open ones.
    var animationID = 0
    var options: DecodeOptions?
    var input: Input?
    var inputLength = 0
    var frameLimit: Int?
    var newOutput = false
    var outputCapacity = 0
    /// `decode` and `probe`: the input is a file the parent reads by ranges (``inputLength`` bytes long), which the
    /// worker asks for a range at a time (`WorkerReply/rangeWanted`) and receives in the input memory file.
    var readsRanges = false
    /// `rangeBytes`: why the parent could not read the range.
    var rangeFailure: WorkerReply.Failure?
    /// `openMotion`: what part of the clip the preview shows.
    var preview: MotionPreview?
    /// `openMotion`, and `probe` of a file: where the clip starts in the input file.
    var clipOffset: Int64 = 0
    /// `encodeHDR`: which output, and its encoding (the decode's options are ``options``, kept as a decode's are).
    var hdrOutput: HDRThumbnailRequest.Output?
    var encode: EncodeOptions?

    /// The descriptors the message carries.
    var descriptorCount: Int { (input == .file || input == .newMemory ? 1 : 0) + (newOutput ? 1 : 0) }
}

/// A worker's answer: the bitmap written to the output (its size, layout and rows' stride), the colour profile's
/// length (written after the rows) and what else the decode learned, or the decode's error.
struct WorkerReply: Codable {
    struct Failure: Codable {
        var code: String
        var message: String
    }

    var width = 0
    var height = 0
    var format = PixelFormat.bgra8Premultiplied
    var bytesPerRow = 0
    var isOpaque = true
    var probe: ImageProbe?
    var shrinkDenominator = 1
    var convertedToSRGB = false
    var colorProblem: String?
    var colorProfileLength = 0
    var colorProfileSummary: ColorProfileSummary?
    var usedEmbeddedThumbnail = false
    /// `openAnimation`: what the frames will be.
    var animation: AnimationHeader?
    /// `nextFrame`: the frame's index (its bitmap described as a decode's is), or nil after the last frame.
    var frameIndex: Int?
    /// `nextFrame`: the frame's duration, milliseconds.
    var frameDuration = 0
    /// `skipFrame`: whether a frame was passed.
    var skipped = false
    /// Mid-request, from a worker reading its input by ranges: the range it wants next (the parent answers with a
    /// `rangeBytes` request, and the final reply comes after).
    var rangeWanted: RangeWanted?
    /// `decodeEmbeddedThumbnail`: the input has no thumbnail to stand in for its image (nothing written).
    var noImage = false
    /// `encodeHDR`: the length of the encoded file written to the output, or nil when the output declined the source.
    var encodedLength: Int?
    var failure: Failure?

    /// A range of the input a worker asks for.
    struct RangeWanted: Codable {
        var offset: Int64
        var count: Int
    }

    /// The most bytes one range request asks for.
    static let maxRangeBytes = 4 << 20

    /// An opened animation: its timing and its frames' count and size.
    struct AnimationHeader: Codable {
        var info: AnimationInfo
        var frameCount: Int
        var outputWidth: Int
        var outputHeight: Int
    }

    /// The most bytes a message may hold.
    static let maxBytes = 1 << 20
}
