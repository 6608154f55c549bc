/// EXIF carried from a source to its thumbnail, for servers asked to keep metadata: read from the source's
/// container (JPEG APP1, PNG `eXIf`, WebP `EXIF`), made true for the thumbnail, and written into a JPEG or PNG.
///
/// Thumbnails are upright, so a kept EXIF block says Orientation 1; "copyright only" keeps just the Artist and
/// Copyright tags (no camera, time or GPS). Damaged EXIF is dropped, never fatal. Cost: one pass over the source's
/// header and a copy of the EXIF block (at most 64 KiB in a JPEG).
public enum ExifMetadata {
    /// What to keep.
    public enum Keep: String, Sendable, Hashable {
        /// The whole EXIF block, Orientation set to 1.
        case all
        /// Only Artist and Copyright.
        case copyright
    }

    /// The TIFF-structured EXIF payload of `bytes` (a JPEG, PNG or WebP), or `nil` when there is none.
    public static func extract(from bytes: [UInt8]) -> [UInt8]? {
        var payload: ArraySlice<UInt8>?
        if bytes.starts(with: [0xFF, 0xD8]) {
            if let exif = bytes.withUnsafeBytes({ JPEGSegments.exif(in: $0) }) { payload = bytes[exif] }
        } else if bytes.starts(with: [0x89, 0x50, 0x4E, 0x47]) {
            var i = 8
            while i + 12 <= bytes.count {
                let length = Int(bytes[i]) << 24 | Int(bytes[i + 1]) << 16 | Int(bytes[i + 2]) << 8 | Int(bytes[i + 3])
                guard length >= 0, i + 12 + length <= bytes.count else { break }
                if bytes[(i + 4)..<(i + 8)].elementsEqual("eXIf".utf8) {
                    payload = bytes[(i + 8)..<(i + 8 + length)]
                    break
                }
                if bytes[(i + 4)..<(i + 8)].elementsEqual("IDAT".utf8) { break }
                i += 12 + length
            }
        } else if bytes.count >= 12, bytes[0..<4].elementsEqual("RIFF".utf8), bytes[8..<12].elementsEqual("WEBP".utf8) {
            var i = 12
            while i + 8 <= bytes.count {
                let size =
                    Int(bytes[i + 4]) | Int(bytes[i + 5]) << 8 | Int(bytes[i + 6]) << 16 | Int(bytes[i + 7]) << 24
                guard i + 8 + size <= bytes.count else { break }
                if bytes[i..<(i + 4)].elementsEqual("EXIF".utf8) {
                    let body = bytes[(i + 8)..<(i + 8 + size)]
                    payload = body.starts(with: Array("Exif\0\0".utf8)) ? body.dropFirst(6) : body
                    break
                }
                i += 8 + size + (size & 1)
            }
        }
        guard let payload, payload.count >= 8 else { return nil }
        return Array(payload)
    }

