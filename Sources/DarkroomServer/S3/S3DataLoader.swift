import Darkroom
import Foundation
import Logging

/// Fetches `s3://bucket/key` sources from an S3-compatible endpoint (AWS, MinIO, moto…) with SigV4-signed GETs
/// over the pipeline's HTTP loader (AsyncHTTPClient): conditional headers pass through, so the pipeline's disk
/// cache revalidates originals by their S3 ETag, and the byte limit applies as for HTTP sources.
///
/// The endpoint is the operator's (`--s3-endpoint`), so it is not subject to the address checks remote URLs get;
/// which buckets a client may name is (``ServerConfiguration/S3/allowedBuckets``). Credentials never leave this
/// type: they sign requests and are not logged.
final class S3DataLoader: DataLoading {
    let configuration: ServerConfiguration.S3
    private let signer: SigV4Signer
    private let http: HTTPDataLoader

    init(configuration: ServerConfiguration.S3, http: HTTPDataLoader.Configuration, logger: Logger) {
        self.configuration = configuration
        signer = SigV4Signer(credentials: configuration.credentials, region: configuration.region)
        var http = http
        http.followsRedirects = false
        self.http = HTTPDataLoader(configuration: http, logger: logger)
    }

    /// The HTTP URL of `s3://bucket/key` at the endpoint (path style, or virtual-hosted: `bucket.host`).
    func endpointURL(bucket: String, key: String) -> URL? {
        guard var components = URLComponents(url: configuration.endpoint, resolvingAgainstBaseURL: false) else {
            return nil
        }
        let base = components.path.hasSuffix("/") ? String(components.path.dropLast()) : components.path
        if configuration.pathStyle {
            components.path = base + "/" + bucket + "/" + key
        } else {
            let host = components.host ?? ""
            components.host = bucket + "." + host
            components.path = base + "/" + key
        }
        return components.url
    }

    func loadData(_ request: DataRequest, progress: @escaping @Sendable (DataProgress) -> Void)
        async throws(DarkroomError) -> DataResponse
    {
        guard let (bucket, key) = Self.split(request.url), configuration.allowedBuckets.contains(bucket) else {
            throw DarkroomError(
                .refused, "S3 source \(request.url.absoluteString) is not in an allowed bucket",
                underlying: ServerError(.hostNotAllowed, "the bucket of \(request.url.absoluteString) is not allowed"))
        }
        guard let url = endpointURL(bucket: bucket, key: key) else {
            throw DarkroomError(.invalidRequest, "cannot build the S3 URL of \(request.url.absoluteString)")
        }
        var hop = request
        hop.url = url
        hop.headers = signer.sign(url: url) + request.headers
        return try await http.loadData(hop, progress: progress)
    }

    /// Closes the connection pool.
    func shutdown() async { await http.shutdown() }

    /// The bucket and key of `s3://bucket/key`, or `nil`.
    static func split(_ url: URL) -> (bucket: String, key: String)? {
        guard url.scheme?.lowercased() == "s3", let bucket = url.host, !bucket.isEmpty else { return nil }
        let key = String(url.path.drop { $0 == "/" })
        return key.isEmpty ? nil : (bucket, key)
    }
}
