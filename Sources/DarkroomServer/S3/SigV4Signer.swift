import Crypto
import DarkroomSupport
import Foundation

/// AWS Signature Version 4 for S3 GET requests (header-based authentication), small enough to read in one sitting
/// and checked against AWS's published examples.
///
/// Canonical request: method, URI-encoded path (each segment, `/` kept), canonical query (none for GetObject),
/// the signed headers lower-cased and sorted as `name:value` lines, their names joined by `;`, and the payload hash.
/// The string to sign hashes it under `AWS4-HMAC-SHA256`, the time and the scope `date/region/service/aws4_request`;
/// the key is derived by chaining HMAC-SHA256 over the date, region, service and `aws4_request`. Cost: five HMACs
/// and one SHA-256 per request.
struct SigV4Signer: Sendable {
    /// Credentials: an access key ID, its secret, and a session token for temporary credentials.
    struct Credentials: Sendable {
        var accessKeyID: String
        var secretAccessKey: String
        var sessionToken: String?
    }

    let credentials: Credentials
    let region: String
    var service = "s3"

    /// The SHA-256 of an empty body, the payload hash of a GET.
    static let emptyPayloadHash = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

    /// The headers to send with a request for `url` at `date`: `headers` (which are signed) plus `x-amz-date`,
    /// `x-amz-content-sha256`, `x-amz-security-token` when the credentials have one, and `Authorization`.
    func sign(
        method: String = "GET", url: URL, headers: [(name: String, value: String)] = [], date: Date = Date(),
        payloadHash: String = emptyPayloadHash
    ) -> [(name: String, value: String)] {
        let (stamp, day) = Self.timestamps(date)
        var signed = headers.map { (name: $0.name.lowercased(), value: Self.trim($0.value)) }
        let host = url.host.map { h in url.port.map { "\(h):\($0)" } ?? h } ?? ""
        if !signed.contains(where: { $0.name == "host" }) { signed.append(("host", host)) }
        signed.append(("x-amz-content-sha256", payloadHash))
        signed.append(("x-amz-date", stamp))
        if let token = credentials.sessionToken { signed.append(("x-amz-security-token", token)) }
        signed.sort { $0.name < $1.name }
        let names = signed.map(\.name).joined(separator: ";")
        let canonical = canonicalRequest(method: method, url: url, headers: signed, payloadHash: payloadHash)
        let scope = "\(day)/\(region)/\(service)/aws4_request"
        let toSign = "AWS4-HMAC-SHA256\n\(stamp)\n\(scope)\n\(Hex.encode(SHA256.hash(data: Array(canonical.utf8))))"
        let signature = Hex.encode(
            HMAC<SHA256>.authenticationCode(for: Array(toSign.utf8), using: signingKey(day: day)))
        let authorization =
            "AWS4-HMAC-SHA256 Credential=\(credentials.accessKeyID)/\(scope),SignedHeaders=\(names),Signature=\(signature)"
        return signed.filter { $0.name != "host" } + [("authorization", authorization)]
    }

    /// The canonical request (exposed for tests against the published intermediate values).
    func canonicalRequest(
        method: String, url: URL, headers: [(name: String, value: String)], payloadHash: String
    ) -> String {
        var path = "/"
        if !url.path.isEmpty {
            let segments: [String] = url.path.split(separator: "/", omittingEmptySubsequences: false).map {
                Self.encode(String($0))
            }
            path = segments.joined(separator: "/")
        }
        let items = URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems ?? []
        var pairs: [(String, String)] = items.map { (Self.encode($0.name), Self.encode($0.value ?? "")) }
        pairs.sort { a, b in a.0 != b.0 ? a.0 < b.0 : a.1 < b.1 }
        let query = pairs.map { "\($0.0)=\($0.1)" }.joined(separator: "&")
        let lines = headers.map { "\($0.name):\($0.value)\n" }.joined()
        return "\(method)\n\(path)\n\(query)\n\(lines)\n\(headers.map(\.name).joined(separator: ";"))\n\(payloadHash)"
    }

    /// The key for `day` (`YYYYMMDD`).
    func signingKey(day: String) -> SymmetricKey {
        func mac(_ key: SymmetricKey, _ text: String) -> SymmetricKey {
            SymmetricKey(data: Data(HMAC<SHA256>.authenticationCode(for: Array(text.utf8), using: key)))
        }
        let secret = SymmetricKey(data: Array("AWS4\(credentials.secretAccessKey)".utf8))
        return mac(mac(mac(mac(secret, day), region), service), "aws4_request")
    }

    /// `YYYYMMDD'T'HHMMSS'Z'` and `YYYYMMDD` in UTC.
    static func timestamps(_ date: Date) -> (String, String) {
        var time = time_t(date.timeIntervalSince1970)
        var parts = tm()
        gmtime_r(&time, &parts)
        func pad(_ n: Int32, _ width: Int) -> String {
            let s = String(n)
            return String(repeating: "0", count: max(0, width - s.count)) + s
        }
        let day = pad(parts.tm_year + 1900, 4) + pad(parts.tm_mon + 1, 2) + pad(parts.tm_mday, 2)
        return (day + "T" + pad(parts.tm_hour, 2) + pad(parts.tm_min, 2) + pad(parts.tm_sec, 2) + "Z", day)
    }

    /// URI-encodes every byte except the unreserved `A–Z a–z 0–9 - . _ ~`, with upper-case hex (AWS's rule).
    static func encode(_ text: String) -> String { RequestSigner.encode(text) }

    /// Trims a header value and folds runs of spaces to one, as the canonical form asks.
    static func trim(_ value: String) -> String {
        value.split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ")
    }
}
