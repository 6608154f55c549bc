import DarkroomImage
import DarkroomVideo

extension ThumbCommand {
    /// `--motion`: a video's preview, or a still's motion (a Motion Photo's clip, a Live Photo's video), as an
    /// animation of the job's animated format (WebP unless GIF was asked for), frames decoded as they are encoded,
    /// where `decoder` decodes (in a worker, when isolated).
    func writeMotion(
        _ job: ThumbPlan.Job, sourceFormat: ImageFileFormat?, decoder: ImageDecoder, options: DecodeOptions,
        encode: EncodeOptions
    ) throws(DarkroomImageError) {
        let preview = MotionPreview(seconds: motionSeconds, framesPerSecond: motionFPS, start: time)
        let animation = try VideoAnimation.motion(
            ofFileAt: job.input, format: sourceFormat, options: options, preview: preview, decoder: decoder)
        let format: ImageFileFormat = job.animatedFormat == .gif ? .gif : .webp
        let encoded = try AnimatedImageEncoder.encode(animation, as: format, options: encode)
        try FileBytes.writeAtomically(encoded, to: job.output(format))
    }
}
