/// Limits that protect a decoder from hostile input. Each is checked from the header, before any large
/// allocation, and a violation throws ``DarkroomImageError`` with code `.limitExceeded`.
///
/// The defaults accept every real photo (phone cameras reach 200 MP) while bounding memory: a 200 MP JPEG is
/// accepted when shrink-on-load keeps its decoded bitmap under ``maxDecodedBytes``, refused when asked for at
/// full size.
public struct DecodeLimits: Sendable, Hashable, Codable {
    /// Largest input accepted, in bytes. Default 256 MiB.
    public var maxInputBytes: Int
    /// Largest source image, in pixels (width × height as stored). Default 268,435,456 (256 MP, 16384²).
    public var maxSourcePixels: Int
    /// Largest side of a source image, in pixels. Default 65,535 (the JPEG format's own bound).
    public var maxDimension: Int
    /// Largest pixel memory one decode may allocate: the output bitmap plus any full-frame working buffer
    /// (GIF canvases, animated WebP canvases, Adam7 PNGs). Default 512 MiB.
    public var maxDecodedBytes: Int
    /// Most scans a progressive JPEG may have. Real encoders write ≤ 20; hostile files write thousands to
    /// make decoding quadratic. Default 100.
    public var maxProgressiveScans: Int
    /// Most frames an animated image may have (GIF, animated WebP, APNG), counted while probing. Default 10,000.
    public var maxFrames: Int
    /// Largest animation decoded, as frames × canvas area in pixels: the work of compositing every frame, known
    /// from the header. Default 1,073,741,824 (about 1,100 frames of 1000×1000, or 7,400 of 480×300): bounded at
    /// about 1 s of GIF decoding per 100 MP on one core. A still image never reaches it.
    public var maxAnimationPixels: Int
    /// Largest embedded colour profile read, in bytes; a larger one is ignored (the image is treated as sRGB).
    /// Default 4 MiB (camera and print profiles are 0.5–600 KB).
    public var maxColorProfileBytes: Int
    /// Most TIFF directories (pages, pyramid levels) read from one file. Default 1,000.
    public var maxPages: Int = 1000
    /// Largest SVG document accepted, in bytes (its parse tree is held whole). Default 16 MiB.
    public var maxSVGBytes: Int = 16 << 20
    /// Longest an SVG may take to render; past it the decode fails with `.limitExceeded` (the renderer itself
    /// finishes on its own thread, bounded by librsvg's element limits and counted by ``maxSVGRendersRunning``).
    /// Default 10 s.
    public var maxSVGRenderSeconds: Double = 10
    /// Most SVG renders that may be drawing at once in the process, those that overran ``maxSVGRenderSeconds``
    /// (their thread draws on until librsvg ends it) included; past it a decode fails at once with `.limitExceeded`.
    /// Default 8: a few overrunning documents cannot pile up threads and CPU.
    public var maxSVGRendersRunning: Int = 8
    /// Largest gain map read, in pixels; past it the gain map is ignored with a warning and the SDR base image is
    /// what decodes (as for any damaged gain map). Default 67,108,864 (64 MP): phones write maps of a quarter of
    /// the base's side or the base's full size, and a map larger than its base is refused whatever this says.
    public var maxGainMapPixels: Int = 1 << 26
    /// Largest gain-map metadata record parsed, in bytes: an `hdrgm` XMP packet or an ISO 21496-1 record. A larger
    /// one is not parsed; the gain map is then ignored with a warning. Default 64 KiB (a JPEG segment's own bound;
    /// real records are a few hundred bytes, packets a few KB).
    public var maxGainMapMetadataBytes: Int = 64 << 10
    /// Longest one video decode may take (opening the file, seeking, decoding the frames it needs, scaling); past
    /// it FFmpeg is interrupted and the decode fails with `.limitExceeded`. Default 10 s (a poster frame of a 4K
    /// clip takes a small fraction of a second on one core).
    public var maxVideoDecodeSeconds: Double = 10
    /// Most frames one video decode may decode to reach the frame it shows: the frames from the keyframe before a
    /// requested time up to it, or the keyframes tried for a poster frame that is not blank. Past it the last good
    /// frame is shown. Default 600 (ten seconds at 60 frames a second; phones write a keyframe every second or two).
    public var maxVideoFramesDecoded: Int = 600
    /// Most packets (of any stream) read for one video frame; past it the decode fails with `.limitExceeded`.
    /// Default 20,000: a stream with no decodable frame cannot make the decoder read a whole long file.
    public var maxVideoPacketsPerFrame: Int = 20_000
    /// Most QuickTime files of a folder whose headers are read to find a Live Photo still's video by its content
    /// identifier, when no video beside it has the still's name (`PhotoMotion`). Default 256; 0 pairs by name only.
    public var maxLivePhotoCandidates: Int = 256

    /// The defaults documented on each property.
    public static let `default` = DecodeLimits()

    /// Creates limits; omitted values take their documented defaults.
    public init(
        maxInputBytes: Int = 256 << 20, maxSourcePixels: Int = 16384 * 16384, maxDimension: Int = 65535,
        maxDecodedBytes: Int = 512 << 20, maxProgressiveScans: Int = 100, maxFrames: Int = 10_000,
        maxColorProfileBytes: Int = 4 << 20, maxAnimationPixels: Int = 1 << 30
    ) {
        self.maxInputBytes = maxInputBytes
        self.maxSourcePixels = maxSourcePixels
        self.maxDimension = maxDimension
        self.maxDecodedBytes = maxDecodedBytes
        self.maxProgressiveScans = maxProgressiveScans
        self.maxFrames = maxFrames
        self.maxColorProfileBytes = maxColorProfileBytes
        self.maxAnimationPixels = maxAnimationPixels
    }
}