    /// `tiff` made true for an upright thumbnail: `.all` with Orientation set to 1, `.copyright` a new block with
    /// only Artist and Copyright; `nil` when the block is damaged or (for `.copyright`) has neither tag.
    public static func prepared(_ tiff: [UInt8], keep: Keep) -> [UInt8]? {
        guard let read = IFD0(tiff) else { return nil }
        switch keep {
        case .all:
            var out = tiff
            if let entry = read.orientation {
                (out[entry + 8], out[entry + 9]) = read.littleEndian ? (1, 0) : (0, 1)
            }
            return out
        case .copyright:
            // Each tag's ASCII bytes, copied into a little-endian TIFF of one IFD with the values after it
            let values = read.text
            guard !values.isEmpty else { return nil }
            var out: [UInt8] = [0x49, 0x49, 42, 0, 8, 0, 0, 0]
            func le16(_ v: Int) { out += [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF)] }
            func le32(_ v: Int) { out += (0..<4).map { UInt8(v >> (8 * $0) & 0xFF) } }
            var data = 8 + 2 + 12 * values.count + 4
            le16(values.count)
            for (tag, bytes) in values {
                le16(tag)
                le16(2)
                le32(bytes.count)
                if bytes.count <= 4 {
                    out += bytes + [UInt8](repeating: 0, count: 4 - bytes.count)
                } else {
                    le32(data)
                    data += bytes.count + (bytes.count & 1)
                }
            }
            le32(0)
            for (_, bytes) in values where bytes.count > 4 { out += bytes + (bytes.count & 1 == 1 ? [0] : []) }
            return out
        }
    }

    /// `encoded` — a JPEG or PNG from ``ImageEncoder`` — with `tiff` embedded (JPEG APP1 after SOI; PNG `eXIf`
    /// after IHDR). Other formats, and a block too large for a JPEG segment, come back unchanged.
    public static func embedding(_ tiff: [UInt8], in encoded: [UInt8], format: ImageFileFormat) -> [UInt8] {
        switch format {
        case .jpeg:
            let payload = Array("Exif\0\0".utf8) + tiff
            guard encoded.starts(with: [0xFF, 0xD8]), payload.count + 2 <= 0xFFFF else { return encoded }
            return [0xFF, 0xD8] + JPEGSegments.segment(marker: 0xE1, payload: payload) + encoded.dropFirst(2)
        case .png:
            guard encoded.count > 33, encoded.starts(with: [0x89, 0x50, 0x4E, 0x47]) else { return encoded }
            let body = Array("eXIf".utf8) + tiff
            let crc = CRC32.checksum(body)
            let n = tiff.count
            let chunk =
                [UInt8(n >> 24 & 0xFF), UInt8(n >> 16 & 0xFF), UInt8(n >> 8 & 0xFF), UInt8(n & 0xFF)] + body
                + [UInt8(crc >> 24 & 0xFF), UInt8(crc >> 16 & 0xFF), UInt8(crc >> 8 & 0xFF), UInt8(crc & 0xFF)]
            return Array(encoded[0..<33]) + chunk + encoded[33...]  // signature (8) + IHDR (25)
        default:
            return encoded
        }
    }
}

/// What ``ExifMetadata`` changes or keeps of a TIFF block's IFD0.
private struct IFD0 {
    /// The offset of the Orientation entry, when it is a SHORT.
    var orientation: Int?
    var littleEndian: Bool
    /// The Artist and Copyright tags' ASCII values (each under 64 KiB), in that order.
    var text: [(tag: Int, bytes: [UInt8])] = []

    /// Reads `tiff`'s IFD0; nil when the header or the entry table is damaged.
    init?(_ tiff: [UInt8]) {
        guard
            let read = tiff.withUnsafeBytes({ raw -> IFD0? in
                guard let ifd = IFDReader(tiff: raw) else { return nil }
                do throws(ProbeStop) {
                    let ifd0 = try ifd.firstIFD()
                    try ifd.requireIFD(at: ifd0)
                    var read = IFD0(orientation: nil, littleEndian: ifd.littleEndian)
                    if let entry = try ifd.entry(0x0112, inIFDAt: ifd0), try ifd.type(of: entry) == 3 {
                        read.orientation = entry
                    }
                    for tag in [0x013B, 0x8298] {
                        guard let entry = try ifd.entry(tag, inIFDAt: ifd0), try ifd.type(of: entry) == 2,
                            try ifd.count(of: entry) < 1 << 16, let range = try ifd.valueRange(of: entry, size: 1),
                            !range.isEmpty
                        else { continue }
                        read.text.append((tag, Array(tiff[range])))
                    }
                    return read
                } catch {
                    return nil
                }
            })
        else { return nil }
        self = read
    }

    private init(orientation: Int?, littleEndian: Bool) {
        self.orientation = orientation
        self.littleEndian = littleEndian
    }
}

/// CRC-32 (ISO 3309, as PNG chunks use it).
package enum CRC32 {
    private static let table: [UInt32] = (0..<256).map { n in
        var c = UInt32(n)
        for _ in 0..<8 { c = c & 1 == 1 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
        return c
    }

    package static func checksum(_ bytes: [UInt8]) -> UInt32 {
        var c: UInt32 = 0xFFFF_FFFF
        for b in bytes { c = table[Int((c ^ UInt32(b)) & 0xFF)] ^ (c >> 8) }
        return c ^ 0xFFFF_FFFF
    }
}
