/// The `tEXt` chunks of a PNG, read without decoding it: the freedesktop thumbnail cache keeps its metadata there
/// (`Thumb::URI`, `Thumb::MTime`). Walks the chunk headers up to the first `IDAT` (texts after the image data are
/// not read); texts are taken as Latin-1, as the PNG specification defines them. Cost: one pass over the headers.
package enum PNGTextChunks {
    /// Keyword → text of each `tEXt` chunk before the image data; empty for anything that is not a PNG.
    package static func read(_ bytes: UnsafeRawBufferPointer) -> [String: String] {
        let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        guard bytes.count >= 8, bytes.prefix(8).elementsEqual(signature) else { return [:] }
        var texts: [String: String] = [:]
        var offset = 8
        while offset + 8 <= bytes.count {
            let length = bytes[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) }
            let type = String(decoding: bytes[offset + 4..<offset + 8], as: UTF8.self)
            let start = offset + 8
            guard length <= bytes.count - start else { break }
            if type == "IDAT" || type == "IEND" { break }
            if type == "tEXt", let separator = bytes[start..<start + length].firstIndex(of: 0) {
                let keyword = String(bytes[start..<separator].map { Character(Unicode.Scalar($0)) })
                let text = String(bytes[(separator + 1)..<(start + length)].map { Character(Unicode.Scalar($0)) })
                texts[keyword] = text
            }
            offset = start + length + 4  // data and CRC
        }
        return texts
    }
}
