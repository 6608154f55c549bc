/// Reads TIFF-structured data — EXIF blocks, and maker notes that follow the same layout — in its byte order: the
/// header, one IFD's entries, and single values. Every read is bounds-checked (``ByteReader``); nothing is
/// allocated. Callers that treat damaged metadata as absent catch the ``ProbeStop`` and answer nil.
struct IFDReader {
    let reader: ByteReader
    let littleEndian: Bool

    /// A reader of `bytes` in the given byte order, for structures without a TIFF header (a maker note's IFD).
    init(_ bytes: UnsafeRawBufferPointer, littleEndian: Bool) {
        reader = ByteReader(bytes)
        self.littleEndian = littleEndian
    }

    /// A reader of a TIFF block that starts with its header ("II*\0" or "MM\0*"); nil when it does not.
    init?(tiff: UnsafeRawBufferPointer) {
        let reader = ByteReader(tiff)
        switch try? reader.u16be(0) {
        case 0x4949: littleEndian = true  // "II"
        case 0x4D4D: littleEndian = false  // "MM"
        default: return nil
        }
        self.reader = reader
        guard (try? u16(2)) == 42 else { return nil }
    }

    /// A reader of EXIF that may start with the JPEG-style "Exif\0\0" preamble (WebP EXIF chunks and HEIF blocks
    /// are written both ways); nil when no TIFF header follows.
    init?(exifPayload payload: UnsafeRawBufferPointer) {
        if payload.count >= 6, payload.prefix(6).elementsEqual("Exif\0\0".utf8) {
            self.init(tiff: UnsafeRawBufferPointer(rebasing: payload[6...]))
        } else {
            self.init(tiff: payload)
        }
    }

    /// The TIFF header's tag number for the Exif IFD's pointer.
    static let exifIFDTag = 0x8769

    /// The offset of IFD0 (from a TIFF header).
    func firstIFD() throws(ProbeStop) -> Int { try u32(4) }

    func u16(_ offset: Int) throws(ProbeStop) -> Int {
        littleEndian ? try reader.u16le(offset) : try reader.u16be(offset)
    }

    func u32(_ offset: Int) throws(ProbeStop) -> Int {
        littleEndian ? try reader.u32le(offset) : try reader.u32be(offset)
    }

    /// Throws unless the whole entry table of the IFD at `ifd` lies within the bytes.
    func requireIFD(at ifd: Int) throws(ProbeStop) {
        try reader.require(ifd, 2 + 12 * (try u16(ifd)))
    }

    /// The offset of the entry for `tag` in the IFD at `ifd`; nil when it has none. Entries are 12 bytes: tag, type,
    /// count, value-or-offset; a count of at most 65,535 bounds the loop.
    func entry(_ tag: Int, inIFDAt ifd: Int) throws(ProbeStop) -> Int? {
        let count = try u16(ifd)
        for index in 0..<count where try u16(ifd + 2 + 12 * index) == tag { return ifd + 2 + 12 * index }
        return nil
    }

    /// The offset of the IFD a pointer entry (`tag`, a LONG or IFD type) in the IFD at `ifd` points to; nil when
    /// there is no such entry.
    func subIFD(_ tag: Int, inIFDAt ifd: Int) throws(ProbeStop) -> Int? {
        guard let entry = try entry(tag, inIFDAt: ifd) else { return nil }
        return try u32(entry + 8)
    }

    /// The entry's type code (3 SHORT, 4 LONG, 5 RATIONAL, …).
    func type(of entry: Int) throws(ProbeStop) -> Int { try u16(entry + 2) }

    /// The entry's value count.
    func count(of entry: Int) throws(ProbeStop) -> Int { try u32(entry + 4) }

    /// The bytes of the entry's value: within the entry when they fit in 4 bytes, else at the offset it holds;
    /// nil when they lie past the end. `size` is the byte length of one value of the entry's type.
    func valueRange(of entry: Int, size: Int) throws(ProbeStop) -> Range<Int>? {
        let length = try count(of: entry) * size
        let start = length <= 4 ? entry + 8 : try u32(entry + 8)
        guard length >= 0, start >= 0, start <= reader.count - length else { return nil }
        return start..<(start + length)
    }

    /// The entry's single integer (a SHORT, the type standards require, or a LONG, which a few encoders write);
    /// nil for other types or an entry with no value.
    func integer(at entry: Int) throws(ProbeStop) -> Int? {
        guard try count(of: entry) >= 1 else { return nil }
        switch try type(of: entry) {
        case 3: return try u16(entry + 8)
        case 4: return try u32(entry + 8)
        default: return nil
        }
    }

    /// The entry's single number: a (signed) rational, a float, a double or an integer; nil for other types or
    /// counts, and for a rational over zero.
    func number(at entry: Int) throws(ProbeStop) -> Double? {
        guard try count(of: entry) == 1 else { return nil }
        switch try type(of: entry) {
        case 3: return Double(try u16(entry + 8))
        case 4: return Double(try u32(entry + 8))
        case 9: return Double(Int32(truncatingIfNeeded: try u32(entry + 8)))
        case 11: return Double(Float(bitPattern: UInt32(try u32(entry + 8))))
        case 5, 10:
            let at = try u32(entry + 8)
            let signed = try type(of: entry) == 10
            let (n, d) = (try u32(at), try u32(at + 4))
            let numerator = signed ? Double(Int32(truncatingIfNeeded: n)) : Double(n)
            let denominator = signed ? Double(Int32(truncatingIfNeeded: d)) : Double(d)
            return denominator == 0 ? nil : numerator / denominator
        case 12:
            let at = try u32(entry + 8)
            let bits = UInt64(try u32(littleEndian ? at + 4 : at)) << 32 | UInt64(try u32(littleEndian ? at : at + 4))
            return Double(bitPattern: bits)
        default: return nil
        }
    }
}
