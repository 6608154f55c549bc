/// Where whole decodes run when not in the calling process: DarkroomWorkers' `DecodeWorkerPool` runs each in a
/// confined worker process, so what a hostile file makes a decoder do costs one decode and reaches nothing.
///
/// Set as ``ImageDecoder/isolation``: the decoder then hands every decode of bytes or of a file (the frames of an
/// animation, ``ImageDecoder/animation(_:options:frameLimit:)``, a video's motion, and the HDR outputs made from a source's bytes,
/// ``ImageDecoder/encodeHDRThumbnail(_:_:)-(UnsafeRawBufferPointer,_)``, and embedded thumbnails) to it and keeps
/// only the cheap, header-reading work (probing images, a file's first bytes) in this process; a video's header is read
/// there too (a remote one by ranges this process fetches). The isolation decodes
/// with its own decoders (the built-in codecs and, for `darkroom-worker`, videos), not the caller's
/// ``ImageDecoder/customDecoders``. Implementations block the calling thread for the decode and are thread-safe.
public protocol DecodeIsolation: Sendable {
    /// Decodes `bytes` as `options` ask, elsewhere. Blocking; one copy of the encoded bytes at most.
    /// - Throws: ``DarkroomImageError``: the decoder's own error, `.decoderCrashed` when the place it ran in ended,
    ///   `.limitExceeded` past a time limit.
    func decode(_ bytes: UnsafeRawBufferPointer, options: DecodeOptions) throws(DarkroomImageError) -> DecodedImage

    /// Decodes the regular file open at `descriptor` (`length` bytes) as `options` ask, elsewhere: the descriptor
    /// is handed over and the file read there, where it lies (a video only in the parts a frame needs), never
    /// copied here. The caller keeps and closes `descriptor`. Blocking.
    /// - Throws: ``DarkroomImageError`` as ``decode(_:options:)``.
    func decode(file descriptor: Int32, length: Int, options: DecodeOptions) throws(DarkroomImageError)
        -> DecodedImage

    /// Decodes the video `ranges` reads where it lies (a remote video), elsewhere: each range the decoder there asks
    /// for is read here, through `ranges` (with its limits), and handed over. Blocking as the reads are.
    /// - Throws: ``DarkroomImageError`` as ``decode(_:options:)``, and what the reads throw.
    func decode(ranges: any ByteRangeReading, options: DecodeOptions) throws(DarkroomImageError) -> DecodedImage

    /// Reads the header of the video `ranges` reads where it lies (a remote video's container), elsewhere, the ranges
    /// handed over as ``decode(ranges:options:)`` hands them. Blocking as the reads are.
    /// - Throws: ``DarkroomImageError`` as ``decode(_:options:)``, and what the reads throw.
    func probe(ranges: any ByteRangeReading, limits: DecodeLimits) throws(DarkroomImageError) -> ImageProbe

    /// Reads the header of the video at `range` of the regular file open at `descriptor` (a video file whole, a
    /// Motion Photo's clip inside it), elsewhere: the descriptor is handed over and the container's header read
    /// there. The caller keeps and closes `descriptor`. Blocking.
    /// - Throws: ``DarkroomImageError`` as ``decode(_:options:)``.
    func probe(file descriptor: Int32, range: Range<Int64>, limits: DecodeLimits) throws(DarkroomImageError)
        -> ImageProbe

    /// Decodes the small picture `bytes` carries beside its image, elsewhere
    /// (``ImageDecoder/decodeEmbeddedThumbnail(_:options:)-(UnsafeRawBufferPointer,_)`` run there): nil when it has
    /// none of the image's shape. Blocking; one copy of the encoded bytes.
    /// - Throws: ``DarkroomImageError`` as ``decode(_:options:)``.
    func decodeEmbeddedThumbnail(_ bytes: UnsafeRawBufferPointer, options: DecodeOptions) throws(DarkroomImageError)
        -> DecodedImage?

    /// The frames of the animation in `bytes` at `options`' size, at most `frameLimit` of them, made elsewhere one at
    /// a time as they are asked for. What makes them keeps the decoder until the source is released, but is held only
    /// while a frame is made. Blocking.
    /// - Throws: ``DarkroomImageError`` as ``decode(_:options:)``, and the animation decoder's own errors.
    func animation(_ bytes: UnsafeRawBufferPointer, options: DecodeOptions, frameLimit: Int?)
        throws(DarkroomImageError) -> any AnimationFrameSource

    /// The frames of the animation in the regular file open at `descriptor` (`length` bytes), read where it lies
    /// (see ``animation(_:options:frameLimit:)``). The caller keeps and closes `descriptor`.
    func animation(file descriptor: Int32, length: Int, options: DecodeOptions, frameLimit: Int?)
        throws(DarkroomImageError) -> any AnimationFrameSource

    /// The motion preview of the video clip at `range` of the regular file open at `descriptor` (a video file
    /// whole, a Motion Photo's clip inside it) at `options`' size, its frames made elsewhere one at a time as they
    /// are asked for: the file is read there by ranges, as the video decoder asks, never here. Kept and held as
    /// ``animation(_:options:frameLimit:)``'s frames are. The caller keeps and closes `descriptor`. Blocking.
    /// - Throws: ``DarkroomImageError`` as ``decode(_:options:)``, and the video decoder's own errors.
    func motion(file descriptor: Int32, range: Range<Int64>, options: DecodeOptions, preview: MotionPreview)
        throws(DarkroomImageError) -> any AnimationFrameSource

    /// Makes the HDR thumbnail `request` asks for from `bytes` elsewhere (``ImageEncoder/encodeHDRThumbnail(_:_:)``
    /// run there): the source's bytes copied there once, the encoded file copied back. Blocking.
    /// - Returns: the encoded file, or nil when the output declines the source.
    /// - Throws: ``DarkroomImageError`` as ``decode(_:options:)``, and the encoder's own errors.
    func encodeHDRThumbnail(_ bytes: UnsafeRawBufferPointer, _ request: HDRThumbnailRequest)
        throws(DarkroomImageError) -> [UInt8]?
}
