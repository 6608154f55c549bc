/// Where a Motion Photo keeps its clip: a video file (MP4) stored inside the photo's own file, found from the
/// photo's metadata (`ImageProber/embeddedVideo(ofFileAt:limits:)`).
///
/// The clip's bytes are `offset ..< offset + length` of the photo's file; they form a video file of their own (its
/// sample offsets count from its first byte), which a video decoder opens as it would a file.
public struct EmbeddedVideo: Sendable, Hashable, Codable {
    /// How the photo says where the clip is.
    public enum Layout: String, Sendable, Hashable, Codable {
        /// Google's Motion Photo format 1.0: XMP `Camera:MotionPhoto` and the `Container:Directory` entry whose
        /// semantic is `MotionPhoto`, counted back from the end of the file (Pixel, newer Samsung and others).
        case containerDirectory = "container-directory"
        /// The older Micro Video: XMP `Camera:MicroVideo` and `MicroVideoOffset`, the clip's length from the end.
        case microVideo = "micro-video"
        /// Samsung's trailer after the JPEG (`SEFH`…`SEFT`), whose `MotionPhoto_Data` entry holds the clip.
        case samsungTrailer = "samsung-trailer"
        /// A top-level `mpvd` box of a HEIF or AVIF file, as the Motion Photo format stores the clip there.
        case heifBox = "heif-mpvd"
    }

    /// How the clip was found.
    public var layout: Layout
    /// The clip's first byte in the photo's file.
    public var offset: Int
    /// The clip's length in bytes.
    public var length: Int
    /// The time in the clip (seconds) of the frame the still shows, when the photo states it.
    public var presentationTime: Double?

    /// The clip's bytes in the photo's file.
    public var byteRange: Range<Int64> { Int64(offset)..<Int64(offset + length) }

    /// Creates a location.
    public init(layout: Layout, offset: Int, length: Int, presentationTime: Double? = nil) {
        self.layout = layout
        self.offset = offset
        self.length = length
        self.presentationTime = presentationTime
    }
}
