import CSPNG

/// How an image file describes its colours, as read from its bytes before lcms2 sees them.
enum EmbeddedColor: Sendable, Hashable {
    /// An ICC profile.
    case icc([UInt8])
    /// CICP code points from a HEIF/AVIF `nclx` box (ITU-T H.273).
    case cicp(CICP)
    /// PNG `gAMA` (×100000) and `cHRM` (8 values ×100000: white x, y, red x, y, green x, y, blue x, y).
    case pngChunks(gamma: Int?, chromaticities: [Int]?)

    /// ITU-T H.273 colour code points.
    struct CICP: Sendable, Hashable {
        var primaries: Int
        var transfer: Int
        var matrix: Int
        var fullRange: Bool

        /// Whether these code points mean sRGB (BT.709 primaries with the sRGB curve) or leave it unspecified.
        var isSRGB: Bool {
            (primaries == 1 || primaries == 2) && (transfer == 13 || transfer == 2)
        }
    }
}

/// What reading a file's colour description found: the description (nil when the file says nothing, says sRGB,
/// or says something unusable) and why something was ignored.
struct ColorReading: Sendable {
    var color: EmbeddedColor?
    /// Why a description present in the file was ignored (the image is then treated as sRGB).
    var problem: String?
    /// The source of a description that was recognised as sRGB without a profile (PNG `sRGB`, sRGB CICP).
    var srgbSource: ColorProfileSummary.Source?
    /// The codec already converted the pixels to sRGB (an HDR image tone-mapped on the way): nothing left to do.
    var convertedByCodec = false
    /// JPEG only: an Adobe APP14 segment was present, so CMYK samples are stored inverted (as Photoshop writes).
    var adobeInverted = false

    static let none = ColorReading(color: nil)
}

extension EmbeddedColor {
    /// Reads the colour description of an encoded image without decoding pixels. Never throws: malformed
    /// descriptions come back as a ``ColorReading/problem``.
    static func read(_ bytes: UnsafeRawBufferPointer, format: ImageFileFormat, limits: DecodeLimits) -> ColorReading {
        switch format {
        case .jpeg: readJPEG(bytes, maxBytes: limits.maxColorProfileBytes)
        case .png: readPNG(bytes, limits: limits)
        case .webp: readWebP(bytes, maxBytes: limits.maxColorProfileBytes)
        case .heic: HEIFDecoder.readColor(bytes, limits: limits)
        case .avif: AVIFDecoder.readColor(bytes, limits: limits)
        case .jxl: JXLDecoder.readColor(bytes, limits: limits)
        case .tiff: TIFFDecoder.readColor(bytes, limits: limits)
        case .bmp: BMPDecoder.readColor(bytes, limits: limits)
        case .gif, .raw, .svg, .ico, .video: .none
        }
    }

    /// Walks JPEG segments from SOI to the first scan, reassembling APP2 `ICC_PROFILE` chunks by their sequence
    /// numbers (a profile may span several segments, before or after the frame header) and noting an Adobe
    /// APP14 segment. Incomplete, duplicated or inconsistent chunks are a problem, never a failure.
    static func readJPEG(_ bytes: UnsafeRawBufferPointer, maxBytes: Int) -> ColorReading {
        var chunks: [Int: Range<Int>] = [:]
        var declared = 0
        var total = 0
        var problem: String?
        var adobe = false
        for segment in JPEGSegments(bytes) {
            let data = segment.payload.lowerBound
            let count = segment.payload.count
            if segment.marker == 0xE2, count >= 14, matches(bytes, at: data, "ICC_PROFILE\0") {
                let sequence = Int(bytes[data + 12])
                let of = Int(bytes[data + 13])
                if declared == 0 { declared = of }
                if of != declared || sequence == 0 || sequence > of || chunks[sequence] != nil {
                    problem = problem ?? "the ICC profile's APP2 chunks are numbered inconsistently"
                } else {
                    chunks[sequence] = (data + 14)..<(data + count)
                    total += count - 14
                }
            } else if segment.marker == 0xEE, count >= 5, matches(bytes, at: data, "Adobe") {
                adobe = true
            }
        }
        var reading = ColorReading(color: nil, adobeInverted: adobe)
        guard declared > 0 else { return reading }
        if let problem {
            reading.problem = problem
        } else if chunks.count != declared {
            reading.problem = "the ICC profile has \(chunks.count) of its \(declared) APP2 chunks"
        } else if total > maxBytes {
            reading.problem = "the ICC profile of \(total) bytes exceeds maxColorProfileBytes (\(maxBytes))"
        } else {
            var profile = [UInt8]()
            profile.reserveCapacity(total)
            for sequence in 1...declared { profile.append(contentsOf: bytes[chunks[sequence]!]) }
            reading.color = .icc(profile)
        }
        return reading
    }

