import DarkroomImage
import Foundation

/// What the parent asks a worker for: one decode. Sent as JSON with two descriptors: the input (a memory file, or,
/// when ``inputIsFile``, a regular file the parent opened, of ``inputLength`` bytes) and the output (a memory file of
/// ``outputCapacity`` bytes the worker writes the bitmap's rows into, then the colour profile, so the pixels never
/// pass through the socket).
struct WorkerRequest: Codable {
    var options: DecodeOptions
    var inputLength: Int
    var inputIsFile = false
    var outputCapacity: Int
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
