import DarkroomImage
import Foundation

/// The motion that goes with a still photo: the clip a Motion Photo stores inside its own file (Google's and
/// Samsung's layouts, `EmbeddedVideo`), or the video an Apple Live Photo keeps beside it.
///
/// The still stays the photo's thumbnail; the motion is shown on request (`VideoAnimation` over `path` and
/// `byteRange`, or a frame of it through `VideoDecoder`).
///
/// **The Live Photo rule.** A HEIC or JPEG still is paired with a QuickTime file (a regular file, not a link, that
/// Darkroom reads as a video) in its own folder:
/// 1. the one with the same base name and the extension `.MOV` or `.mov` (`IMG_1234.HEIC` with `IMG_1234.MOV`), the
///    names an iPhone's exports, iCloud's downloads and Image Capture give the pair — unless both files carry a
///    content identifier and the two differ (another Live Photo's video that happens to share the name);
/// 2. else, when the still carries a content identifier (Apple's maker note tag 0x11, which the camera writes only
///    when a video goes with the still), the QuickTime file of the folder whose
///    `com.apple.quicktime.content.identifier` is the same: renamed pairs. The folder's videos are indexed once
///    while it is unchanged (`DecodeLimits/maxLivePhotoCandidates` headers at most).
public struct PhotoMotion: Sendable {
    /// Which kind of motion the photo has.
    public enum Kind: String, Sendable, Hashable, Codable {
        /// A clip inside the photo's file.
        case motionPhoto = "motion-photo"
        /// A video file beside the photo.
        case livePhoto = "live-photo"
    }

    /// Which kind of motion the photo has.
    public var kind: Kind
    /// The file that holds the clip: the photo itself (a Motion Photo) or the video beside it (a Live Photo).
    public var path: String
    /// Where in the photo's file a Motion Photo's clip is; nil for a Live Photo (the whole file is the clip).
    public var embedded: EmbeddedVideo?
    /// The clip's header: its size, codec, duration and frame rate (`ImageProbe/video`).
    public var clip: ImageProbe
    /// A Live Photo's content identifier, which the still and its video share; nil when neither states one (the
    /// pair was made by name) and for a Motion Photo.
    public var contentIdentifier: String?

    /// The clip's bytes in `path`, nil when the clip is the whole file.
    public var byteRange: Range<Int64>? { embedded?.byteRange }

    /// The clip's length in seconds, when its container states it.
    public var duration: Double? { clip.video?.duration }

    /// The video named as the Live Photo still at `path` is (the rule's first step, before the identifiers are
    /// compared), or nil. Costs an `lstat` or two.
    public static func livePhotoVideo(forPhotoAt path: String) -> String? {
        // The name up to its extension, the folder part kept as given
        guard let dot = path.lastIndex(of: "."), !path[dot...].contains("/"), dot > path.startIndex else { return nil }
        let base = path[..<dot]
        for ext in ["MOV", "mov"] {
            let candidate = base + "." + ext
            // A regular file only: a link could point anywhere (out of a served folder, say)
            var status = stat()
            if lstat(candidate, &status) == 0, status.st_mode & S_IFMT == S_IFREG, status.st_size > 0 {
                return candidate
            }
        }
        return nil
    }
}

extension VideoDecoder {
    /// The motion of the photo at `path`: its embedded clip (a Motion Photo) or the video beside it (a Live
    /// Photo, by the rule in ``PhotoMotion``), with the clip's header; nil when it has neither. Reads the photo's
    /// metadata and the clip's header, never a frame; a renamed Live Photo's first still in a folder also reads the
    /// headers of the folder's QuickTime files (bounded, then indexed). A caller that holds the photo's bytes passes
    /// them as `contents` (the metadata is then read from them, not the file); one that knows its format passes
    /// `format` (one read less).
    /// - Throws: `DarkroomImageError`: `.notFound`/`.io` when the photo cannot be read, and what opening the clip
    ///   throws (a damaged or unsupported clip, `DecodeLimits`).
    public func motion(
        ofPhotoAt path: String, format: ImageFileFormat? = nil, contents: [UInt8]? = nil,
        limits: DecodeLimits = .default
    ) throws(DarkroomImageError) -> PhotoMotion? {
        let embedded: EmbeddedVideo?
        if let contents {
            embedded = contents.withUnsafeBytes { ImageProber.embeddedVideo(in: $0) }
        } else {
            embedded = try ImageProber.embeddedVideo(ofFileAt: path)
        }
        if let embedded {
            let clip = try header(ofVideoAt: path, range: embedded.byteRange, limits: limits)
            return PhotoMotion(kind: .motionPhoto, path: path, embedded: embedded, clip: clip, contentIdentifier: nil)
        }
        var format = format
        if format == nil, let contents {
            format = contents.withUnsafeBytes { ImageProber.format(of: $0) }
        } else if format == nil {
            format = try ImageProber.format(ofFileAt: path, limits: limits)
        }
        guard format == .jpeg || format == .heic else { return nil }
        let identifier =
            if let contents {
                contents.withUnsafeBytes { ImageProber.contentIdentifier(in: $0, limits: limits) }
            } else {
                try ImageProber.contentIdentifier(ofFileAt: path, limits: limits)
            }
        if let video = PhotoMotion.livePhotoVideo(forPhotoAt: path),
            try ImageProber.format(ofFileAt: video, limits: limits) == .video
        {
            let clip = try header(ofVideoAt: video, limits: limits)
            let other = clip.video?.contentIdentifier
            if identifier == nil || other == nil || identifier == other {
                return PhotoMotion(
                    kind: .livePhoto, path: video, embedded: nil, clip: clip, contentIdentifier: identifier ?? other)
            }
        }
        guard let identifier, limits.maxLivePhotoCandidates > 0,
            let found = LivePhotoIndex.shared.video(
                withIdentifier: identifier, forPhotoAt: path, limits: limits, reader: self)
        else { return nil }
        return PhotoMotion(
            kind: .livePhoto, path: found.path, embedded: nil, clip: found.clip, contentIdentifier: identifier)
    }
}

