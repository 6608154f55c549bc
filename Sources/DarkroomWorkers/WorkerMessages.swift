import DarkroomImage
import Foundation

/// What the parent asks a worker for: one decode. Sent as JSON with the descriptors it names, in this order: the
/// input when ``input`` is `.file` (a regular file the parent opened) or `.newMemory` (a memory file the worker keeps
/// for later `.keptMemory` requests), then the output when ``newOutput`` (a memory file of ``outputCapacity`` bytes,
/// kept for every later request, that the worker writes the bitmap's rows into, then the colour profile: the pixels
/// never pass through the socket). The input is ``inputLength`` bytes.
///
/// A worker's memory files are made once, not per decode: a decode costs no file made, sized or closed, and the
/// pages a bitmap used are reused by the next. ``options`` is absent when it equals the previous request's, so a
/// batch of one geometry sends it once per worker.
struct WorkerRequest: Codable {
    enum Input: String, Codable {
        case file, newMemory, keptMemory
    }

    var options: DecodeOptions?
    var input: Input
    var inputLength: Int
    var newOutput = false
    var outputCapacity: Int

    /// The descriptors the message carries.
    var descriptorCount: Int { (input == .keptMemory ? 0 : 1) + (newOutput ? 1 : 0) }
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
    var failure: Failure?

    /// The most bytes a message may hold.
    static let maxBytes = 1 << 20
}
