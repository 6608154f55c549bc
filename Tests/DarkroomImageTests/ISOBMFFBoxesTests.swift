import Testing

@testable import DarkroomImage

@Suite struct ISOBMFFBoxesTests {
    static func box(_ type: String, _ payload: [UInt8]) -> [UInt8] {
        let size = UInt32(8 + payload.count)
        return [UInt8(size >> 24), UInt8(size >> 16 & 0xFF), UInt8(size >> 8 & 0xFF), UInt8(size & 0xFF)]
            + Array(type.utf8) + payload
    }

    static func largeBox(_ type: String, _ payload: [UInt8]) -> [UInt8] {
        let size = UInt64(16 + payload.count)
        return [0, 0, 0, 1] + Array(type.utf8) + (0..<8).map { UInt8(size >> (56 - 8 * UInt64($0)) & 0xFF) } + payload
    }

    @Test func findsTheContentLightLevelInsideTheItemProperties() {
        // Given a HEIF-like file: ftyp, then meta (a full box) holding hdlr and iprp/ipco with colr and clli
        // (1,000 nits max, 400 frame average), the ipco written with a 64-bit size
        let clli = Self.box("clli", [0x03, 0xE8, 0x01, 0x90])
        let ipco = Self.largeBox("ipco", Self.box("colr", Array("nclx".utf8) + [0, 9, 0, 16, 0, 9, 0x80]) + clli)
        let meta = Self.box(
            "meta", [0, 0, 0, 0] + Self.box("hdlr", [UInt8](repeating: 0, count: 24)) + Self.box("iprp", ipco))
        let file = Self.box("ftyp", Array("avif".utf8) + [0, 0, 0, 0]) + meta + Self.box("mdat", [1, 2, 3])
        // When its content light level is read
        let level = file.withUnsafeBytes { ISOBMFFBoxes.contentLightLevel($0) }
        // Then both values come back
        #expect(level?.maxCLL == 1000)
        #expect(level?.maxFALL == 400)
    }

    @Test func aDamagedOrMissingBoxGivesNothingRatherThanReadingPastTheEnd() {
        // Given files without a clli, with a box whose size runs past the end, and cut inside the clli payload
        let ipco = Self.box("ipco", Self.box("colr", [0, 0, 0, 0]))
        let noCLLI = Self.box("meta", [0, 0, 0, 0] + Self.box("iprp", ipco))
        var overlong = Self.box(
            "meta", [0, 0, 0, 0] + Self.box("iprp", Self.box("ipco", Self.box("clli", [0, 1, 0, 2]))))
        overlong[3] = 0xFF  // meta claims more bytes than there are
        let short = Self.box("meta", [0, 0, 0, 0] + Self.box("iprp", Self.box("ipco", Self.box("clli", [0, 1]))))
        // When each is read
        // Then none has a content light level, and nothing traps
        for file in [noCLLI, overlong, short, [], [0, 0, 0]] {
            #expect(file.withUnsafeBytes { ISOBMFFBoxes.contentLightLevel($0) } == nil)
        }
    }
}
