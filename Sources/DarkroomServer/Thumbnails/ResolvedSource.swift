import CDispatch  // `stat()`, the zero initializer of the C struct, is attributed to this module (MemberImportVisibility)
import Darkroom
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A `src` after the safety checks: a file inside the root, or a remote URL whose host is allowed (its address
/// is checked later, at connect time, by ``GuardedDataLoader``).
enum ResolvedSource: Sendable {
    /// A regular file inside the root; `identity` is its device, inode, size and modification time; `modified`
    /// the modification time in whole seconds (for `Last-Modified`).
    case file(path: String, identity: String, size: Int, modified: Int)
    /// An http(s) URL on an allowed host, or an `s3://bucket/key` in an allowed bucket.
    case remote(URL)

    /// Names this version of the source in cache keys and ETags: a changed file gets a new identity.
    var identity: String {
        switch self {
        case .file(_, let identity, _, _): identity
        case .remote(let url): "u:" + url.absoluteString
        }
    }

    /// The pipeline's source.
    var imageSource: ImageRequest.Source {
        switch self {
        case .file(let path, _, _, _): .file(path)
        case .remote(let url): .url(url)
        }
    }

    var isRemote: Bool { if case .remote = self { true } else { false } }

    /// The remote URL; nil for a file.
    var remoteURL: URL? { if case .remote(let url) = self { url } else { nil } }

    /// A file's modification time in seconds since 1970; `nil` for remote sources.
    var modified: Int? { if case .file(_, _, _, let modified) = self { modified } else { nil } }

    /// Checks `source` (a `src` value) against the root and the remote policy.
    /// - Throws: ``ServerError``: `pathOutsideRoot`, `notFound`, `hostNotAllowed`, `badRequest`.
    static func resolve(
        _ source: String, root: RootDirectory?, remote: RemotePolicy,
        cache: ResolvedPathCache? = nil, s3Buckets: Set<String>? = nil
    ) throws(ServerError) -> ResolvedSource {
        let lower = source.prefix(8).lowercased()
        if lower.hasPrefix("s3://") {
            guard let s3Buckets else { throw ServerError(.badRequest, "this server has no S3 configuration") }
            guard let url = URL(string: source), let (bucket, _) = S3DataLoader.split(url) else {
                throw ServerError(.badRequest, "src must be s3://BUCKET/KEY")
            }
            guard s3Buckets.contains(bucket) else {
                throw ServerError(.hostNotAllowed, "bucket \(bucket.prefix(64)) is not allowed (see --allow-bucket)")
            }
            return .remote(url)
        }
        if lower.hasPrefix("http://") || lower.hasPrefix("https://") {
            guard let url = URL(string: source), url.host != nil else {
                throw ServerError(.badRequest, "src is not a valid URL")
            }
            try remote.checkURL(url)
            return .remote(url)
        }
        if containsScheme(source) {
            throw ServerError(.badRequest, "src must be a path under the root or an http(s) URL")
        }
        guard let root else { throw ServerError(.notFound, "this server has no --root; only remote sources") }
        let path: String
        var st = stat()
        if let cache {
            (path, st) = try cache.resolve(source, in: root)
        } else {
            path = try root.resolve(source)
            guard stat(path, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else {
                throw ServerError(.notFound, "\(source) does not exist")
            }
        }
        let identity = "f:\(st.st_dev):\(st.st_ino):\(st.st_size):\(st.st_mtim.tv_sec).\(st.st_mtim.tv_nsec)"
        return .file(path: path, identity: identity, size: Int(st.st_size), modified: Int(st.st_mtim.tv_sec))
    }

    /// Whether `s` contains `://`, by a plain byte scan (`String.contains` goes through Foundation and
    /// `firstRange(of:)` through generic string processing — both measurable on the hit path).
    private static func containsScheme(_ s: String) -> Bool {
        var colon = 0
        for b in s.utf8 {
            if b == UInt8(ascii: ":") {
                colon = 1
            } else if b == UInt8(ascii: "/") && colon > 0 {
                colon += 1
                if colon == 3 { return true }
            } else {
                colon = 0
            }
        }
        return false
    }
}
