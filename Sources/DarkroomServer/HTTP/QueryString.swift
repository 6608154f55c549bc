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

    private static func decode(_ part: Substring) -> String? {
        String(part).replacingOccurrences(of: "+", with: " ").removingPercentEncoding
    }
}
