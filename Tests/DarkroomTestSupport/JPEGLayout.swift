/// Where a JPEG's scans start, found without Darkroom's own parsers (for tests of them): the segments before the
/// frame header are skipped by their lengths (so an EXIF thumbnail inside APP1 is passed over), then every
/// 0xFF 0xDA after it is a start of scan, since entropy-coded data never holds that pair (a 0xFF there is always
/// followed by 0x00 or a restart marker).
package enum JPEGLayout {
    /// The start-of-scan offsets of the main image and whether its frame header is progressive (SOF2).
    package static func scans(_ bytes: [UInt8]) throws -> (offsets: [Int], progressive: Bool) {
        var i = 2
        while i + 4 <= bytes.count, bytes[i] == 0xFF, !(0xC0...0xC2).contains(bytes[i + 1]) {
            i += 2 + (Int(bytes[i + 2]) << 8 | Int(bytes[i + 3]))
        }
        guard i + 2 <= bytes.count, bytes[i] == 0xFF else { throw TestSupportError("no JPEG frame header found") }
        let offsets = (i..<bytes.count - 1).filter { bytes[$0] == 0xFF && bytes[$0 + 1] == 0xDA }
        return (offsets, bytes[i + 1] == 0xC2)
    }
}
