extension ImageProber {
    /// Reads an animation's canvas, per-frame durations and loop count from its container (GIF blocks, APNG
    /// `acTL`/`fcTL`, WebP `ANIM`/`ANMF`, JPEG XL frame headers), decoding no pixels. A still image (or a PNG without `acTL`) gives one
    /// frame of duration 0. Cost: one walk over the block headers; memory: the durations.
    /// - Throws: ``DarkroomImageError`` as `probe(_:limits:)`; `.limitExceeded` past ``DecodeLimits/maxFrames``
    ///   or ``DecodeLimits/maxAnimationPixels``.
    public static func animationInfo(_ bytes: UnsafeRawBufferPointer, limits: DecodeLimits = .default)
        throws(DarkroomImageError) -> AnimationInfo
    {
        try animationDetails(bytes, limits: limits).info
    }

    /// ``animationInfo(_:limits:)`` with the header probe it reads on the way, for callers that need both.
    static func animationDetails(_ bytes: UnsafeRawBufferPointer, limits: DecodeLimits)
        throws(DarkroomImageError) -> (probe: ImageProbe, info: AnimationInfo)
    {
        let probe = try self.probe(bytes, limits: limits)
        let reader = ByteReader(bytes)
        let still = AnimationInfo(
            format: probe.format, canvasWidth: probe.width, canvasHeight: probe.height, durations: [0], loopCount: nil)
        let info: AnimationInfo
        do throws(ProbeStop) {
            switch probe.format {
            case .gif: info = try gifAnimation(reader, probe: probe, limits: limits)
            case .webp where probe.frameCount > 1: info = try webPAnimation(reader, probe: probe)
            case .png where probe.frameCount > 1:
                guard case .animation(let apng) = try APNGReader.read(bytes, isComplete: true, limits: limits) else {
                    info = still
                    break
                }
                info = AnimationInfo(
                    format: .png, canvasWidth: apng.width, canvasHeight: apng.height,
                    durations: apng.frames.map(\.durationMilliseconds), loopCount: apng.plays)
            case .jxl where probe.frameCount > 1:
                do throws(DarkroomImageError) {
                    info = try JXLDecoder.animation(bytes, probe: probe, limits: limits)
                } catch {
                    throw .failed(error)
                }
            default:
                info = still
            }
        } catch {
            switch error {
            case .failed(let failure): throw failure
            case .needMoreData: throw truncatedError(count: bytes.count)
            }
        }
        try checkAnimation(info, limits: limits)
        return (probe, info)
    }

    /// Refuses an animation whose frames × canvas area exceeds ``DecodeLimits/maxAnimationPixels``: the work of
    /// compositing every frame, known from the header.
    static func checkAnimation(_ info: AnimationInfo, limits: DecodeLimits) throws(DarkroomImageError) {
        guard info.frameCount <= limits.maxFrames else {
            throw DarkroomImageError(
                .limitExceeded, "\(info.frameCount) frames exceed maxFrames (\(limits.maxFrames))")
        }
        let (area, areaOverflow) = info.canvasWidth.multipliedReportingOverflow(by: info.canvasHeight)
        let (total, overflow) = area.multipliedReportingOverflow(by: info.frameCount)
        guard !areaOverflow, !overflow, total <= limits.maxAnimationPixels else {
            throw DarkroomImageError(
                .limitExceeded,
                "\(info.frameCount) frames of \(info.canvasWidth)×\(info.canvasHeight) exceed maxAnimationPixels (\(limits.maxAnimationPixels))"
            )
        }
    }

    /// Walks GIF blocks for each complete frame's graphics-control delay and the NETSCAPE2.0 loop count.
    private static func gifAnimation(_ reader: ByteReader, probe: ImageProbe, limits: DecodeLimits) throws(ProbeStop)
        -> AnimationInfo
    {
        let screenFlags = try reader.u8(10)
        var position = 13
        if screenFlags & 0x80 != 0 { position += 3 << ((screenFlags & 7) + 1) }
        var durations: [Int] = []
        var loopCount: Int?
        var delay = 0
        do throws(ProbeStop) {
            blocks: while true {
                switch try reader.u8(position) {
                case 0x3B:
                    break blocks
                case 0x21:
                    let label = try reader.u8(position + 1)
                    position += 2
                    if label == 0xF9, try reader.u8(position) >= 4 {
                        delay = try reader.u16le(position + 2) * 10
                    } else if label == 0xFF, try reader.u8(position) == 11,
                        reader.matches(Array("NETSCAPE2.0".utf8), at: position + 1),
                        try reader.u8(position + 12) >= 3, try reader.u8(position + 13) == 1
                    {
                        loopCount = try reader.u16le(position + 14)
                    }
                    position = try skipGIFSubBlocks(reader, from: position)
                case 0x2C:
                    let flags = try reader.u8(position + 9)
                    position += 10
                    if flags & 0x80 != 0 { position += 3 << ((flags & 7) + 1) }
                    position = try skipGIFSubBlocks(reader, from: position + 1)
                    durations.append(delay)
                    delay = 0
                    if durations.count > limits.maxFrames { throw .tooManyFrames(durations.count, limits) }
                default:
                    throw .corrupt("GIF has an unknown block type at offset \(position)")
                }
            }
        } catch {
            guard case .needMoreData = error, !durations.isEmpty else { throw error }
        }
        return AnimationInfo(
            format: .gif, canvasWidth: probe.width, canvasHeight: probe.height, durations: durations,
            loopCount: loopCount)
    }

    /// Walks an animated WebP's chunks: `ANIM` holds the loop count, each `ANMF` its frame's duration.
    private static func webPAnimation(_ reader: ByteReader, probe: ImageProbe) throws(ProbeStop) -> AnimationInfo {
        let riffEnd = min(try reader.u32le(4) + 8, reader.bytes.count)
        var position = 12
        var durations: [Int] = []
        var loopCount: Int?
        while position + 8 <= riffEnd {
            let type = try reader.u32be(position)
            let size = try reader.u32le(position + 4)
            let payload = position + 8
            if type == 0x414E_494D, size >= 6 {  // "ANIM": background colour (4), loop count (2)
                loopCount = try reader.u16le(payload + 4)
            } else if type == 0x414E_4D46, size >= 16 {  // "ANMF": x, y, w-1, h-1 (3 each), duration (3), flags
                durations.append(try reader.u24le(payload + 12))
            }
            position = payload + size + (size & 1)
        }
        guard !durations.isEmpty else { throw .corrupt("animated WebP has no frames") }
        return AnimationInfo(
            format: .webp, canvasWidth: probe.width, canvasHeight: probe.height, durations: durations,
            loopCount: loopCount ?? 0)
    }
}
