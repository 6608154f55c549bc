import DarkroomImage

/// Turns a decoded bitmap into another: a resize, a crop, rounded corners, or anything custom.
///
/// Runs on the pipeline's processing threads (never Swift's cooperative pool), at most
/// ``ImagePipeline/Configuration/processingLimit`` at once. The ``identifier`` keys the memory and disk caches:
/// two processors with the same identifier must produce the same pixels.
public protocol ImageProcessing: Sendable {
    /// A stable string naming this processor and its parameters, e.g. `"darkroom.crop(0,0,64,64)"`.
    var identifier: String { get }
    /// Returns the processed bitmap. Cost: the processor's own; throw to fail the request with
    /// ``DarkroomError/Code/processingFailed``.
    func process(_ bitmap: Bitmap) throws -> Bitmap
}

/// The built-in processors.
public enum ImageProcessors {}

extension Bitmap {
    /// A new heap bitmap of the same format, or a `DarkroomError` saying why not.
    static func processingOutput(width: Int, height: Int, format: PixelFormat, isOpaque: Bool) throws -> Bitmap {
        try Bitmap(width: width, height: height, format: format, isOpaque: isOpaque)
    }
}
