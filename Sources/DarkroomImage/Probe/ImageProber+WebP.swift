extension ImageProber {
    /// Chunk names, as big-endian four-character codes.
    private enum WebPChunk {
        static let vp8 = 0x5650_3820  // "VP8 "
        static let vp8l = 0x5650_384C
        static let vp8x = 0x5650_3858
        static let anmf = 0x414E_4D46
        static let alph = 0x414C_5048
        static let exif = 0x4558_4946
        static let iccp = 0x4943_4350
    }

    /// VP8X feature flags.
    private enum VP8XFlag {
        static let icc = 0x20
        static let alpha = 0x10
        static let exif = 0x08
        static let animation = 0x02
    }

    /// Reads a RIFF/WebP container: a simple lossy ("VP8 ") or lossless ("VP8L") file, or an extended one
    /// ("VP8X") whose chunks are walked for ANMF frames, ALPH, EXIF and ICCP.
    static func probeWebP(_ reader: ByteReader, limits: DecodeLimits) throws(ProbeStop) -> ImageProbe {
        let riffSize = try reader.u32le(4)
        guard riffSize >= 4 + 8 else { throw .corrupt("WebP RIFF size \(riffSize) is too small") }
        let riffEnd = 8 + riffSize
        let first = 12
        let firstType = try reader.u32be(first)
        let firstSize = try reader.u32le(first + 4)
        guard first + 8 + firstSize <= riffEnd else { throw .corrupt("WebP chunk runs past the RIFF end") }

        switch firstType {
        case WebPChunk.vp8:
            let (width, height) = try lossySize(reader, chunk: first, size: firstSize)
            return ImageProbe(format: .webp, width: width, height: height)
        case WebPChunk.vp8l:
            let (width, height, alpha) = try losslessHeader(reader, chunk: first, size: firstSize)
            return ImageProbe(format: .webp, width: width, height: height, hasAlpha: alpha)
        case WebPChunk.vp8x:
            return try extended(reader, chunk: first, size: firstSize, riffEnd: riffEnd, limits: limits)
        default:
            throw .corrupt("WebP starts with an unknown chunk")
        }
    }

    /// The size in a "VP8 " chunk's key frame header.
    private static func lossySize(_ reader: ByteReader, chunk: Int, size: Int) throws(ProbeStop) -> (Int, Int) {
        guard size >= 10 else { throw .corrupt("WebP VP8 chunk is \(size) bytes, too small for a frame header") }
        let data = chunk + 8
        try reader.require(data, 10)
        guard try reader.u8(data) & 1 == 0 else { throw .corrupt("WebP VP8 data does not start with a key frame") }
        guard try reader.u8(data + 3) == 0x9D, try reader.u8(data + 4) == 0x01, try reader.u8(data + 5) == 0x2A else {
            throw .corrupt("WebP VP8 start code is missing")
        }
        let width = try reader.u16le(data + 6) & 0x3FFF
        let height = try reader.u16le(data + 8) & 0x3FFF
        guard width > 0, height > 0 else { throw .corrupt("WebP VP8 size \(width)×\(height)") }
        return (width, height)
    }

    /// The size and alpha hint in a "VP8L" chunk's header.
    private static func losslessHeader(_ reader: ByteReader, chunk: Int, size: Int)
        throws(ProbeStop) -> (Int, Int, Bool)
    {
        guard size >= 5 else { throw .corrupt("WebP VP8L chunk is \(size) bytes, too small for a header") }
        let data = chunk + 8
        guard try reader.u8(data) == 0x2F else { throw .corrupt("WebP VP8L signature is missing") }
        let bits = try reader.u32le(data + 1)
        guard bits >> 29 == 0 else { throw .corrupt("WebP VP8L version \(bits >> 29) is unknown") }
        return ((bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1, (bits >> 28) & 1 == 1)
    }

    /// An extended file: canvas and flags from VP8X, then the chunks that follow, walked only as far as needed.
    private static func extended(
        _ reader: ByteReader, chunk: Int, size: Int, riffEnd: Int,
        limits: DecodeLimits
    ) throws(ProbeStop) -> ImageProbe {
        guard size >= 10 else { throw .corrupt("WebP VP8X chunk is \(size) bytes, expected 10") }
        let data = chunk + 8
        let flags = try reader.u8(data)
        let width = try reader.u24le(data + 4) + 1
        let height = try reader.u24le(data + 7) + 1
        let isAnimated = flags & VP8XFlag.animation != 0
        let wantsExif = flags & VP8XFlag.exif != 0
        var result = ImageProbe(
            format: .webp, width: width, height: height,
            hasAlpha: flags & VP8XFlag.alpha != 0,
            hasICCProfile: flags & VP8XFlag.icc != 0)
        var frames = 0
        var sawImage = false
        var sawExif = false
        var position = data + size + (size & 1)

        // An animation must be walked to its end to count frames; a still image until its image data and,
        // when the flags announce one, its EXIF chunk (which normally follows the image data).
        while position < riffEnd, isAnimated || !sawImage || (wantsExif && !sawExif) {
            guard riffEnd - position >= 8 else { break }  // trailing bytes too short for a chunk header
            let type = try reader.u32be(position)
            let chunkSize = try reader.u32le(position + 4)
            let payload = position + 8
            guard payload + chunkSize <= riffEnd else { throw .corrupt("WebP chunk runs past the RIFF end") }
            switch type {
            case WebPChunk.anmf:
                frames += 1
                if frames > limits.maxFrames { throw .tooManyFrames(frames, limits) }
            case WebPChunk.alph:
                result.hasAlpha = true
            case WebPChunk.iccp:
                result.hasICCProfile = true
            case WebPChunk.vp8:
                sawImage = true
            case WebPChunk.vp8l:
                sawImage = true
                if try losslessHeader(reader, chunk: position, size: chunkSize).2 { result.hasAlpha = true }
            case WebPChunk.exif where !sawExif:
                sawExif = true
                if let orientation = ExifReader.orientation(exifPayload: try reader.slice(payload, chunkSize)) {
                    result.orientation = orientation
                }
            default:
                break
            }
            position = payload + chunkSize + (chunkSize & 1)
        }

        if isAnimated {
            guard frames > 0 else { throw .corrupt("animated WebP has no frames") }
            result.frameCount = frames
        } else if !sawImage {
            throw .corrupt("WebP has no image data")
        }
        return result
    }
}
