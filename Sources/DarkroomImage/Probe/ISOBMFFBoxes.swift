/// A minimal, bounds-checked walk over ISO base media file format boxes (HEIF, AVIF), for the item properties
/// libheif and libavif do not hand out (Debian 12's libavif 0.11 reads no `clli`).
enum ISOBMFFBoxes {
    /// One box: its type and its payload's range within the bytes.
    struct Box {
        let type: String
        let payload: Range<Int>
    }

    /// The boxes laid end to end in `range` of `bytes`; stops at the first malformed header.
    static func boxes(in bytes: UnsafeRawBufferPointer, _ range: Range<Int>) -> [Box] {
        var result: [Box] = []
        var at = range.lowerBound
        while at + 8 <= range.upperBound {
            var size = Int(bigEndian32(bytes, at))
            var header = 8
            if size == 1 {
                guard at + 16 <= range.upperBound else { break }
                size = Int(clamping: UInt64(bigEndian32(bytes, at + 8)) << 32 | UInt64(bigEndian32(bytes, at + 12)))
                header = 16
            } else if size == 0 {
                size = range.upperBound - at
            }
            guard size >= header, size <= range.upperBound - at else { break }
            let type = String(decoding: bytes[(at + 4)..<(at + 8)], as: UTF8.self)
            result.append(Box(type: type, payload: (at + header)..<(at + size)))
            at += size
        }
        return result
    }

    /// The first box of each type along `path`, descending into each ( `meta` is a full box: its 4-byte version
    /// and flags are skipped).
    static func find(_ path: [String], in bytes: UnsafeRawBufferPointer) -> Box? {
        var range = 0..<bytes.count
        var found: Box?
        for type in path {
            guard let box = boxes(in: bytes, range).first(where: { $0.type == type }) else { return nil }
            found = box
            range =
                type == "meta"
                ? min(box.payload.lowerBound + 4, box.payload.upperBound)..<box.payload.upperBound
                : box.payload
        }
        return found
    }

    /// The content light level item property (`meta`/`iprp`/`ipco`/`clli`): max content and max frame-average
    /// light level, nits. The first one in the property container (HDR stills carry one, for the primary image).
    static func contentLightLevel(_ bytes: UnsafeRawBufferPointer) -> (maxCLL: Int, maxFALL: Int)? {
        guard let box = find(["meta", "iprp", "ipco", "clli"], in: bytes), box.payload.count >= 4 else { return nil }
        let p = box.payload.lowerBound
        return (Int(bytes[p]) << 8 | Int(bytes[p + 1]), Int(bytes[p + 2]) << 8 | Int(bytes[p + 3]))
    }

    private static func bigEndian32(_ bytes: UnsafeRawBufferPointer, _ at: Int) -> UInt32 {
        UInt32(bytes[at]) << 24 | UInt32(bytes[at + 1]) << 16 | UInt32(bytes[at + 2]) << 8 | UInt32(bytes[at + 3])
    }
}
