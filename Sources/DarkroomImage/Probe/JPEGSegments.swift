/// The marker segments of a whole JPEG (or a prefix of one) before its first scan, walked as libjpeg reads them:
/// fill bytes (FF FF…), markers without a length (TEM, RSTn, a repeated SOI) and stray bytes between segments are
/// skipped. The walk ends at the first scan (SOS), the end of the image (EOI), a length below 2, a segment that
/// runs past the bytes, or a segment starting at or past `limit`.
///
/// The one walk over complete bytes that the colour reader, the EXIF reader and the EXIF-thumbnail finder share;
/// the prober (which must tell "more bytes needed" from "corrupt") and the scan counter (which follows the bytes as
/// they arrive) keep their own. Cost: one pass over the segment headers; allocates nothing.
package struct JPEGSegments: Sequence, IteratorProtocol {
    /// One segment: its marker code (the byte after FF) and its payload, the bytes after the length field.
    package struct Segment {
        package let marker: UInt8
        package let payload: Range<Int>
    }

    private let bytes: UnsafeRawBufferPointer
    private let limit: Int
    private var position: Int

    /// The segments of `bytes`, none when they do not start with SOI (FF D8).
    package init(_ bytes: UnsafeRawBufferPointer, limit: Int = .max) {
        self.bytes = bytes
        self.limit = Swift.min(limit, bytes.count)
        position = bytes.count >= 2 && bytes[0] == 0xFF && bytes[1] == 0xD8 ? 2 : bytes.count
    }

    package mutating func next() -> Segment? {
        while position + 4 <= bytes.count, position < limit {
            guard bytes[position] == 0xFF else {
                position += 1  // a stray byte between segments
                continue
            }
            let marker = bytes[position + 1]
            switch marker {
            case 0xFF:
                position += 1  // fill before a marker
                continue
            case 0x00, 0x01, 0xD0...0xD8:
                position += 2  // no length: a stuffed zero (stray here), TEM, RSTn or SOI
                continue
            case 0xD9, 0xDA:
                position = bytes.count
                return nil
            default:
                let length = Int(bytes[position + 2]) << 8 | Int(bytes[position + 3])
                guard length >= 2, position + 2 + length <= bytes.count else {
                    position = bytes.count
                    return nil
                }
                let segment = Segment(marker: marker, payload: (position + 4)..<(position + 2 + length))
                position += 2 + length
                return segment
            }
        }
        position = bytes.count
        return nil
    }
}

extension JPEGSegments {
    /// One marker segment as a JPEG holds it: FF, `marker`, the big-endian length (which counts itself), `payload`.
    /// The caller keeps `payload` within 65,533 bytes, the most a length field can say.
    package static func segment(marker: UInt8, payload: some Collection<UInt8>) -> [UInt8] {
        let length = payload.count + 2
        return [0xFF, marker, UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF)] + payload
    }

    /// The TIFF-structured EXIF block of a JPEG: the payload after `Exif\0\0` of the first APP1 segment that
    /// starts with it and holds at least `minimumBytes` after it, among the segments starting before `limit`.
    static func exif(in bytes: UnsafeRawBufferPointer, limit: Int = .max, minimumBytes: Int = 0) -> Range<Int>? {
        let header: [UInt8] = Array("Exif\0\0".utf8)
        let segment = JPEGSegments(bytes, limit: limit).first { segment in
            segment.marker == 0xE1 && segment.payload.count >= header.count + minimumBytes
                && bytes[segment.payload.prefix(header.count)].elementsEqual(header)
        }
        return segment.map { ($0.payload.lowerBound + header.count)..<$0.payload.upperBound }
    }
}
