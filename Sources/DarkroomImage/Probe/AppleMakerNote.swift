/// The maker note Apple's camera writes in a photo's EXIF (tag 0x927C of the Exif IFD): "Apple iOS\0", a version
/// (2 bytes) and "MM", then one IFD 14 bytes in whose offsets count from the note's first byte, big-endian whatever
/// the EXIF's byte order. ``AppleHDRHeadroom`` reads its HDR tags; a Live Photo's still its content identifier.
///
/// Cost: a walk of EXIF IFD0, the Exif IFD and the note's IFD; nothing is allocated but the strings read. Damaged
/// EXIF answers nil.
package enum AppleMakerNote {
    /// The EXIF tag of the maker note.
    static let tag = 0x927C
    /// Where the note's IFD starts.
    static let ifdOffset = 14
    /// The note's first bytes.
    static let signature = Array("Apple iOS\0".utf8)
    /// The tag holding a Live Photo still's content identifier (ExifTool's `MediaGroupUUID`): present only when a
    /// video goes with the still, and equal to that video's `com.apple.quicktime.content.identifier`.
    static let contentIdentifierTag = 0x0011

    /// The maker note's IFD (read from ``ifdOffset``), or nil when the EXIF holds no Apple maker note.
    static func ifd(in exif: IFDReader) throws(ProbeStop) -> IFDReader? {
        guard let exifIFD = try exif.subIFD(IFDReader.exifIFDTag, inIFDAt: try exif.firstIFD()),
            let note = try exif.entry(tag, inIFDAt: exifIFD),
            let range = try exif.valueRange(of: note, size: 1), range.count >= ifdOffset + 2
        else { return nil }
        let bytes = UnsafeRawBufferPointer(rebasing: exif.reader.bytes[range])
        guard bytes.starts(with: signature) else { return nil }
        let maker = IFDReader(bytes, littleEndian: false)
        try maker.requireIFD(at: ifdOffset)
        return maker
    }

    /// The Live Photo content identifier in an EXIF payload (TIFF-structured, with or without the "Exif\0\0"
    /// preamble): the ASCII value of ``contentIdentifierTag``, up to its first NUL; nil when there is none, it is
    /// empty or longer than 255 bytes, or the structure is damaged.
    package static func contentIdentifier(exif payload: UnsafeRawBufferPointer) -> String? {
        guard let exif = IFDReader(exifPayload: payload) else { return nil }
        do throws(ProbeStop) {
            guard let note = try ifd(in: exif), let entry = try note.entry(contentIdentifierTag, inIFDAt: ifdOffset),
                try note.type(of: entry) == 2, let range = try note.valueRange(of: entry, size: 1), range.count < 256
            else { return nil }
            let text = String(decoding: note.reader.bytes[range].prefix { $0 != 0 }, as: UTF8.self)
            return text.isEmpty ? nil : text
        } catch {
            return nil
        }
    }
}
