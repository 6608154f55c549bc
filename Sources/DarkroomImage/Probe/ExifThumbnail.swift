/// Finds the JPEG thumbnail that cameras and phones write into a JPEG's EXIF block (IFD1, tags
/// JPEGInterchangeFormat 0x0201 and JPEGInterchangeFormatLength 0x0202), usually 160 × 120.
///
/// Reads only the marker segments before the first scan and the two IFDs; allocates nothing. Damaged EXIF answers
/// nil, never fails: the thumbnail is an optional shortcut, and the image itself is still there.
enum ExifThumbnail {
    /// How far into the file the EXIF segment is looked for: APP1 comes first in every camera's file.
    static let searchLimit = 256 * 1024

    /// The byte range of the EXIF thumbnail inside `jpeg`, when it has one that is itself a JPEG lying wholly inside
    /// its APP1 segment.
    static func range(in jpeg: UnsafeRawBufferPointer) -> Range<Int>? {
        // At least a TIFF header (8 bytes) after "Exif\0\0"
        guard let exif = JPEGSegments.exif(in: jpeg, limit: searchLimit, minimumBytes: 8) else { return nil }
        return thumbnail(tiffStart: exif.lowerBound, end: exif.upperBound, reader: ByteReader(jpeg))
    }

    /// The thumbnail's range in the TIFF block that runs from `tiffStart` to `end`.
    private static func thumbnail(tiffStart: Int, end: Int, reader: ByteReader) -> Range<Int>? {
        do throws(ProbeStop) {
            let littleEndian: Bool
            switch try reader.u16be(tiffStart) {
            case 0x4949: littleEndian = true
            case 0x4D4D: littleEndian = false
            default: return nil
            }
            func u16(_ at: Int) throws(ProbeStop) -> Int {
                guard tiffStart + at + 2 <= end else { throw .needMoreData(atLeast: end + 1) }
                return littleEndian ? try reader.u16le(tiffStart + at) : try reader.u16be(tiffStart + at)
            }
            func u32(_ at: Int) throws(ProbeStop) -> Int {
                guard tiffStart + at + 4 <= end else { throw .needMoreData(atLeast: end + 1) }
                return littleEndian ? try reader.u32le(tiffStart + at) : try reader.u32be(tiffStart + at)
            }
            guard try u16(2) == 42 else { return nil }
            let ifd0 = try u32(4)
            let ifd1 = try u32(ifd0 + 2 + 12 * u16(ifd0))
            guard ifd1 > ifd0 else { return nil }  // 0 means no IFD1; a backward link would be a loop
            var start: Int?
            var length: Int?
            for index in 0..<(try u16(ifd1)) {
                let entry = ifd1 + 2 + 12 * index
                let type = try u16(entry + 2)
                let value = type == 3 ? try u16(entry + 8) : try u32(entry + 8)
                switch try u16(entry) {
                case 0x0103: guard value == 6 else { return nil }  // Compression: 6 is JPEG, 1 an uncompressed strip
                case 0x0201: start = value
                case 0x0202: length = value
                default: break
                }
            }
            guard let start, let length, length > 4, start > 0, tiffStart + start + length <= end,
                try reader.u16be(tiffStart + start) == 0xFFD8
            else { return nil }
            return (tiffStart + start)..<(tiffStart + start + length)
        } catch {
            return nil
        }
    }
}
