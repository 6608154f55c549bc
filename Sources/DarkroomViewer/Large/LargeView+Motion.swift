import Darkroom
import DarkroomImage
import DarkroomVideo

extension LargeView {
    /// The fastest a clip plays in the large view: a clip shot faster has frames dropped to this rate.
    static let maxMotionFramesPerSecond = 30.0

    /// Whether the file at `path` may have motion to play: a video, or a still a phone writes Motion Photos and
    /// Live Photos as (JPEG, HEIC, AVIF), by its extension. The file itself says whether it has.
    static func mayHaveMotion(_ path: String) -> Bool {
        FileExtensions.of(path).map { FileExtensions.videos.contains($0) || FileExtensions.motionStills.contains($0) }
            ?? false
    }

    /// The player of the motion of the file at `path`, fitted to `width`×`height` (never enlarged), or nil when a
    /// still has none: a video's whole clip from its start, looping; a still's motion (a Motion Photo's clip, a Live
    /// Photo's video) played once, after which the still is shown again. Frames at the clip's rate up to
    /// ``maxMotionFramesPerSecond``, at most `DecodeLimits/maxFrames` of them (a longer clip plays its start);
    /// decoded as they play, into a buffer of `budgetBytes`, never the clip held. No sound. With an `isolation`, the
    /// clip's header is read and its frames made in a decode worker, held only while a frame is made. Blocking: it
    /// reads the file's header (and a still's metadata); call it off the drawing thread.
    /// - Throws: `DarkroomImageError` when the clip cannot be opened (damaged, unsupported, over a limit).
    static func motionPlayer(
        for path: String, width: Int, height: Int, budgetBytes: Int, isolation: (any DecodeIsolation)? = nil
    ) throws(DarkroomImageError) -> AnimationPlayer? {
        let options = DecodeOptions(
            geometry: OutputGeometry(
                size: .fit(width: width, height: height), pixelFormat: .exactly(.bgra8Premultiplied)))
        let isVideo = FileExtensions.isVideo(path)
        let videos = VideoDecoder(isolation: isolation)
        let clip: (path: String, range: Range<Int64>?, probe: ImageProbe)
        if isVideo {
            clip = (path, nil, try videos.header(ofVideoAt: path, limits: options.limits))
        } else {
            guard let motion = try videos.motion(ofPhotoAt: path, limits: options.limits) else { return nil }
            clip = (motion.path, motion.byteRange, motion.clip)
        }
        let rate = min(clip.probe.video?.frameRate ?? maxMotionFramesPerSecond, maxMotionFramesPerSecond)
        let seconds = clip.probe.video?.duration ?? Double(options.limits.maxFrames) / rate
        let preview = MotionPreview(seconds: seconds, framesPerSecond: rate, start: 0, loopCount: isVideo ? 0 : 1)
        return try AnimationPlayer(
            source: { () throws(DarkroomImageError) in
                try VideoAnimation.motion(
                    ofClipAt: clip.path, range: clip.range, options: options, preview: preview,
                    decoder: ImageDecoder(isolation: isolation))
            }, budgetBytes: budgetBytes)
    }
}
