import Crypto
import DarkroomSupport
import Foundation

/// Signs and verifies request URLs (`--key`) with HMAC-SHA256 over a canonical form, so only links the
/// operator built can make the server work.
///
/// Canonical form: the path, then, if any query items other than `sig` remain, `?` and those items as
/// `name=value` joined with `&`: names and values percent-encoded (upper-case hex) keeping only RFC 3986
/// unreserved characters, then sorted by encoded (name, value) in byte order. Query values passed in are already percent-decoded. Cost: one HMAC over the canonical
/// string plus sorting the items, O(n log n) in the query's items.
package struct RequestSigner: Sendable {
    private let key: SymmetricKey

    /// A signer keyed with the UTF-8 bytes of `key`.
    package init(key: String) {
        self.key = SymmetricKey(data: Array(key.utf8))
    }

    /// The canonical string that is signed (see the type's summary); `sig` items are left out.
    package static func canonical(path: String, query: [(name: String, value: String)]) -> String {
        let items = query.filter { $0.name != "sig" }
            .map { (name: encode($0.name), value: encode($0.value)) }
            .sorted { a, b in
                a.name != b.name
                    ? a.name.utf8.lexicographicallyPrecedes(b.name.utf8)
                    : a.value.utf8.lexicographicallyPrecedes(b.value.utf8)
            }
        guard !items.isEmpty else { return path }
        return path + "?" + items.map { "\($0.name)=\($0.value)" }.joined(separator: "&")
    }

    /// The signature of the canonical form, as 64 lower-case hex digits.
    package func signature(path: String, query: [(name: String, value: String)]) -> String {
        let mac = HMAC<SHA256>.authenticationCode(for: Array(Self.canonical(path: path, query: query).utf8), using: key)
        return Hex.encode(mac)
    }

    /// Throws ``ServerError/Code/badSignature`` unless `query` has exactly one `sig` whose value (hex, any case)
    /// is the signature of the rest. The comparison is constant-time.
    package func verify(path: String, query: [(name: String, value: String)]) throws(ServerError) {
        let sigs = query.filter { $0.name == "sig" }
        guard sigs.count == 1 else {
            throw ServerError(.badSignature, sigs.isEmpty ? "missing signature" : "more than one signature")
        }
        guard let given = Self.decodeHex(sigs[0].value), given.count == SHA256.byteCount else {
            throw ServerError(.badSignature, "malformed signature")
        }
        let message = Array(Self.canonical(path: path, query: query).utf8)
        guard HMAC<SHA256>.isValidAuthenticationCode(given, authenticating: message, using: key) else {
            throw ServerError(.badSignature, "wrong signature")
        }
    }

    /// A query string with the items (less any `sig`) in canonical order and encoding, followed by `sig=…`:
    /// `"a=1&b=2&sig=…"`, or `"sig=…"` when there are no other items. For building links.
    package func signedQuery(path: String, query: [(name: String, value: String)]) -> String {
        let canonical = Self.canonical(path: path, query: query)
        let sig = "sig=" + signature(path: path, query: query)
        guard let question = canonical.firstIndex(of: "?") else { return sig }
        return canonical[canonical.index(after: question)...] + "&" + sig
    }

    // MARK: - Helpers

    /// Percent-encodes every byte of the UTF-8 form except A–Z a–z 0–9 `-` `.` `_` `~`, with upper-case hex.
    static func encode(_ text: String) -> String {
        var out = [UInt8]()
        out.reserveCapacity(text.utf8.count)
        let hex = Array("0123456789ABCDEF".utf8)
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "~"):
                out.append(byte)
            default:
                out += [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]]
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    private static func decodeHex(_ text: String) -> [UInt8]? {
        let digits = Array(text.utf8)
        guard digits.count % 2 == 0 else { return nil }
        func value(_ c: UInt8) -> UInt8? {
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
            default: nil
            }
        }
        var bytes = [UInt8]()
        bytes.reserveCapacity(digits.count / 2)
        var i = 0
        while i < digits.count {
            guard let hi = value(digits[i]), let lo = value(digits[i + 1]) else { return nil }
            bytes.append(hi << 4 | lo)
            i += 2
        }
        return bytes
    }
}
