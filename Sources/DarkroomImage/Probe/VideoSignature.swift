/// The magic bytes of the video containers Darkroom reads: ISO BMFF (an `ftyp` box naming a video brand, or an old
/// QuickTime file that starts with a movie atom), Matroska's EBML header (MKV, WebM) and RIFF AVI. Recognizing them
/// here lets a probe name a video as ``ImageFileFormat/video``; reading one is DarkroomVideo's. Cost: a few
/// comparisons of the first bytes.
enum VideoSignature {
    /// ISO BMFF brands of video files: ISO base media and MP4 (`isom`, `iso2`…`iso9`, `mp41`, `mp42`, `mp71`,
    /// `avc1`, `dash`, `M4V `, `M4VH`, `M4VP`, `f4v `, `MSNV`, `XAVC`, `mmp4`), QuickTime (`qt  `) and 3GPP
    /// (`3gp4`…`3gp9`, `3g2a`…`3g2c`, `3ge6`, `3ge7`). A HEIF or AVIF file names its image brand before any of
    /// these is looked at (``ImageProber/isoBrandFormat(_:)`` runs first).
    static let isoBrands: Set<String> = [
        "isom", "iso2", "iso3", "iso4", "iso5", "iso6", "iso7", "iso8", "iso9", "mp41", "mp42", "mp71", "avc1", "dash",
        "M4V ", "M4VH", "M4VP", "f4v ", "MSNV", "XAVC", "mmp4", "qt  ", "3gp4", "3gp5", "3gp6", "3gp7", "3gp8",
        "3gp9", "3g2a", "3g2b", "3g2c", "3ge6", "3ge7",
    ]

    /// Whether the first bytes are a video container's.
    static func matches(_ reader: ByteReader) -> Bool { container(reader) != nil }

    /// The container's family for messages: `ISO BMFF`, `Matroska` or `AVI`; `video` when unknown.
    static func containerName(_ reader: ByteReader) -> String { container(reader) ?? "video" }

    private static func container(_ reader: ByteReader) -> String? {
        guard let head = try? reader.u32be(0), let type = try? reader.u32be(4) else { return nil }
        if head == 0x1A45_DFA3 { return "Matroska" }  // EBML
        if head == 0x5249_4646, let form = try? reader.u32be(8), form == 0x4156_4920 { return "AVI" }  // RIFF…"AVI "
        if type == 0x6674_7970 {  // "ftyp": the major brand, then the compatible ones
            var offset = 8
            while offset + 4 <= min(Int(head), reader.count, 4096) {
                if offset != 12, let brand = fourCC(reader, offset), isoBrands.contains(brand) { return "ISO BMFF" }
                offset += 4
            }
            return nil
        }
        // A QuickTime movie from before `ftyp`: its first atom is the movie, its data, or padding before them
        // (`moov`, `mdat`, `wide`, `free`, `skip`)
        let atoms: Set<Int> = [0x6D6F_6F76, 0x6D64_6174, 0x7769_6465, 0x6672_6565, 0x736B_6970]
        return atoms.contains(type) && (head == 0 || head >= 8) ? "ISO BMFF" : nil
    }

    private static func fourCC(_ reader: ByteReader, _ offset: Int) -> String? {
        guard let value = try? reader.u32be(offset) else { return nil }
        let bytes = [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: value >> $0) }
        guard bytes.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }
}
