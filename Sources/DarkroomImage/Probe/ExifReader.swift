/// Reads the orientation tag from TIFF-structured EXIF data (JPEG APP1, PNG eXIf, WebP EXIF).
///
/// Damaged EXIF never fails a probe: viewers ignore it, so the reader answers nil and the image shows as stored.
enum ExifReader {
    /// The TIFF tag number of Orientation.
    static let orientationTag = 0x0112

    /// The orientation in `tiff`, which starts with the TIFF header ("II*\0" or "MM\0*"); nil when there is
    /// no orientation tag or the structure is damaged. An orientation tag with a value outside 1–8 answers
    /// ``ExifOrientation/up``. Reads only IFD0; allocates nothing.
    static func orientation(tiff: UnsafeRawBufferPointer) -> ExifOrientation? {
        let reader = ByteReader(tiff)
        do throws(ProbeStop) {
            let littleEndian: Bool
            switch try reader.u16be(0) {
            case 0x4949: littleEndian = true  // "II"
            case 0x4D4D: littleEndian = false  // "MM"
            default: return nil
            }
            func u16(_ offset: Int) throws(ProbeStop) -> Int {
                littleEndian ? try reader.u16le(offset) : try reader.u16be(offset)
            }
            func u32(_ offset: Int) throws(ProbeStop) -> Int {
                littleEndian ? try reader.u32le(offset) : try reader.u32be(offset)
            }
            guard try u16(2) == 42 else { return nil }
            let ifd = try u32(4)
            let entryCount = try u16(ifd)
            // Entries are 12 bytes: tag, type, count, value-or-offset. A count of up to 65,535 bounds the loop.
            for index in 0..<entryCount {
                let entry = ifd + 2 + 12 * index
                guard try u16(entry) == orientationTag else { continue }
                let type = try u16(entry + 2)
                guard try u32(entry + 4) >= 1 else { return .up }
                let value: Int
                switch type {
                case 3: value = try u16(entry + 8)  // SHORT, the type the standard requires
                case 4: value = try u32(entry + 8)  // LONG, written by a few broken encoders
                default: return .up
                }
                return ExifOrientation(rawValue: value) ?? .up
            }
            return nil
        } catch {
            return nil
        }
    }

    /// The orientation in an EXIF payload that may start with the JPEG-style "Exif\0\0" preamble
    /// (WebP EXIF chunks are written both ways).
    static func orientation(exifPayload payload: UnsafeRawBufferPointer) -> ExifOrientation? {
        let reader = ByteReader(payload)
        if let head = try? reader.u32be(0), head == 0x4578_6966,  // "Exif"
            let tail = try? reader.u16be(4), tail == 0
        {
            return orientation(tiff: UnsafeRawBufferPointer(rebasing: payload[6...]))
        }
        return orientation(tiff: payload)
    }
}
