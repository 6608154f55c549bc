/// Hexadecimal text for bytes and back: signatures and hashes in headers and logs, percent-escapes, keys from the
/// command line. O(n), no intermediate strings per byte.
package enum Hex {
    /// `bytes` as two digits each (lowercase unless `uppercase`).
    package static func encode(_ bytes: some Sequence<UInt8>, uppercase: Bool = false) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.underestimatedCount * 2)
        for byte in bytes {
            out.append(digit(byte >> 4, uppercase: uppercase))
            out.append(digit(byte & 15, uppercase: uppercase))
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// `value` as 16 digits, most significant first (lowercase): hashes and random names of a fixed width. One
    /// allocation.
    package static func encode(_ value: UInt64) -> String {
        String(unsafeUninitializedCapacity: 16) { out in
            write(value, into: out, at: 0)
            return 16
        }
    }

    /// Writes `value`'s 16 lowercase digits into `out[start ..< start + 16]`, for callers that frame them (an ETag's
    /// quotes) in the same buffer.
    package static func write(_ value: UInt64, into out: UnsafeMutableBufferPointer<UInt8>, at start: Int) {
        for i in 0..<16 { out[start + i] = digit(UInt8(truncatingIfNeeded: value >> (60 - 4 * UInt64(i))) & 15) }
    }

    /// The bytes `text` spells (an even number of digits, either case), or nil for anything else.
    package static func decode(_ text: some StringProtocol) -> [UInt8]? {
        let digits = Array(text.utf8)
        guard digits.count % 2 == 0 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(digits.count / 2)
        var i = 0
        while i < digits.count {
            guard let high = value(ofDigit: digits[i]), let low = value(ofDigit: digits[i + 1]) else { return nil }
            out.append(high << 4 | low)
            i += 2
        }
        return out
    }

    /// The value 0–15 of one hex digit (either case), or nil.
    package static func value(ofDigit c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// The digit for `nibble` (0–15).
    package static func digit(_ nibble: UInt8, uppercase: Bool = false) -> UInt8 {
        nibble < 10 ? UInt8(ascii: "0") + nibble : (uppercase ? UInt8(ascii: "A") : UInt8(ascii: "a")) + nibble - 10
    }
}
