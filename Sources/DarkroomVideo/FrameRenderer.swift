import CDarkroomVideo
import DarkroomImage

/// One video decode: chooses the frame (the poster frame, or the one at `OutputGeometry/time`), scales the part
/// of it the plan shows straight to the output size, and returns it upright in the asked format.
struct FrameRenderer {
    let video: VideoFile
    let options: DecodeOptions
    let probe: ImageProbe
    let plan: DecodePlan
    /// Whether PQ or HLG light is tone-mapped to SDR (else the signal is shown as if it were SDR).
    let toneMaps: Bool

    init(video: VideoFile, options: DecodeOptions) throws(DarkroomImageError) {
        self.video = video
        self.options = options
        probe = video.probe
        plan = try options.geometry.plan(for: probe)
        toneMaps = probe.hdr?.toneMapped == true
        let bytes = plan.outputBytes(.bgra8Premultiplied) * (toneMaps ? 7 : 2)  // the output, a conversion or the light
        guard bytes <= options.limits.maxDecodedBytes else {
            throw DarkroomImageError(
                .limitExceeded,
                "decoding to \(plan.outputWidth)×\(plan.outputHeight) needs \(bytes) bytes, over maxDecodedBytes (\(options.limits.maxDecodedBytes))"
            )
        }
    }

    /// Opens the clip's decoder, asking one that can decode smaller (MJPEG, some MPEG-4) for the largest reduction
    /// the plan allows (down to an eighth); the others ignore it.
    func openDecoder() throws(DarkroomImageError) {
        let d = plan.shrinkOnLoadDenominator(options)
        try video.openDecoder(lowres: d >= 8 ? 3 : d >= 4 ? 2 : d >= 2 ? 1 : 0)
    }

    func render() throws(DarkroomImageError) -> DecodedImage {
        try openDecoder()
        let final = ImageDecoder.outputFormat(probe, options.geometry.pixelFormat)
        let working: PixelFormat = final == .gray8 && !toneMaps ? .gray8 : .bgra8Premultiplied
        var bitmap: Bitmap
        if let time = options.geometry.time {
            bitmap = try frame(at: time, working)
        } else {
            bitmap = try posterFrame(working)
        }
        if bitmap.format != final { bitmap = try bitmap.converted(to: final) }
        if options.geometry.appliesOrientation && probe.orientation != .up {
            bitmap = try bitmap.applying(probe.orientation)
        }
        let coded = probe.video?.codedWidth ?? probe.width
        return DecodedImage(
            bitmap: bitmap, probe: probe, shrinkDenominator: max(1, coded / max(1, video.frameSize.width)),
            convertedToSRGB: toneMaps)
    }

    // MARK: Choosing the frame

    /// The time before which the decoder may skip frames no other frame refers to, when no frame presented before
    /// `shown` is shown: a millisecond before it, but never within the clip's last half second (a time past the end
    /// shows the last frame, which must then be the last one there is), and never in a clip of unknown length.
    func skipBound(showingFrom shown: Double) -> Double {
        guard let duration = probe.video?.duration else { return 0 }
        return min(shown - 0.001, duration - 0.5)
    }

    /// The frame at `seconds`: the first whose presentation time is at or after it (the frame `ffmpeg -ss` gives),
    /// decoded from the keyframe before it; the last frame when `seconds` is past the end, and the last good one
    /// when the stream breaks or `DecodeLimits/maxVideoFramesDecoded` runs out on the way.
    func frame(at seconds: Double, _ format: PixelFormat) throws(DarkroomImageError) -> Bitmap {
        guard seconds.isFinite, seconds >= 0 else {
            throw DarkroomImageError(.invalidArgument, "a video time must be a number of seconds ≥ 0, got \(seconds)")
        }
        try video.seek(to: seconds)
        let skip = skipBound(showingFrom: seconds - 0.0005)
        var decoded = 0
        var lastError: DarkroomImageError?
        while decoded < options.limits.maxVideoFramesDecoded {
            let step: VideoFile.FrameStep
            do throws(DarkroomImageError) {
                step = try video.nextFrame(keyframesOnly: false, skippingBefore: skip)
            } catch {
                lastError = error
                break
            }
            guard case .frame(let time) = step else { break }
            decoded += 1
            if let time, time >= seconds - 0.0005 { break }
        }
        guard decoded > 0 else {
            throw lastError ?? DarkroomImageError(.corrupt, "the video has no frame at or before \(seconds) s")
        }
        return try scaled(format)
    }

