import Foundation
import Testing

@testable import DarkroomSupport

@Suite("Hex")
struct HexTests {
    @Test("encoding matches printf's %02x / %02X for every byte value")
    func encodeMatchesPrintf() {
        // Given every byte value
        let bytes = (0...255).map { UInt8($0) }
        // When they are encoded both ways
        let lower = Hex.encode(bytes)
        let upper = Hex.encode(bytes, uppercase: true)
        // Then each is two digits a byte, as printf writes them
        #expect(lower == bytes.map { String(format: "%02x", $0) }.joined())
        #expect(upper == bytes.map { String(format: "%02X", $0) }.joined())
        #expect(Hex.encode([UInt8]()) == "")
    }

    @Test("a 64-bit value is 16 digits, most significant first, as printf's %016llx writes it")
    func encodeWord() {
        // Given values with leading zero nibbles, all bits set and a mixed pattern
        for value: UInt64 in [0, 1, 0xff, 0x0123_4567_89ab_cdef, .max, 0x8000_0000_0000_0000] {
            // When one is encoded
            // Then it is printf's zero-padded lowercase form
            #expect(Hex.encode(value) == String(format: "%016llx", value), "\(value)")
        }
    }

    @Test("decoding reverses encoding in either case; odd lengths and non-digits are refused")
    func decode() {
        // Given every byte value in both cases
        let bytes = (0...255).map { UInt8($0) }
        // Then both decode to the bytes, and the empty string to no bytes
        #expect(Hex.decode(Hex.encode(bytes)) == bytes)
        #expect(Hex.decode(Hex.encode(bytes, uppercase: true)) == bytes)
        #expect(Hex.decode("") == [])
        #expect(Hex.decode("00ff"[...]) == [0, 255])
        // And malformed text is nil, never a partial result
        for bad in ["0", "abc", "0g", "g0", " 00", "0x00", "é0"] { #expect(Hex.decode(bad) == nil, "\(bad)") }
    }

    @Test("digit values and digits for every nibble")
    func digits() {
        for nibble in UInt8(0)...15 {
            #expect(Hex.value(ofDigit: Hex.digit(nibble)) == nibble)
            #expect(Hex.value(ofDigit: Hex.digit(nibble, uppercase: true)) == nibble)
        }
        #expect(Hex.value(ofDigit: UInt8(ascii: "g")) == nil && Hex.value(ofDigit: UInt8(ascii: "/")) == nil)
    }
}
