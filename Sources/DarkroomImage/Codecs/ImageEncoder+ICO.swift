extension ImageEncoder {
    /// An ICO file of one PNG entry (Windows Vista and every browser read PNG entries) at the bitmap's size, which
    /// must be 1…256 px a side (the directory cannot name more): ask for favicon sizes (16, 32, 48, 64, 180, 256).
    static func encodeICO(_ bitmap: Bitmap, _ options: EncodeOptions) throws(DarkroomImageError) -> [UInt8] {
        guard bitmap.width <= 256, bitmap.height <= 256 else {
            throw DarkroomImageError(
                .invalidArgument, "an ICO entry is at most 256×256 px, got \(bitmap.width)×\(bitmap.height)")
        }
        var pngOptions = options
        pngOptions.colorProfile = nil
        let png = try encodePNG(bitmap, pngOptions)
        var out: [UInt8] = [0, 0, 1, 0, 1, 0]  // reserved, type 1 (icon), one entry
        out += [UInt8(bitmap.width & 0xFF), UInt8(bitmap.height & 0xFF), 0, 0]  // 256 is written as 0
        out += [1, 0, 32, 0]  // planes, bits per pixel
        for value in [UInt32(png.count), UInt32(22)] {
            out += [UInt8(value & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value >> 16 & 0xFF), UInt8(value >> 24)]
        }
        return out + png
    }
}
