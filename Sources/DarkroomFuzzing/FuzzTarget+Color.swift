import DarkroomImage

extension FuzzTarget {
    /// ICC profiles: the input is a profile, summarised with lcms2 and embedded (as APP2 `ICC_PROFILE` segments)
    /// in a small colour or gray JPEG that is then decoded with conversion to sRGB and with the profile kept — the
    /// path a photo's profile takes.
    package static let icc = FuzzTarget(
        name: "icc", summary: "ColorProfile summary; a JPEG carrying the profile decoded to sRGB and kept"
    ) { bytes in
        let profile = Array(bytes)
        _ = ColorProfile(data: profile)
        guard let base = bytes.count % 2 == 0 ? SmallImages.colorJPEG : SmallImages.grayJPEG else { return }
        let jpeg = SmallImages.jpeg(base, withICCProfile: profile)
        var options = DecodeOptions(size: .original, limits: FuzzLimits.decode)
        _ = try? ImageDecoder().decode(jpeg, options: options)
        options.colorSpace = .original
        options.geometry.size = .maxPixelSize(4)
        _ = try? ImageDecoder().decode(jpeg, options: options)
    }
}

/// Small images the targets wrap their input in, encoded once by Darkroom's own encoders.
package enum SmallImages {
    /// A 16×12 colour gradient as a baseline JPEG.
    package static let colorJPEG: [UInt8]? = encode(format: .jpeg, gray: false)
    /// A 16×12 gray gradient as a gray JPEG.
    package static let grayJPEG: [UInt8]? = encode(format: .jpeg, gray: true)
    /// A 16×12 colour gradient as a PNG.
    package static let colorPNG: [UInt8]? = encode(format: .png, gray: false)

    private static func encode(format: ImageFileFormat, gray: Bool) -> [UInt8]? {
        guard let bitmap = try? Bitmap(width: 16, height: 12, format: gray ? .gray8 : .bgra8Premultiplied) else {
            return nil
        }
        let channels = gray ? 1 : 4
        for y in 0..<12 {
            let row = bitmap.row(y).assumingMemoryBound(to: UInt8.self)
            for x in 0..<16 {
                for c in 0..<channels { row[x * channels + c] = c == 3 ? 255 : UInt8((x * 16 + y * 20 + c * 60) & 255) }
            }
        }
        return try? ImageEncoder.encode(bitmap, as: format)
    }

    /// `jpeg` with `segment` (a marker and its payload) inserted right after SOI, when the payload fits one
    /// segment (65,533 bytes).
    package static func jpeg(_ jpeg: [UInt8], inserting marker: UInt8, payload: [UInt8]) -> [UInt8] {
        guard payload.count <= 65_533, jpeg.count >= 2 else { return jpeg }
        return [0xFF, 0xD8] + JPEGSegments.segment(marker: marker, payload: payload) + jpeg[2...]
    }

    /// `jpeg` carrying `profile` in APP2 `ICC_PROFILE` segments of at most 65,519 bytes each (at most 255).
    package static func jpeg(_ jpeg: [UInt8], withICCProfile profile: [UInt8]) -> [UInt8] {
        let chunk = 65_519
        let count = max(1, min(255, (profile.count + chunk - 1) / chunk))
        var result = jpeg
        for index in stride(from: count - 1, through: 0, by: -1) {
            let part = profile[min(profile.count, index * chunk)..<min(profile.count, (index + 1) * chunk)]
            let payload = Array("ICC_PROFILE".utf8) + [0, UInt8(index + 1), UInt8(count)] + part
            result = Self.jpeg(result, inserting: 0xE2, payload: payload)
        }
        return result
    }
}
