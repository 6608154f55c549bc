import Darkroom
import DarkroomImage
import DarkroomVideo

/// Encoding a render: stills in the variant's format (quality bisected down for `max_bytes`), animations frame by
/// frame. Every function here blocks: call it on a pipeline processing thread.
extension ThumbnailRenderer {
    /// Decodes an animation frame by frame at the requested size and encodes it as it goes (blocking: call on a
    /// pipeline thread): one source canvas, one output frame and the encoder's state in memory, at most
    /// ``ServerConfiguration/Limits/maxAnimationFrames`` frames. With decode workers, a worker composites and
    /// resamples each frame (keeping the decoder between frames, taken only while a frame is made).
    func animate(_ bytes: [UInt8], parameters: ThumbnailParameters, format: ImageFileFormat)
        throws(ServerError) -> EncodedThumbnail
    {
        stepObserver?("encode")
        do throws(DarkroomImageError) {
            let options = DecodeOptions(geometry: parameters.geometry, limits: configuration.limits.decode)
            // Each frame made where the pipeline decodes: in a confined worker unless the server decodes in-process
            let frames = try pipeline.configuration.decoder.animation(
                bytes, options: options, frameLimit: configuration.limits.maxAnimationFrames)
            return try encodeAnimation(frames, parameters: parameters, format: format)
        } catch {
            throw ServerError(
                mapping:
                    DarkroomError(
                        .decodeFailed, "the animation could not be rendered: \(error.message)", underlying: error)
            )
        }
    }

    /// `motion=1`: a video's motion, or a Motion Photo's or Live Photo's, as an animation (blocking: call on a
    /// pipeline thread) — a few seconds at the parameters' size from `time=` (or the start of a short clip, a
    /// tenth of a long one), each frame decoded as it is encoded (`VideoAnimation`; with decode workers, in a worker
    /// that reads the clip by ranges, taken only while a frame is made). `path` is a file under the root; a Live
    /// Photo's video is the regular file beside it with its base name.
    func motion(_ path: String, parameters: ThumbnailParameters, format: ImageFileFormat)
        throws(ServerError) -> EncodedThumbnail
    {
        stepObserver?("encode")
        do throws(DarkroomImageError) {
            let options = DecodeOptions(geometry: parameters.geometry, limits: configuration.limits.decode)
            // Each frame made where the pipeline decodes: in a confined worker unless the server decodes in-process
            let animation = try VideoAnimation.motion(
                ofFileAt: path, options: options, decoder: pipeline.configuration.decoder)
            return try encodeAnimation(animation, parameters: parameters, format: format)
        } catch {
            throw ServerError(
                mapping: DarkroomError(
                    .decodeFailed, "the motion could not be rendered: \(error.message)", underlying: error))
        }
    }

    /// Encodes every frame of `decoder` in `format`, through the parameters' operations when there are any.
    private func encodeAnimation(
        _ decoder: some AnimationFrameSource, parameters: ThumbnailParameters, format: ImageFileFormat
    ) throws(DarkroomImageError) -> EncodedThumbnail {
        let quality = quality(parameters, format)
        let processors = parameters.processors
        guard !processors.isEmpty else {
            let encoded = try AnimatedImageEncoder.encode(
                decoder, as: format, options: EncodeOptions(quality: quality))
            return EncodedThumbnail(
                bytes: encoded, format: format, width: decoder.outputWidth, height: decoder.outputHeight)
        }
        // Every frame goes through the request's operations; the encoder takes the processed size.
        var encoder: AnimatedImageEncoder?
        while let frame = try decoder.nextFrame() {
            var bitmap = frame.bitmap
            do {
                for processor in processors { bitmap = try processor.process(bitmap) }
            } catch {
                throw DarkroomImageError(.invalidArgument, "an operation failed on frame \(frame.index): \(error)")
            }
            if encoder == nil {
                encoder = try AnimatedImageEncoder(
                    format: format, width: bitmap.width, height: bitmap.height, plays: decoder.info.plays,
                    options: EncodeOptions(quality: quality))
            }
            try encoder?.add(bitmap, duration: frame.duration)
        }
        guard let encoder else { throw DarkroomImageError(.corrupt, "the animation has no frames") }
        return EncodedThumbnail(
            bytes: try encoder.finish(), format: format, width: encoder.width, height: encoder.height)
    }

    /// An Ultra HDR JPEG thumbnail of an Ultra HDR source (blocking: call on a pipeline thread): the base and its
    /// gain map each resized and encoded; nil when the source has no usable gain map or the geometry crops.
    func ultraHDR(_ bytes: [UInt8], parameters: ThumbnailParameters) throws(ServerError) -> EncodedThumbnail? {
        try fromSourceBytes(.jpeg, what: "Ultra HDR", parameters: parameters) { options throws(DarkroomImageError) in
            try hdrThumbnail(
                bytes,
                HDRThumbnailRequest(
                    .ultraHDR, options: options,
                    encode: EncodeOptions(quality: quality(parameters, .jpeg), progressive: parameters.progressive)))
        }
    }

    /// A 10-bit AVIF of a PQ or HLG source that stays HDR in its own transfer (`hdr=keep`; blocking: call on a pipeline thread), or
    /// nil when the source is not one.
    func hdrSignal(_ bytes: [UInt8], parameters: ThumbnailParameters) throws(ServerError) -> EncodedThumbnail? {
        try fromSourceBytes(.avif, what: "HDR", parameters: parameters) { options throws(DarkroomImageError) in
            try hdrThumbnail(
                bytes,
                HDRThumbnailRequest(
                    .signal, options: options,
                    encode: EncodeOptions(quality: quality(parameters, .avif), speed: configuration.avifSpeed)))
        }
    }

