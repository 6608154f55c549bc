import Foundation

/// What the pipeline stores beside original bytes in the disk cache: HTTP validators and freshness.
struct HTTPCacheMetadata: Codable, Sendable, Equatable {
    /// The `ETag` header, sent back as `If-None-Match`.
    var etag: String?
    /// The `Last-Modified` header, sent back as `If-Modified-Since`.
    var lastModified: String?
    /// Unix time after which the copy is stale and must be revalidated (or fetched again).
    var expires: Double

    var hasValidators: Bool { etag != nil || lastModified != nil }

    func isFresh(now: Double) -> Bool { now < expires }

    /// Headers for a conditional request.
    var conditionalHeaders: [(name: String, value: String)] {
        var headers: [(name: String, value: String)] = []
        if let etag { headers.append(("If-None-Match", etag)) }
        if let lastModified { headers.append(("If-Modified-Since", lastModified)) }
        return headers
    }

    func encoded() -> [UInt8] { (try? Array(JSONEncoder().encode(self))) ?? [] }

    static func decode(_ bytes: [UInt8]?) -> HTTPCacheMetadata? {
        guard let bytes, !bytes.isEmpty else { return nil }
        return try? JSONDecoder().decode(HTTPCacheMetadata.self, from: Data(bytes))
    }
}

/// Reads `Cache-Control`, `Expires`, `ETag` and `Last-Modified` the way a private (browser) cache does.
enum HTTPCachePolicy {
    /// What to do with a response: `nil` for `no-store` (do not keep it), else the metadata to store.
    ///
    /// Freshness: `no-cache` → stale at once (always revalidated); `max-age=N` → N seconds; else `Expires`;
    /// else, with `Last-Modified`, 10 % of its age (capped at `defaultMaxAge`); else `defaultMaxAge`.
    static func metadata(for headers: [String: String], now: Double, defaultMaxAge: Double) -> HTTPCacheMetadata? {
        let directives = parseCacheControl(headers["cache-control"] ?? "")
        if directives["no-store"] != nil { return nil }
        let etag = headers["etag"]
        let lastModified = headers["last-modified"]
        var lifetime: Double
        if directives["no-cache"] != nil {
            lifetime = 0
        } else if let maxAge = directives["max-age"].flatMap({ $0.flatMap(Double.init) }) {
            lifetime = max(0, maxAge)
        } else if let expires = headers["expires"], let date = httpDate(expires) {
            let served = headers["date"].flatMap(httpDate) ?? now
            lifetime = max(0, date - served)
        } else if let lastModified, let modified = httpDate(lastModified) {
            lifetime = min(defaultMaxAge, max(0, (now - modified) / 10))
        } else {
            lifetime = defaultMaxAge
        }
        return HTTPCacheMetadata(etag: etag, lastModified: lastModified, expires: now + lifetime)
    }

    /// `max-age=60, no-cache` → `["max-age": "60", "no-cache": nil]` (names lower-cased, quotes stripped).
    static func parseCacheControl(_ value: String) -> [String: String?] {
        var result: [String: String?] = [:]
        for part in value.split(separator: ",") {
            let pair = part.split(separator: "=", maxSplits: 1)
            let name = pair[0].trimmingCharacters(in: .whitespaces).lowercased()
            guard !name.isEmpty else { continue }
            let argument =
                pair.count > 1
                ? pair[1].trimmingCharacters(in: .whitespaces).trimmingCharacters(in: CharacterSet(charactersIn: "\""))
                : nil
            result[name] = .some(argument)
        }
        return result
    }

    /// Parses an RFC 9110 IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`) to Unix time.
    static func httpDate(_ text: String) -> Double? {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        return formatter.date(from: text)?.timeIntervalSince1970
    }
}
