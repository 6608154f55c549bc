import DarkroomImage
import Foundation

/// What the parent asks a worker for: one decode. Sent as JSON with two descriptors: the input (a memory file, or a
/// file the parent opened, of ``inputLength`` bytes) and the output (a memory file of ``outputCapacity`` bytes the
/// worker writes the bitmap's rows into, so the pixels never pass through the socket).
struct WorkerRequest: Codable {
    var options: DecodeOptions
    var inputLength: Int
    var outputCapacity: Int
}

/// A worker's answer: the bitmap written to the output (its size, layout and rows' stride) and the probe, or the
/// decode's error.
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
    var failure: Failure?

    /// The most bytes a message may hold.
    static let maxBytes = 1 << 20
}