    /// PNG: `cICP` (above the others, as PNG's third edition says), else `iCCP` (inflated by libspng, bounded by its
    /// chunk limits), else `sRGB`, else `gAMA`/`cHRM`.
    static func readPNG(_ bytes: UnsafeRawBufferPointer, limits: DecodeLimits) -> ColorReading {
        if let cicp = PNGDecoder.cicp(bytes) {
            return cicp.isSRGB ? ColorReading(color: nil, srgbSource: .cicp) : ColorReading(color: .cicp(cicp))
        }
        guard let ctx = spng_ctx_new(0) else { return .none }
        defer { spng_ctx_free(ctx) }
        let chunkLimit = min(limits.maxInputBytes, max(limits.maxColorProfileBytes, 1 << 20))
        _ = spng_set_chunk_limits(ctx, chunkLimit, chunkLimit)
        // CRC errors in ancillary chunks are ignored here as the decoder ignores them.
        _ = spng_set_crc_action(ctx, Int32(SPNG_CRC_USE.rawValue), Int32(SPNG_CRC_USE.rawValue))
        guard spng_set_png_buffer(ctx, bytes.baseAddress, bytes.count) == 0 else { return .none }
        var iccp = spng_iccp()
        let status = spng_get_iccp(ctx, &iccp)
        if status == 0, let profile = iccp.profile {
            guard iccp.profile_len <= limits.maxColorProfileBytes else {
                return ColorReading(
                    color: nil,
                    problem:
                        "the ICC profile of \(iccp.profile_len) bytes exceeds maxColorProfileBytes (\(limits.maxColorProfileBytes))"
                )
            }
            return ColorReading(color: .icc(Array(UnsafeRawBufferPointer(start: profile, count: iccp.profile_len))))
        } else if status != Int32(SPNG_ECHUNKAVAIL.rawValue) {
            let reason = spng_strerror(status).map { String(cString: $0) } ?? "error \(status)"
            return ColorReading(color: nil, problem: "the PNG colour chunks could not be read (\(reason))")
        }
        var intent: UInt8 = 0
        if spng_get_srgb(ctx, &intent) == 0 { return ColorReading(color: nil, srgbSource: .srgbChunk) }
        var gama: UInt32 = 0
        let gamma: Int? = spng_get_gama_int(ctx, &gama) == 0 && gama > 0 ? Int(gama) : nil
        var chrm = spng_chrm_int()
        let chromaticities: [Int]? =
            spng_get_chrm_int(ctx, &chrm) == 0
            ? [
                chrm.white_point_x, chrm.white_point_y, chrm.red_x, chrm.red_y, chrm.green_x, chrm.green_y,
                chrm.blue_x, chrm.blue_y,
            ].map(Int.init) : nil
        // gAMA 1/2.2 alone is what sRGB-targeting encoders write: treat it as sRGB, as browsers do.
        if chromaticities == nil, let gamma, (45_000...46_000).contains(gamma) { return .none }
        if gamma == nil && chromaticities == nil { return .none }
        return ColorReading(color: .pngChunks(gamma: gamma, chromaticities: chromaticities))
    }

    /// WebP: the `ICCP` chunk of an extended (VP8X) file.
    static func readWebP(_ bytes: UnsafeRawBufferPointer, maxBytes: Int) -> ColorReading {
        guard bytes.count >= 30, matches(bytes, at: 12, "VP8X"), bytes[20] & 0x20 != 0 else { return .none }
        let riffEnd = min(bytes.count, 8 + le32(bytes, 4))
        var position = 12
        while position + 8 <= riffEnd {
            let size = le32(bytes, position + 4)
            let payload = position + 8
            guard size <= riffEnd - payload else { break }
            if matches(bytes, at: position, "ICCP") {
                guard size <= maxBytes else {
                    return ColorReading(
                        color: nil,
                        problem: "the ICC profile of \(size) bytes exceeds maxColorProfileBytes (\(maxBytes))")
                }
                return ColorReading(color: .icc(Array(bytes[payload..<(payload + size)])))
            }
            position = payload + size + (size & 1)
        }
        return ColorReading(color: nil, problem: "the WebP header announces an ICC profile but has no ICCP chunk")
    }

    private static func le32(_ bytes: UnsafeRawBufferPointer, _ at: Int) -> Int {
        Int(bytes[at]) | Int(bytes[at + 1]) << 8 | Int(bytes[at + 2]) << 16 | Int(bytes[at + 3]) << 24
    }

    private static func matches(_ bytes: UnsafeRawBufferPointer, at offset: Int, _ text: StaticString) -> Bool {
        let count = text.utf8CodeUnitCount
        guard offset >= 0, offset + count <= bytes.count else { return false }
        let p = text.utf8Start
        for i in 0..<count where bytes[offset + i] != p[i] { return false }
        return true
    }
}
