import DarkroomImage

#if canImport(Glibc)
    import Glibc
#endif

/// Decodes a video to one still frame at display size: the poster frame (chosen as the good thumbnailers choose it)
/// or the frame at `OutputGeometry/time`, through FFmpeg's libraries.
///
/// The seam is DarkroomImage's: give one to `ImageDecoder/customDecoders` and every decode of in-memory bytes
/// reads videos too (`ImageDecoder/init(customDecoders:)`); `decode(fileAt:options:)` reads a file without
/// loading it. A value without state: share it across threads; each decode opens its own FFmpeg handle.
///
/// Cost: opening reads the container's header; the poster frame is one keyframe decoded (a few more when the first
/// ones are black or blank, up to `DecodeLimits/maxVideoFramesDecoded`), a frame at a time up to that many frames
/// from the keyframe before it. The frame is scaled straight to the output size by libswscale (Lanczos), its colour
/// converted with the stream's own matrix and range, PQ and HLG tone-mapped to SDR as HDR photos are. Memory: one
/// decoded frame (FFmpeg's) and the output. Time: bounded by `DecodeLimits/maxVideoDecodeSeconds`.
public struct VideoDecoder: ImageDecoding {
    /// Where video files' headers are read instead of this process (``probe(fileAt:limits:)``, and the clips
    /// ``motion(ofPhotoAt:format:contents:limits:)`` finds): DarkroomWorkers' pool reads them in a confined worker,
    /// the open file handed over. Frames are isolated by the `ImageDecoder` this decoder serves
    /// (`ImageDecoder/isolation`). Default nil: read here.
    public var isolation: (any DecodeIsolation)?

    /// Creates a decoder; `isolation`, when given, reads video headers.
    public init(isolation: (any DecodeIsolation)? = nil) {
        self.isolation = isolation
    }

    /// An `ImageDecoder` that reads videos as well as images: the built-in codecs with this one among its custom
    /// decoders.
    public static var imageDecoder: ImageDecoder { ImageDecoder(customDecoders: [VideoDecoder()]) }

    /// Whether `probe` is a video's.
    public func canDecode(_ probe: ImageProbe) -> Bool { probe.format == .video }

    /// A video's header, or nil when `bytes` are not a video. Opens the container (see the type's costs).
    /// - Throws: `DarkroomImageError` for a video FFmpeg cannot open, or one over the limits.
    public func probe(_ bytes: UnsafeRawBufferPointer, limits: DecodeLimits) throws(DarkroomImageError)
        -> ImageProbe?
    {
        guard ImageProber.format(of: bytes) == .video else { return nil }
        return try VideoFile(bytes: bytes, limits: limits).probe
    }

    /// The header of the video file at `path`, reading only what the container's header needs.
    /// - Throws: `.notFound`/`.io` when the file cannot be read, `.unsupportedFormat` when it is not a video, and
    ///   what `probe(_:limits:)` throws.
    public func probe(fileAt path: String, limits: DecodeLimits = .default) throws(DarkroomImageError) -> ImageProbe {
        try requireVideo(path, limits)
        return try header(ofVideoAt: path, limits: limits)
    }

    /// The header of a video file for `ImageDecoder/probe(fileAt:limits:)` (see `probe(fileAt:limits:)`); nil for
    /// other formats.
    public func probe(fileAt path: String, format: ImageFileFormat, limits: DecodeLimits)
        throws(DarkroomImageError) -> ImageProbe?
    {
        guard format == .video else { return nil }
        return try header(ofVideoAt: path, limits: limits)
    }

    /// The header of the video at `path` (or of the clip at `range` of it) whose format the caller already knows:
    /// read in the ``isolation`` when there is one.
    package func header(ofVideoAt path: String, range: Range<Int64>? = nil, limits: DecodeLimits)
        throws(DarkroomImageError) -> ImageProbe
    {
        guard let isolation else { return try VideoFile(path: path, range: range, limits: limits).probe }
        let (fd, size) = try FileBytes.openRegularFile(path, limit: .max)
        defer { close(fd) }
        return try isolation.probe(file: fd, range: VideoFile.clip(range, in: size, of: path), limits: limits)
    }

    /// Decodes the frame `options` ask for (see the type's summary) as an upright bitmap.
    public func decode(_ bytes: UnsafeRawBufferPointer, probe: ImageProbe, options: DecodeOptions)
        throws(DarkroomImageError) -> Bitmap
    {
        try FrameRenderer(video: VideoFile(bytes: bytes, limits: options.limits), options: options).render().bitmap
    }

    /// Decodes a frame of the video file at `path` without reading the file whole.
    /// - Throws: `DarkroomImageError`: `.notFound`/`.io` for an unreadable file, `.unsupportedFormat` for one that
    ///   is not a video, `.unsupportedFeature` for a codec Darkroom does not decode, `.corrupt`/`.truncated` for a
    ///   damaged one with no frame to show, `.limitExceeded` past `DecodeLimits`.
    public func decode(fileAt path: String, options: DecodeOptions = DecodeOptions()) throws(DarkroomImageError)
        -> DecodedImage
    {
        try requireVideo(path, options.limits)
        return try render(videoAt: path, options: options)
    }

    /// Decodes a video file for `ImageDecoder/decode(fileAt:options:)` (see `decode(fileAt:options:)`); nil for
    /// other formats.
    public func decode(fileAt path: String, format: ImageFileFormat, options: DecodeOptions)
        throws(DarkroomImageError) -> DecodedImage?
    {
        guard format == .video else { return nil }
        return try render(videoAt: path, options: options)
    }

    /// Decodes a frame of the video at `path` (or of the clip at `range` of it) whose format the caller already
    /// knows (see `decode(fileAt:options:)`).
    package func render(videoAt path: String, range: Range<Int64>? = nil, options: DecodeOptions)
        throws(DarkroomImageError) -> DecodedImage
    {
        try FrameRenderer(video: VideoFile(path: path, range: range, limits: options.limits), options: options)
            .render()
    }

    /// Decodes a frame of the video `ranges` reads where it lies (a remote video), reading only the ranges the
    /// header and the frame need (see the type's costs); nil for other formats.
    public func decode(ranges: any ByteRangeReading, format: ImageFileFormat, options: DecodeOptions)
        throws(DarkroomImageError) -> DecodedImage?
    {
        guard format == .video else { return nil }
        return try FrameRenderer(video: VideoFile(ranges: ranges, limits: options.limits), options: options).render()
    }

    /// The header of the video `ranges` reads where it lies (a remote video), reading only the ranges the
    /// container's header needs; nil for other formats.
    public func probe(ranges: any ByteRangeReading, format: ImageFileFormat, limits: DecodeLimits)
        throws(DarkroomImageError) -> ImageProbe?
    {
        guard format == .video else { return nil }
        return try VideoFile(ranges: ranges, limits: limits).probe
    }

    private func requireVideo(_ path: String, _ limits: DecodeLimits) throws(DarkroomImageError) {
        let format = try ImageProber.format(ofFileAt: path, limits: limits)
        guard format == .video else {
            throw DarkroomImageError(
                .unsupportedFormat, "\(path) is not a video (it is \(format?.rawValue ?? "no format Darkroom reads"))")
        }
    }
}
