import CJXL

extension ImageEncoder {
    /// JPEG XL through libjxl on the calling thread (no thread pool). Quality maps to libjxl's Butteraugli distance
    /// as `cjxl` maps `-q` (90 → 1.0, the visually lossless default; 100 or ``EncodeOptions/lossless`` → lossless);
    /// ``EncodeOptions/speed`` 0…10 maps to effort 9…1 (the default 8 → effort 3, a few milliseconds for a thumbnail).
    /// Without a profile the file declares sRGB.
    static func encodeJXL(_ source: Bitmap, _ options: EncodeOptions) throws(DarkroomImageError) -> [UInt8] {
        guard (0...10).contains(options.speed) else {
            throw DarkroomImageError(.invalidArgument, "JPEG XL speed must be 0...10, got \(options.speed)")
        }
        let bitmap = try encodable(source)
        let gray = bitmap.format == .gray8
        let alpha = !gray && !bitmap.isOpaque
        let channels = gray ? 1 : (alpha ? 4 : 3)
        // libjxl takes packed rows with straight alpha
        let packed = try ScratchBuffer<UInt8>(count: bitmap.width * bitmap.height * channels, zeroed: false)
        for y in 0..<bitmap.height {
            let s = bitmap.row(y).assumingMemoryBound(to: UInt8.self)
            let d = packed.pointer + y * bitmap.width * channels
            switch channels {
            case 1: d.update(from: s, count: bitmap.width)
            case 3:
                for x in 0..<bitmap.width {
                    (d[3 * x], d[3 * x + 1], d[3 * x + 2]) = (s[4 * x + 2], s[4 * x + 1], s[4 * x])
                }
            default: PixelConversion.convertRow(s, from: .bgra8Premultiplied, d, to: .rgba8, width: bitmap.width)
            }
        }
        guard let encoder = JxlEncoderCreate(nil) else {
            throw DarkroomImageError(.outOfMemory, "could not create a JPEG XL encoder")
        }
        defer { JxlEncoderDestroy(encoder) }
        let lossless = options.lossless || options.quality == 100
        var info = JxlBasicInfo()
        JxlEncoderInitBasicInfo(&info)
        info.xsize = UInt32(bitmap.width)
        info.ysize = UInt32(bitmap.height)
        info.bits_per_sample = 8
        info.num_color_channels = gray ? 1 : 3
        info.alpha_bits = alpha ? 8 : 0
        info.num_extra_channels = alpha ? 1 : 0
        info.uses_original_profile = lossless ? 1 : 0
        try check(JxlEncoderSetBasicInfo(encoder, &info), "setting the header")
        if let profile = options.colorProfile, !profile.isEmpty {
            try check(JxlEncoderSetICCProfile(encoder, profile, profile.count), "setting the ICC profile")
        } else {
            var srgb = JxlColorEncoding()
            JxlColorEncodingSetToSRGB(&srgb, gray ? 1 : 0)
            try check(JxlEncoderSetColorEncoding(encoder, &srgb), "setting the colour encoding")
        }
        guard let settings = JxlEncoderFrameSettingsCreate(encoder, nil) else {
            throw DarkroomImageError(.outOfMemory, "could not create JPEG XL frame settings")
        }
        if lossless {
            try check(JxlEncoderSetFrameLossless(settings, 1), "asking for lossless")
        } else {
            try check(JxlEncoderSetFrameDistance(settings, distance(quality: options.quality)), "setting the quality")
        }
        try check(
            JxlEncoderFrameSettingsSetOption(
                settings, JXL_ENC_FRAME_SETTING_EFFORT, Int64(max(1, 9 - options.speed * 8 / 10))),
            "setting the effort")
        var format = JxlPixelFormat(
            num_channels: UInt32(channels), data_type: JXL_TYPE_UINT8, endianness: JXL_NATIVE_ENDIAN, align: 0)
        try check(
            JxlEncoderAddImageFrame(settings, &format, packed.pointer, bitmap.width * bitmap.height * channels),
            "adding the image")
        JxlEncoderCloseInput(encoder)
        var output = [UInt8](repeating: 0, count: max(4096, bitmap.width * bitmap.height / 4))
        var written = 0
        while true {
            let status: JxlEncoderStatus = output.withUnsafeMutableBufferPointer { buffer in
                var next: UnsafeMutablePointer<UInt8>? = buffer.baseAddress! + written
                var available = buffer.count - written
                let status = JxlEncoderProcessOutput(encoder, &next, &available)
                written = buffer.count - available
                return status
            }
            switch status {
            case JXL_ENC_SUCCESS: return Array(output[0..<written])
            case JXL_ENC_NEED_MORE_OUTPUT: output += [UInt8](repeating: 0, count: output.count)
            default: try check(status, "encoding")
            }
        }
    }

    /// `cjxl`'s mapping from a JPEG-like quality to a Butteraugli distance.
    static func distance(quality: Int) -> Float {
        let q = Float(quality)
        return q >= 30 ? 0.1 + (100 - q) * 0.09 : 53.0 / 3000.0 * q * q - 23.0 / 20.0 * q + 25.0
    }

    private static func check(_ status: JxlEncoderStatus, _ what: String) throws(DarkroomImageError) {
        guard status != JXL_ENC_SUCCESS else { return }
        throw DarkroomImageError(.encodeFailed, "JPEG XL encoding failed (\(what))")
    }
}
