import Foundation

/// What the pipeline stores beside original bytes in the disk cache: HTTP validators and freshness.
struct HTTPCacheMetadata: Codable, Sendable, Equatable {
    /// The `ETag` header, sent back as `If-None-Match`.
    var etag: String?
    /// The `Last-Modified` header, sent back as `If-Modified-Since`.
    var lastModified: String?
    /// Unix time after which the copy is stale and must be revalidated (or fetched again).
    var expires: Double
    /// The response's own `Cache-Control` and `Expires`, kept so that a 304 without them updates the stored
    /// response rather than replacing it (RFC 9111 §4.3.4): a `no-cache` object stays revalidated on every use.
    var cacheControl: String?
    var expiresHeader: String?

    var hasValidators: Bool { etag != nil || lastModified != nil }

    func isFresh(now: Double) -> Bool { now < expires }

    /// Headers for a conditional request: `If-None-Match` when there is an ETag, else `If-Modified-Since`.
    /// Not both: dates have one-second resolution, and some servers (moto among them) answer 304 to a date that
    /// matches even when the ETag does not, which would keep an object replaced within the same second stale.
    var conditionalHeaders: [(name: String, value: String)] {
        if let etag { return [("If-None-Match", etag)] }
        if let lastModified { return [("If-Modified-Since", lastModified)] }
        return []
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
        return HTTPCacheMetadata(
            etag: etag, lastModified: lastModified, expires: now + lifetime, cacheControl: headers["cache-control"],
            expiresHeader: headers["expires"])
    }

    /// The metadata after a 304 to a revalidation of `stored`: the 304's header fields replace the stored ones,
    /// fields it leaves out keep their stored values (RFC 9111 §4.3.4), and freshness is computed again from the
    /// result. `nil` when the merged headers say `no-store`.
    static func updated(
        _ stored: HTTPCacheMetadata, with headers: [String: String], now: Double, defaultMaxAge: Double
    ) -> HTTPCacheMetadata? {
        var merged = headers
        let kept: [(String, String?)] = [
            ("etag", stored.etag), ("last-modified", stored.lastModified), ("cache-control", stored.cacheControl),
            ("expires", stored.expiresHeader),
        ]
        for case (let name, let value?) in kept where merged[name] == nil { merged[name] = value }
        return metadata(for: merged, now: now, defaultMaxAge: defaultMaxAge)
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
