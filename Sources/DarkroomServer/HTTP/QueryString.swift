import DarkroomSupport
import Foundation

/// `application/x-www-form-urlencoded` query strings, both ways.
package enum QueryString {
    /// The items of `query` in order, names and values percent-decoded (`+` is a space). One pass over the
    /// query's UTF-8 bytes; no Foundation (this runs on every request).
    /// - Throws: ``ServerError`` `badRequest` for malformed percent-encoding or more than `maxItems` items.
    package static func parse(
        _ query: String?, maxItems: Int = 64
    ) throws(ServerError) -> [(name: String, value: String)] {
        guard var query, !query.isEmpty else { return [] }
        let result: Result<[(name: String, value: String)], ServerError> = query.withUTF8 { bytes in
            var items: [(name: String, value: String)] = []
            var start = 0
            var equals = -1
            for i in 0...bytes.count {
                if i < bytes.count && bytes[i] != UInt8(ascii: "&") {
                    if bytes[i] == UInt8(ascii: "=") && equals < 0 { equals = i }
                    continue
                }
                defer {
                    start = i + 1
                    equals = -1
                }
                guard i > start else { continue }
                guard items.count < maxItems else {
                    return .failure(ServerError(.badRequest, "more than \(maxItems) query parameters"))
                }
                let nameEnd = equals >= 0 ? equals : i
                let valueStart = equals >= 0 ? equals + 1 : i
                guard let name = decode(UnsafeBufferPointer(rebasing: bytes[start..<nameEnd])),
                    let value = decode(UnsafeBufferPointer(rebasing: bytes[valueStart..<i]))
                else {
                    return .failure(ServerError(.badRequest, "malformed percent-encoding in the query"))
                }
                items.append((name, value))
            }
            return .success(items)
        }
        return try result.get()
    }

    /// Percent-encodes `value` for a query component, keeping only RFC 3986 unreserved characters.
    static func encode(_ value: String) -> String {
        value.addingPercentEncoding(withAllowedCharacters: unreserved) ?? ""
    }

    /// `name=value&…`, each side encoded.
    static func build(_ items: [(name: String, value: String)]) -> String {
        items.map { encode($0.name) + "=" + encode($0.value) }.joined(separator: "&")
    }

    private static let unreserved = CharacterSet(
        charactersIn:
            "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")

    /// Percent-decodes one component (`+` is a space); `nil` for a malformed escape or bytes that are not UTF-8.
    static func decode(_ bytes: UnsafeBufferPointer<UInt8>) -> String? {
        if !bytes.contains(where: { $0 == UInt8(ascii: "%") || $0 == UInt8(ascii: "+") }) {
            return String(validating: bytes, as: UTF8.self)
        }
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var i = 0
        while i < bytes.count {
            let c = bytes[i]
            if c == UInt8(ascii: "%") {
                guard i + 2 < bytes.count, let hi = Hex.value(ofDigit: bytes[i + 1]),
                    let lo = Hex.value(ofDigit: bytes[i + 2])
                else { return nil }
                out.append(hi << 4 | lo)
                i += 3
                continue
            }
            out.append(c == UInt8(ascii: "+") ? UInt8(ascii: " ") : c)
            i += 1
        }
        return String(validating: out, as: UTF8.self)
    }
}

extension RequestSigner {
    /// `pathAndQuery` (`/v1/thumb?src=…&w=…`) with its `sig` added (any `sig` already there is replaced), parsed
    /// exactly as the server parses requests. For links and `darkroom sign`.
    /// - Throws: ``ServerError`` `badRequest` for a malformed query.
    public func signed(pathAndQuery: String) throws(ServerError) -> String {
        let parts = pathAndQuery.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        let path = String(parts[0])
        let query = try QueryString.parse(parts.count > 1 ? String(parts[1]) : nil).filter { $0.name != "sig" }
        return path + "?" + signedQuery(path: path, query: query)
    }
}