    /// The poster frame, as ffmpegthumbnailer and totem choose it: the keyframe at or before a tenth of the duration,
    /// else the keyframes at later points (a quarter, …) while the frames found are black or blank (one colour), the
    /// frame with the most detail when all of them are. Never decodes the whole file: a keyframe per try, at most
    /// `DecodeLimits/maxVideoFramesDecoded` of them.
    func posterFrame(_ format: PixelFormat) throws(DarkroomImageError) -> Bitmap {
        let fractions = [0.1, 0.25, 0.4, 0.55, 0.7, 0.85]
        let tries = min(fractions.count, options.limits.maxVideoFramesDecoded)
        var best: (bitmap: Bitmap, detail: Double)?
        var lastTime: Double?
        var lastError: DarkroomImageError?
        for fraction in fractions.prefix(tries) {
            do throws(DarkroomImageError) {
                if let duration = probe.video?.duration, duration > 0 {
                    try video.seek(to: duration * fraction)
                } else if fraction == fractions[0] {
                    // Without a duration the tries are the keyframes from the start on, one after another
                    try video.seek(to: 0)
                }
                var step = try video.nextFrame(keyframesOnly: true)
                // A short clip has few keyframes: a later point may seek back to the one already tried
                if case .frame(let time) = step, let time, let lastTime, time <= lastTime {
                    step = try video.nextFrame(keyframesOnly: true)
                }
                guard case .frame(let time) = step else { break }
                lastTime = time ?? lastTime
                let bitmap = try scaled(format)
                let look = FrameLook(bitmap)
                if !look.isBlank { return bitmap }
                if best == nil || look.detail > best!.detail { best = (bitmap, look.detail) }
            } catch {
                lastError = error
            }
        }
        if let best { return best.bitmap }
        // No keyframe could be decoded where the poster frame is looked for: the first frame that decodes
        try video.seek(to: 0)
        for _ in 0..<max(1, options.limits.maxVideoFramesDecoded) {
            do throws(DarkroomImageError) {
                guard case .frame = try video.nextFrame(keyframesOnly: false) else { break }
                return try scaled(format)
            } catch {
                lastError = error
                if error.code == .limitExceeded { break }
            }
        }
        throw lastError ?? DarkroomImageError(.corrupt, "no frame of the video could be decoded")
    }

    // MARK: Scaling

    /// The current frame's part the plan shows, scaled to the output size in `format` (BGRA or gray; a tone-mapped
    /// frame is always BGRA).
    func scaled(_ format: PixelFormat, allocate: BitmapAllocator = Bitmap.allocateOnHeap) throws(DarkroomImageError)
        -> Bitmap
    {
        let frame = video.frameSize
        let sx = Double(frame.width) / Double(probe.width)
        let sy = Double(frame.height) / Double(probe.height)
        let r = plan.sourceRect
        let x0 = max(0, Int((r.x * sx).rounded(.down)))
        let y0 = max(0, Int((r.y * sy).rounded(.down)))
        let x1 = min(frame.width, max(x0 + 1, Int(((r.x + r.width) * sx).rounded(.up))))
        let y1 = min(frame.height, max(y0 + 1, Int(((r.y + r.height) * sy).rounded(.up))))
        let region = (x: x0, y: y0, width: x1 - x0, height: y1 - y0)
        let (w, h) = (plan.outputWidth, plan.outputHeight)
        let filter = Self.filter(options.filter)
        if toneMaps, let hdr = probe.hdr {
            return try HDRReducedImage.toneMapped(
                width: w, height: h, transfer: hdr.transfer == "pq" ? 16 : 18, primaries: hdr.primaries,
                limits: options.limits,
                allocate: allocate,
                fill: { (pixels, bytesPerRow) throws(DarkroomImageError) in
                    try video.scale(
                        region: region, into: UnsafeMutableRawPointer(pixels), bytesPerRow: bytesPerRow, width: w,
                        height: h, pixels: DR_VIDEO_RGBA16, filter: filter)
                })
        }
        let bitmap = try allocate(w, h, format, true)
        try video.scale(
            region: region, into: bitmap.storage.baseAddress, bytesPerRow: bitmap.bytesPerRow, width: w, height: h,
            pixels: format == .gray8 ? DR_VIDEO_GRAY8 : DR_VIDEO_BGRA8, filter: filter)
        return bitmap
    }

    private static func filter(_ filter: ResamplingFilter) -> dr_video_filter {
        switch filter {
        case .lanczos3: DR_VIDEO_LANCZOS
        case .triangle: DR_VIDEO_BILINEAR
        case .box: DR_VIDEO_AREA
        }
    }
}
