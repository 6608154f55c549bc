/// What a video's header says (``ImageProbe/video``), read by DarkroomVideo without decoding a frame.
public struct VideoDetails: Sendable, Hashable, Codable {
    /// The container: `mp4` (ISO BMFF: MP4, MOV, 3GP, M4V), `matroska` (MKV, WebM) or `avi`.
    public var container: String
    /// ISO BMFF's major brand (`isom`, `qt  `, `3gp5`…) or `webm`; nil when the container names none.
    public var brand: String?
    /// The video codec, as FFmpeg names it: `h264`, `hevc`, `vp8`, `vp9`, `av1`, `mpeg4`…
    public var codec: String
    /// Seconds, nil when the header does not say (a damaged or streamed file).
    public var duration: Double?
    /// Frames per second (the average, else the nominal rate), nil when unknown.
    public var frameRate: Double?
    /// Frames the container says the stream holds, nil when it does not say.
    public var frameCount: Int?
    /// Degrees clockwise a frame turns to be shown upright (the display matrix): 0, 90, 180 or 270. The probe's
    /// ``ImageProbe/orientation`` carries it, with ``mirrored``, for the decode.
    public var rotation: Int
    /// Whether the display matrix mirrors the frame.
    public var mirrored: Bool
    /// The frame size as coded (``ImageProbe/width`` is the displayed width: coded × pixel aspect).
    public var codedWidth: Int
    public var codedHeight: Int
    /// The pixel (sample) aspect ratio, `[width, height]`; `[1, 1]` for square pixels.
    public var pixelAspect: [Int]
    /// Whether the file has an audio stream (never decoded).
    public var hasAudio: Bool
    /// The content identifier Apple's camera gives a Live Photo's video (the QuickTime key
    /// `com.apple.quicktime.content.identifier`), which its still repeats in its maker note; nil when absent.
    public var contentIdentifier: String?

    /// Creates details.
    public init(
        container: String, brand: String?, codec: String, duration: Double?, frameRate: Double?, frameCount: Int?,
        rotation: Int, mirrored: Bool, codedWidth: Int, codedHeight: Int, pixelAspect: [Int], hasAudio: Bool,
        contentIdentifier: String? = nil
    ) {
        self.container = container
        self.brand = brand
        self.codec = codec
        self.duration = duration
        self.frameRate = frameRate
        self.frameCount = frameCount
        self.rotation = rotation
        self.mirrored = mirrored
        self.codedWidth = codedWidth
        self.codedHeight = codedHeight
        self.pixelAspect = pixelAspect
        self.hasAudio = hasAudio
        self.contentIdentifier = contentIdentifier
    }

    /// The usual file extension of this container: `mp4`, `mov` (QuickTime's brand), `3gp`, `webm`, `mkv` or `avi`.
    public var fileExtension: String {
        switch container {
        case "matroska": brand == "webm" ? "webm" : "mkv"
        case "avi": "avi"
        default: brand == "qt  " ? "mov" : brand?.hasPrefix("3g") == true ? "3gp" : "mp4"
        }
    }

    /// The MIME type of this container: `video/mp4`, `video/quicktime`, `video/3gpp`, `video/webm`,
    /// `video/x-matroska` or `video/x-msvideo`.
    public var mimeType: String {
        switch fileExtension {
        case "mov": "video/quicktime"
        case "3gp": "video/3gpp"
        case "webm": "video/webm"
        case "mkv": "video/x-matroska"
        case "avi": "video/x-msvideo"
        default: "video/mp4"
        }
    }
}
