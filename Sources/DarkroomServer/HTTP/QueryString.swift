import Foundation

/// `application/x-www-form-urlencoded` query strings, both ways.
enum QueryString {
    /// The items of `query` in order, names and values percent-decoded (`+` is a space).
    /// - Throws: ``ServerError`` `badRequest` for malformed percent-encoding or more than `maxItems` items.
    static func parse(_ query: String?, maxItems: Int = 64) throws(ServerError) -> [(name: String, value: String)] {
        guard let query, !query.isEmpty else { return [] }
        var items: [(name: String, value: String)] = []
        for pair in query.split(separator: "&", omittingEmptySubsequences: true) {
            guard items.count < maxItems else { throw ServerError(.badRequest, "more than \(maxItems) query parameters") }
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard let name = decode(parts[0]), let value = decode(parts.count > 1 ? parts[1] : "") else {
                throw ServerError(.badRequest, "malformed percent-encoding in the query")
            }
            items.append((name, value))
        }
        return items
    }

    /// Percent-encodes `value` for a query component, keeping only RFC 3986 unreserved characters.
    static func encode(_ value: String) -> String {
        value.addingPercentEncoding(withAllowedCharacters: unreserved) ?? ""
    }

    /// `name=value&…`, each side encoded.
    static func build(_ items: [(name: String, value: String)]) -> String {
        items.map { encode($0.name) + "=" + encode($0.value) }.joined(separator: "&")
    }

    private static let unreserved = CharacterSet(charactersIn:
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")

    /// Percent-decodes one component (`+` is a space) in a single pass over its UTF-8; `nil` for a malformed
    /// escape or bytes that are not UTF-8. No Foundation: this runs on every request.
    static func decode(_ part: Substring) -> String? {
        let utf8 = part.utf8
        if !utf8.contains(where: { $0 == UInt8(ascii: "%") || $0 == UInt8(ascii: "+") }) { return String(part) }
        var out: [UInt8] = []
        out.reserveCapacity(utf8.count)
        var i = utf8.startIndex
        while i != utf8.endIndex {
            let c = utf8[i]
            if c == UInt8(ascii: "%") {
                let h = utf8.index(after: i)
                guard h != utf8.endIndex, utf8.index(after: h) != utf8.endIndex,
                      let hi = hex(utf8[h]), let lo = hex(utf8[utf8.index(after: h)]) else { return nil }
                out.append(hi << 4 | lo)
                i = utf8.index(h, offsetBy: 2)
                continue
            }
            out.append(c == UInt8(ascii: "+") ? UInt8(ascii: " ") : c)
            i = utf8.index(after: i)
        }
        return String(validating: out, as: UTF8.self)
    }

    private static func hex(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
