import DarkroomImage
import DarkroomVideo

extension FuzzLimits {
    /// The video limits: the decode limits, a frame's decode cut at a quarter second, 8 frames and 500 packets.
    package static let video: DecodeLimits = {
        var limits = decode
        limits.maxVideoDecodeSeconds = 0.25
        limits.maxVideoFramesDecoded = 8
        limits.maxVideoPacketsPerFrame = 500
        return limits
    }()
}

extension FuzzTarget {
    /// Videos: the container's header through FFmpeg (the C shim's custom I/O and whitelists), the poster frame,
    /// or a frame at a time, at 32 px; a Motion Photo's clip, found by the locator, through the same.
    package static let video = FuzzTarget(
        name: "video",
        summary: "VideoDecoder: header, poster frame or a frame at a time at 32 px; a Motion Photo's clip"
    ) { bytes in
        let decoder = VideoDecoder()
        var options = DecodeOptions(size: .maxPixelSize(32), limits: FuzzLimits.video)
        if bytes.count % 2 == 1 { options.geometry.time = 0.15 }
        var clip = bytes
        if let embedded = ImageProber.embeddedVideo(in: bytes) {
            clip = UnsafeRawBufferPointer(rebasing: bytes[embedded.offset..<(embedded.offset + embedded.length)])
        }
        guard let probe = try? decoder.probe(clip, limits: FuzzLimits.video) else { return }
        _ = try? decoder.decode(clip, probe: probe, options: options)
    }
}