    /// A 10-bit PQ AVIF for HDR displays (blocking: call on a pipeline thread): a gain map applied for the
    /// parameters' headroom, a PQ or HLG source's light rolled off to it, an SDR source's light kept at SDR white.
    func hdrDisplay(_ bytes: [UInt8], parameters: ThumbnailParameters) throws(ServerError) -> EncodedThumbnail {
        let thumbnail = try fromSourceBytes(.avif, what: "HDR", parameters: parameters) {
            options throws(DarkroomImageError) in
            try hdrThumbnail(
                bytes,
                HDRThumbnailRequest(
                    .display(headroom: parameters.headroom), options: options,
                    encode: EncodeOptions(quality: quality(parameters, .avif), speed: configuration.avifSpeed)))
        }
        guard let thumbnail else { throw ServerError(.internalError, "the HDR thumbnail encoder returned nothing") }
        return thumbnail
    }

    /// An HDR output made where the pipeline decodes: in a confined worker unless the server decodes in-process.
    private func hdrThumbnail(_ bytes: [UInt8], _ request: HDRThumbnailRequest) throws(DarkroomImageError)
        -> [UInt8]?
    {
        try pipeline.configuration.decoder.encodeHDRThumbnail(bytes, request)
    }

    /// A thumbnail that `encode` makes from the source's bytes itself (not from the pipeline's bitmap), at the
    /// parameters' geometry, sized by probing what it wrote; nil when `encode` declines. Errors become the
    /// server's, naming `what` was rendered.
    private func fromSourceBytes(
        _ format: ImageFileFormat, what: String, parameters: ThumbnailParameters,
        _ encode: (DecodeOptions) throws(DarkroomImageError) -> [UInt8]?
    ) throws(ServerError) -> EncodedThumbnail? {
        stepObserver?("encode")
        do throws(DarkroomImageError) {
            guard
                let encoded = try encode(
                    DecodeOptions(geometry: parameters.geometry, limits: configuration.limits.decode))
            else { return nil }
            let probe = try ImageProber.probe(encoded)
            return EncodedThumbnail(bytes: encoded, format: format, width: probe.width, height: probe.height)
        } catch {
            throw ServerError(
                mapping: DarkroomError(
                    .decodeFailed, "the \(what) thumbnail could not be rendered: \(error.message)", underlying: error))
        }
    }

    /// Encodes the rendered bitmap in the variant's format (blocking: call on a pipeline thread).
    func encode(_ container: ImageContainer, variant: OutputVariant, parameters: ThumbnailParameters)
        throws(ServerError) -> EncodedThumbnail
    {
        stepObserver?("encode")
        let bitmap = container.bitmap
        let hasAlpha = !bitmap.isOpaque && bitmap.format != .gray8
        var format = variant.fileFormat(hasAlpha: hasAlpha, source: container.probe?.format)
        // Kept metadata goes into JPEG or PNG only
        if parameters.keepMetadata != nil, format != .jpeg, format != .png { format = hasAlpha ? .png : .jpeg }
        let bytes: [UInt8]
        do throws(DarkroomImageError) {
            if format == .gif {  // a still as GIF: a one-frame animation
                let encoder = try AnimatedImageEncoder(
                    format: .gif, width: bitmap.width, height: bitmap.height, plays: 1)
                try encoder.add(bitmap, duration: 0)
                return EncodedThumbnail(
                    bytes: try encoder.finish(), format: .gif, width: bitmap.width, height: bitmap.height)
            }
            var options = EncodeOptions(
                quality: quality(parameters, format),
                progressive: parameters.progressive, speed: configuration.avifSpeed,
                colorProfile: container.colorProfile?.data)
            bytes = try Self.encode(bitmap, as: format, options: &options, maxBytes: parameters.maxBytes)
        } catch {
            throw ServerError(.internalError, "encoding \(format.rawValue) failed: \(error.message)", underlying: error)
        }
        return EncodedThumbnail(bytes: bytes, format: format, width: bitmap.width, height: bitmap.height)
    }

    /// The quality for `format`: the request's `q`, else its `fq` for the format, else the configured default.
    func quality(_ parameters: ThumbnailParameters, _ format: ImageFileFormat) -> Int {
        parameters.quality ?? parameters.formatQuality[format] ?? configuration.limits.quality(for: format)
    }

    /// Encodes at `options.quality`; with `maxBytes` and a lossy format (JPEG, WebP, AVIF), lowers the quality by
    /// bisection (at most 5 more encodes, down to quality 5) until the bytes fit, answering the smallest encoding
    /// when none does (imgproxy's `max_bytes`). PNG and GIF are written once.
    static func encode(_ bitmap: Bitmap, as format: ImageFileFormat, options: inout EncodeOptions, maxBytes: Int?)
        throws(DarkroomImageError) -> [UInt8]
    {
        var best = try ImageEncoder.encode(bitmap, as: format, options: options)
        guard let maxBytes, best.count > maxBytes, [.jpeg, .webp, .avif].contains(format) else { return best }
        var low = 5
        var high = options.quality - 1
        while low <= high {
            options.quality = (low + high) / 2
            let attempt = try ImageEncoder.encode(bitmap, as: format, options: options)
            if attempt.count <= maxBytes {
                best = attempt
                low = options.quality + 1
            } else {
                if attempt.count < best.count { best = attempt }
                high = options.quality - 1
            }
        }
        return best
    }
}
