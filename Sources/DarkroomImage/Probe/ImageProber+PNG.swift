extension ImageProber {
    /// Chunk types, as big-endian four-character codes.
    private enum PNGChunk {
        static let ihdr = 0x4948_4452
        static let idat = 0x4944_4154
        static let iend = 0x4945_4E44
        static let iccp = 0x6943_4350
        static let trns = 0x7452_4E53
        static let actl = 0x6163_544C
        static let exif = 0x6558_4966
        static let cicp = 0x6349_4350
        static let clli = 0x634C_4C69
    }

    /// Reads IHDR, then walks the chunks before the first IDAT for iCCP, tRNS, acTL (APNG), eXIf, and cICP and cLLi
    /// (an HDR image's transfer and content light level: cICP is above iCCP, as PNG's third edition says).
    /// CRCs are not checked; every chunk length must be valid and stay inside the data. An APNG's chunks are then
    /// walked to the end (``APNGReader``): its frame count is `acTL`'s when its animation chunks follow the
    /// specification, and 1 when they do not (the file is then its default image).
    static func probePNG(_ reader: ByteReader, isComplete: Bool, limits: DecodeLimits) throws(ProbeStop)
        -> ImageProbe
    {
        // Signature (8 bytes), then IHDR: length 13, "IHDR", 13 bytes of data, CRC.
        guard try reader.u32be(12) == PNGChunk.ihdr else { throw .corrupt("PNG does not start with IHDR") }
        guard try reader.u32be(8) == 13 else { throw .corrupt("PNG IHDR length is not 13") }
        try reader.require(16, 13)
        let width = try reader.u32be(16)
        let height = try reader.u32be(20)
        let bitDepth = try reader.u8(24)
        let colorType = try reader.u8(25)
        let interlace = try reader.u8(28)
        guard width > 0, height > 0, width <= 0x7FFF_FFFF, height <= 0x7FFF_FFFF else {
            throw .corrupt("PNG size \(width)×\(height) is invalid")
        }
        guard isValidPNGDepth(bitDepth, colorType: colorType) else {
            throw .corrupt("PNG bit depth \(bitDepth) is invalid for color type \(colorType)")
        }
        guard try reader.u8(26) == 0, try reader.u8(27) == 0, interlace <= 1 else {
            throw .corrupt("PNG compression, filter or interlace method is invalid")
        }

        var result = ImageProbe(
            format: .png, width: width, height: height,
            hasAlpha: colorType == 4 || colorType == 6,
            isGrayscale: colorType == 0 || colorType == 4,
            isProgressive: interlace == 1, bitDepth: bitDepth)
        var position = 8 + 12 + 13
        var hasAnimationControl = false
        var cicp: EmbeddedColor.CICP?
        var lightLevel: (maxCLL: Int, maxFALL: Int)?
        while true {
            let length = try reader.u32be(position)
            guard length <= 0x7FFF_FFFF else { throw .corrupt("PNG chunk length \(length) is over 2^31-1") }
            let type = try reader.u32be(position + 4)
            guard isValidChunkType(type) else { throw .corrupt("PNG chunk type is not four letters") }
            let data = position + 8
            switch type {
            case PNGChunk.idat:
                if let cicp = cicp ?? hdrProfileSignal(reader.bytes, result, limits: limits) {
                    // cICP is above iCCP: no profile takes precedence; an HDR profile is read as its signal
                    result.hdr = HDRDetails(
                        primaries: cicp.primaries, transfer: cicp.transfer, hasICC: false, lightLevel: lightLevel)
                }
                guard hasAnimationControl else { return result }
                do throws(ProbeStop) {
                    if case .animation(let animation) = try APNGReader.read(
                        reader.bytes, isComplete: isComplete, limits: limits)
                    {
                        result.frameCount = animation.declaredFrameCount
                    }
                } catch {
                    // A whole input cut before its first frame is complete: its default image is what there is.
                    guard case .needMoreData = error, isComplete else { throw error }
                }
                return result
            case PNGChunk.iend:
                throw .corrupt("PNG has no image data (IEND before IDAT)")
            case PNGChunk.ihdr:
                throw .corrupt("PNG has a second IHDR")
            case PNGChunk.iccp:
                result.hasICCProfile = true
            case PNGChunk.trns:
                result.hasAlpha = true
            case PNGChunk.actl:
                hasAnimationControl = true
            case PNGChunk.cicp:
                cicp = EmbeddedColor.CICP(pngPayload: try reader.slice(data, length))
            case PNGChunk.clli where length == 8:
                // Both in units of 0.0001 nits
                lightLevel = (try reader.u32be(data) / 10_000, try reader.u32be(data + 4) / 10_000)
            case PNGChunk.exif:
                let payload = try reader.slice(data, length)
                if let orientation = ExifReader.orientation(exifPayload: payload) {
                    result.orientation = orientation
                }
            default:
                break
            }
            position = data + length + 4  // data, then the CRC
        }
    }

    /// Whether `depth` is allowed for `colorType` (PNG specification, table 11.1).
    private static func isValidPNGDepth(_ depth: Int, colorType: Int) -> Bool {
        switch colorType {
        case 0: depth == 1 || depth == 2 || depth == 4 || depth == 8 || depth == 16
        case 3: depth == 1 || depth == 2 || depth == 4 || depth == 8
        case 2, 4, 6: depth == 8 || depth == 16
        default: false
        }
    }

    /// Whether all four bytes of a chunk type are ASCII letters.
    private static func isValidChunkType(_ type: Int) -> Bool {
        for shift in stride(from: 0, through: 24, by: 8) {
            let folded = (type >> shift) & 0xFF | 0x20  // lowercase
            guard folded >= 0x61, folded <= 0x7A else { return false }
        }
        return true
    }

    /// The PQ or HLG signal a 16-bit RGB or gray PNG's `iCCP` profile describes (``ICCHDRSignal``; the profile inflated by
    /// libspng, once, for such files only); nil for other files.
    private static func hdrProfileSignal(_ bytes: UnsafeRawBufferPointer, _ probe: ImageProbe, limits: DecodeLimits)
        -> EmbeddedColor.CICP?
    {
        guard probe.hasICCProfile, probe.bitDepth == 16,
            case .icc(let icc) = EmbeddedColor.readPNG(bytes, limits: limits).color
        else { return nil }
        return icc.withUnsafeBytes { ICCHDRSignal.cicp($0) }
    }
}