extension VideoAnimation {
    /// The motion of the file at `path` as an animation: a video's own preview, or a still's motion (a Motion
    /// Photo's clip, a Live Photo's video beside it; ``VideoDecoder/motion(ofPhotoAt:format:contents:limits:)``).
    /// `format` is the file's when the caller knows it (else its first bytes are read for it). Cost: that of
    /// finding the motion, then of ``init(fileAt:range:options:preview:)``.
    /// - Throws: `DarkroomImageError`: `.unsupportedFeature` when the file has no motion (a still that is not a
    ///   Motion Photo and has no Live Photo video beside it), and what finding and opening the clip throw.
    public convenience init(
        motionOfFileAt path: String, format: ImageFileFormat? = nil, options: DecodeOptions = DecodeOptions(),
        preview: MotionPreview = MotionPreview()
    ) throws(DarkroomImageError) {
        let clip = try Self.clip(ofFileAt: path, format: format, limits: options.limits)
        try self.init(fileAt: clip.path, range: clip.range, options: options, preview: preview)
    }

    /// The motion of the file at `path` made where `decoder` decodes: in its isolation when it has one (the clip
    /// found here, from headers, and its file handed over as a descriptor, read there by ranges and each frame
    /// made there), else in this process (``init(motionOfFileAt:format:options:preview:)``). Isolated, the worker keeps
    /// the clip's decoder until the source is released, and is taken only while a frame is made.
    /// - Throws: `DarkroomImageError` as ``init(motionOfFileAt:format:options:preview:)``, and the isolation's own
    ///   (`.decoderCrashed`, `.limitExceeded`).
    public static func motion(
        ofFileAt path: String, format: ImageFileFormat? = nil, options: DecodeOptions = DecodeOptions(),
        preview: MotionPreview = MotionPreview(), decoder: ImageDecoder
    ) throws(DarkroomImageError) -> any AnimationFrameSource {
        let clip = try clip(ofFileAt: path, format: format, limits: options.limits, isolation: decoder.isolation)
        return try motion(ofClipAt: clip.path, range: clip.range, options: options, preview: preview, decoder: decoder)
    }

    /// The preview of the video at `path` (or of the clip at `range` of it, a Motion Photo's) made where `decoder`
    /// decodes: in its isolation when it has one (the file handed over as a descriptor with the clip's range, read
    /// there by ranges), else here (``init(fileAt:range:options:preview:)``).
    /// - Throws: `DarkroomImageError` as ``init(fileAt:range:options:preview:)``, and the isolation's own.
    public static func motion(
        ofClipAt path: String, range: Range<Int64>? = nil, options: DecodeOptions = DecodeOptions(),
        preview: MotionPreview = MotionPreview(), decoder: ImageDecoder
    ) throws(DarkroomImageError) -> any AnimationFrameSource {
        guard let isolation = decoder.isolation else {
            return try VideoAnimation(fileAt: path, range: range, options: options, preview: preview)
        }
        // A video may be larger than the input limit: only the parts the frames need are read
        let (fd, size) = try FileBytes.openRegularFile(path, limit: .max)
        defer { close(fd) }
        return try isolation.motion(
            file: fd, range: VideoFile.clip(range, in: size, of: path), options: options, preview: preview)
    }

    /// Where the motion of the file at `path` lies: the file itself for a video, a Motion Photo's clip inside it,
    /// a Live Photo's video beside it. Reads headers only (a clip's in `isolation`, when given).
    /// - Throws: `.unsupportedFeature` when the file has no motion, and what reading the headers throws.
    private static func clip(
        ofFileAt path: String, format: ImageFileFormat?, limits: DecodeLimits,
        isolation: (any DecodeIsolation)? = nil
    ) throws(DarkroomImageError) -> (path: String, range: Range<Int64>?) {
        var format = format
        if format == nil { format = try ImageProber.format(ofFileAt: path, limits: limits) }
        if format == .video { return (path, nil) }
        guard
            let motion = try VideoDecoder(isolation: isolation).motion(
                ofPhotoAt: path, format: format, limits: limits)
        else {
            throw DarkroomImageError(
                .unsupportedFeature,
                "the file has no motion: it is not a video, holds no Motion Photo clip and has no Live Photo video beside it"
            )
        }
        return (motion.path, motion.byteRange)
    }
}
