import Testing

@testable import DarkroomImage

/// Hostile icon directories: entry sizes a PNG cannot have must never reach size arithmetic.
@Suite("ICO")
struct ICOTests {
    /// An icon whose entries are PNGs cut to their signature and IHDR, declaring `sizes` (the directory's own width
    /// and height bytes say 0, "256 or more", as real icons with PNG entries do).
    static func icon(pngSizes sizes: [(UInt32, UInt32)]) -> [UInt8] {
        func le16(_ v: Int) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF)] }
        func le32(_ v: Int) -> [UInt8] { le16(v & 0xFFFF) + le16(v >> 16 & 0xFFFF) }
        func be32(_ v: UInt32) -> [UInt8] { [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: v >> $0) } }
        var directory: [UInt8] = [0, 0, 1, 0] + le16(sizes.count)
        var body: [UInt8] = []
        for (width, height) in sizes {
            let png: [UInt8] =
                [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52] + be32(width)
                + be32(height) + [8, 6, 0, 0, 0] + [0, 0, 0, 0]
            let offset = 6 + 16 * sizes.count + body.count
            directory += [0, 0, 0, 0] + le16(1) + le16(32) + le32(png.count) + le32(offset)
            body += png
        }
        return directory + body
    }

    @Test("PNG entries declaring sides past 2^31 − 1 are skipped; an icon with no other entry is refused, typed")
    func impossiblePNGSizes() throws {
        // Given an icon whose two PNG entries each declare 4294967295 × 4294967295 (sorting them by area, or
        // checking one against the animation pixel limit, overflowed and trapped)
        let hostile = Self.icon(pngSizes: [(0xFFFF_FFFF, 0xFFFF_FFFF), (0xFFFF_FFFF, 0xFFFF_FFFF)])
        // When probed, or opened as an animation, Then each is a corrupt-file error
        let error = #expect(throws: DarkroomImageError.self) { try ImageProber.probe(hostile) }
        #expect(error?.code == .corrupt)
        _ = hostile.withUnsafeBytes { bytes in
            #expect(throws: DarkroomImageError.self) { try EncodedAnimation(copying: bytes) }
        }
        // Given a 16 × 16 entry beside an impossible one, When probed, Then the readable entry is the icon's size
        let mixed = Self.icon(pngSizes: [(0x8000_0000, 16), (16, 16)])
        let probe = try ImageProber.probe(mixed)
        #expect(probe.format == .ico && probe.width == 16 && probe.height == 16)
    }
}
