import DarkroomImage
import DarkroomVideo
import Foundation

/// One job's thumbnail: an HDR output when `--hdr` asks for one the source can give, else the decode where the
/// command decodes (in a worker, or in this process).
extension ThumbCommand {
    /// `--hdr apply`, or `--hdr keep` of a source that stays HDR in the job's format (an Ultra HDR JPEG of a
    /// gain-map JPEG or HEIC, a PQ or HLG AVIF of an HDR still), made where `decoder` decodes; false when the job
    /// takes the SDR path (no HDR asked, a video or camera RAW kept, or the output declined the source).
    func writeHDR(
        _ job: ThumbPlan.Job, sourceFormat: ImageFileFormat?, decoder: ImageDecoder, buffer: FileReadBuffer,
        options: DecodeOptions, encode: EncodeOptions
    ) throws -> Bool {
        guard
            let output = HDRThumbnailRequest.Output.asked(
                by: hdr, headroom: headroom, writing: job.format(hasAlpha: false), source: sourceFormat)
        else { return false }
        let format: ImageFileFormat = if case .ultraHDR = output { .jpeg } else { .avif }
        let bytes = try buffer.read(job.input, limit: options.limits.maxInputBytes)
        guard
            let encoded = try decoder.encodeHDRThumbnail(
                bytes, HDRThumbnailRequest(output, options: options, encode: encode))
        else { return false }
        try FileBytes.writeAtomically(encoded, to: job.output(format))
        return true
    }

    /// The job decoded in a worker: a still (a video's frame, a camera RAW and a TIFF included) from its file,
    /// handed over as its descriptor and never read here; an animation's frames made in one.
    func writeIsolated(
        _ job: ThumbPlan.Job, sourceFormat: ImageFileFormat?, decoder: ImageDecoder, options: DecodeOptions,
        encode: EncodeOptions
    ) throws {
        if !still, let animated = job.animatedFormat, let sourceFormat, Self.mayAnimate(sourceFormat),
            AnimatedImageDecoder.formats.contains(sourceFormat),
            let encoded = try Self.animation(
                of: job.input, decoder: decoder, options: options, frameLimit: frames, as: animated, encode: encode)
        {
            try FileBytes.writeAtomically(encoded, to: job.output(animated))
            return
        }
        // A still in a format that may animate, too: decoded as a still (colour, orientation)
        try write(decoder.decode(fileAt: job.input, options: options), job, encode)
    }

    /// The job decoded in this process: a video by FFmpeg and a camera RAW by libraw, each reading the parts of the
    /// file it needs; a TIFF by libtiff, a strip or tile at a time; any other file read whole, its animation
    /// encoded frame by frame.
    func writeInProcess(
        _ job: ThumbPlan.Job, sourceFormat: ImageFileFormat?, buffer: FileReadBuffer, options: DecodeOptions,
        encode: EncodeOptions
    ) throws {
        let image: DecodedImage
        switch sourceFormat {
        case .video:
            image = try VideoDecoder().render(videoAt: job.input, options: options)
        case .raw:
            image = try ImageDecoder().decodeCameraRAW(fileAt: job.input, options: options)
        case .tiff:
            image = try ImageDecoder().decodeTIFF(fileAt: job.input, options: options)
        default:
            let bytes = try buffer.read(job.input, limit: options.limits.maxInputBytes)
            if !still, let animated = job.animatedFormat,
                try ImageProber.probe(bytes, limits: options.limits).frameCount > 1
            {
                // The worker's read buffer outlives the decoder, which stays on this thread: no copy
                let decoder = try AnimatedImageDecoder(
                    EncodedAnimation(borrowing: bytes, limits: options.limits), options: options, frameLimit: frames)
                try FileBytes.writeAtomically(
                    AnimatedImageEncoder.encode(decoder, as: animated, options: encode), to: job.output(animated))
                return
            }
            image = try ImageDecoder().decode(bytes, options: options)
        }
        try write(image, job, encode)
    }

    /// The file's animation encoded as `format` from frames `decoder` makes (in a worker, when isolated), or nil for
    /// a file of one frame. The frame source, and the worker it holds, are released before this returns, so the
    /// caller can decode a still with the same pool.
    static func animation(
        of path: String, decoder: ImageDecoder, options: DecodeOptions, frameLimit: Int?, as format: ImageFileFormat,
        encode: EncodeOptions
    ) throws(DarkroomImageError) -> [UInt8]? {
        let frames = try decoder.animation(fileAt: path, options: options, frameLimit: frameLimit)
        guard frames.frameCount > 1 else { return nil }
        return try AnimatedImageEncoder.encode(frames, as: format, options: encode)
    }

    /// Whether a file of `format` may hold an animation (which the job decodes frame by frame).
    static func mayAnimate(_ format: ImageFileFormat?) -> Bool {
        [.gif, .webp, .png, .avif, .jxl, .heic].contains(format)
    }

    /// Encodes `image` as `job` asks and writes it atomically; a colour profile that was ignored is a warning.
    func write(_ image: DecodedImage, _ job: ThumbPlan.Job, _ baseEncodeOptions: EncodeOptions) throws {
        if let problem = image.colorProblem {
            FileHandle.standardError.write(
                Data("\(job.input): warning: colour profile ignored, treated as sRGB: \(problem)\n".utf8))
        }
        var encodeOptions = baseEncodeOptions
        encodeOptions.colorProfile = image.colorProfile?.data
        let format = job.format(hasAlpha: !image.bitmap.isOpaque)
        try FileBytes.writeAtomically(
            ImageEncoder.encode(image.bitmap, as: format, options: encodeOptions), to: job.output(format))
    }
}
