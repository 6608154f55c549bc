/// The image index of a CIPA DC-007 Multi-Picture Format APP2 segment: where each image of a JPEG that holds
/// several (an Ultra HDR gain map, a camera's preview, a stereo pair) starts and how long it is.
///
/// Offsets in the segment count from its TIFF header (the byte after `MPF\0`); ``entries`` gives them as offsets
/// into the whole file. Cost: one pass over at most a few hundred bytes; allocates the entry list.
struct MultiPictureIndex: Sendable, Equatable {
    /// One image: where it lies in the file, and its MP type code (0x030000 a baseline primary, 0x010001/2
    /// large or VGA previews; Ultra HDR's gain map is 0).
    struct Entry: Sendable, Equatable {
        let range: Range<Int>
        let typeCode: UInt32
    }

    let entries: [Entry]

    /// The signature that opens an MPF APP2 payload.
    static let signature: [UInt8] = [0x4D, 0x50, 0x46, 0x00]  // "MPF\0"

    /// Reads the index from an APP2 `payload` (which starts with ``signature``) of a file of `fileLength` bytes,
    /// the payload starting at file offset `payloadOffset`. Entries that lie outside the file are dropped; nil
    /// when the payload is not a well-formed index.
    init?(payload: UnsafeRawBufferPointer, payloadOffset: Int, fileLength: Int) {
        guard payload.count >= 16, payload.prefix(4).elementsEqual(Self.signature) else { return nil }
        let tiff = UnsafeRawBufferPointer(rebasing: payload[4...])
        let littleEndian: Bool
        switch (tiff[0], tiff[1]) {
        case (0x49, 0x49): littleEndian = true
        case (0x4D, 0x4D): littleEndian = false
        default: return nil
        }
        func u16(_ at: Int) -> Int? {
            guard at >= 0, at + 2 <= tiff.count else { return nil }
            return littleEndian ? Int(tiff[at]) | Int(tiff[at + 1]) << 8 : Int(tiff[at]) << 8 | Int(tiff[at + 1])
        }
        func u32(_ at: Int) -> Int? {
            guard let a = u16(at), let b = u16(at + 2) else { return nil }
            return littleEndian ? a | b << 16 : a << 16 | b
        }
        guard u16(2) == 42, let ifd = u32(4), let count = u16(ifd), count <= 64 else { return nil }
        var entryTable: (count: Int, offset: Int)?
        for index in 0..<count {
            let at = ifd + 2 + 12 * index
            guard let tag = u16(at), let length = u32(at + 4), let value = u32(at + 8) else { return nil }
            if tag == 0xB002 { entryTable = (length / 16, value) }
        }
        guard let table = entryTable, table.count >= 1, table.count <= 64 else { return nil }
        let tiffStart = payloadOffset + 4
        var entries: [Entry] = []
        for index in 0..<table.count {
            let at = table.offset + 16 * index
            guard let attribute = u32(at), let size = u32(at + 4), let offset = u32(at + 8) else { return nil }
            // The first image's offset is 0 by definition: it starts the file.
            let start = index == 0 ? 0 : tiffStart + offset
            guard size > 0, start >= 0, start <= fileLength, size <= fileLength - start else { continue }
            entries.append(Entry(range: start..<(start + size), typeCode: UInt32(attribute & 0x00FF_FFFF)))
        }
        self.entries = entries
    }
}
