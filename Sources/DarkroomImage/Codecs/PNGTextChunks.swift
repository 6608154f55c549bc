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

    /// `png` with the `tEXt` chunks named in `texts` (before the image data) replaced by the given texts, placed
    /// right after `IHDR`; every other chunk kept byte for byte. Texts are written as Latin-1 (characters past U+00FF
    /// become `?`). Nil for anything that is not a PNG. Cost: one copy of the file.
    package static func replacing(_ texts: [(keyword: String, text: String)], in png: [UInt8]) -> [UInt8]? {
        let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        guard png.count >= 33, png.starts(with: signature), png[12..<16].elementsEqual(Array("IHDR".utf8)) else {
            return nil
        }
        let replaced = Set(texts.map(\.keyword))
        var out = Array(png[0..<33])  // signature (8) + IHDR (25)
        out.reserveCapacity(png.count + 256)
        for (keyword, text) in texts {
            let latin1 = (keyword + "\0" + text).unicodeScalars.map { $0.value < 256 ? UInt8($0.value) : 0x3F }
            out += chunk(type: "tEXt", data: latin1)
        }
        var offset = 33
        var inImage = false
        while offset + 12 <= png.count {
            let length = png[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) }
            guard length <= png.count - offset - 12 else { return nil }
            let type = String(decoding: png[offset + 4..<offset + 8], as: UTF8.self)
            let end = offset + 12 + length
            if type == "IDAT" { inImage = true }
            var dropped = false
            if !inImage, type == "tEXt", let separator = png[(offset + 8)..<(end - 4)].firstIndex(of: 0) {
                let keyword = String(png[(offset + 8)..<separator].map { Character(Unicode.Scalar($0)) })
                dropped = replaced.contains(keyword)
            }
            if !dropped { out += png[offset..<end] }
            offset = end
        }
        return out
    }

    /// One chunk: length, type, data and CRC.
    private static func chunk(type: String, data: [UInt8]) -> [UInt8] {
        let body = Array(type.utf8) + data
        let crc = CRC32.checksum(body)
        let n = data.count
        return [UInt8(n >> 24 & 0xFF), UInt8(n >> 16 & 0xFF), UInt8(n >> 8 & 0xFF), UInt8(n & 0xFF)] + body
            + [UInt8(crc >> 24 & 0xFF), UInt8(crc >> 16 & 0xFF), UInt8(crc >> 8 & 0xFF), UInt8(crc & 0xFF)]
    }
}
