import DarkroomServer

extension FuzzTarget {
    /// The server's request parsers: the input (as UTF-8, invalid sequences replaced) is parsed as a `/v1/thumb`
    /// query and validated, as an imgproxy path and a thumbor path (with and without keys), and checked as a signed
    /// query. Only typed errors may come out.
    package static let url = FuzzTarget(
        name: "url", summary: "QueryString, ThumbnailParameters, imgproxy and thumbor URLs, presets, signatures"
    ) { bytes in
        let text = String(decoding: bytes, as: UTF8.self)
        let limits = ServerConfiguration.Limits()
        if let query = try? QueryString.parse(text) {
            if let parameters = try? ThumbnailParameters(query: query, limits: limits) { _ = parameters.renderKey }
            _ = try? ServerFuzzing.signer.verify(path: "/v1/thumb", query: query)
            if let expanded = try? ImgproxyURL.expandingPresets(query, configuration: ServerFuzzing.imgproxyWithPresets)
            {
                _ = try? ThumbnailParameters(query: expanded, limits: limits)
            }
        }
        for configuration in [ServerFuzzing.imgproxyOpen, ServerFuzzing.imgproxyWithPresets] {
            if let url = try? ImgproxyURL(path: text, configuration: configuration) {
                _ = try? ThumbnailParameters(query: url.query, limits: limits)
            }
        }
        for configuration in [ServerFuzzing.thumborOpen, ServerFuzzing.thumborSigned] {
            if let url = try? ThumborURL(path: text, configuration: configuration) {
                _ = try? ThumbnailParameters(query: url.query, limits: limits)
            }
        }
    }
}

/// The server configurations the URL target parses under.
enum ServerFuzzing {
    static let signer = RequestSigner(key: "fuzz-key")
    static let imgproxyOpen = ServerConfiguration.Imgproxy()
    static let imgproxyWithPresets: ServerConfiguration.Imgproxy = {
        var c = ServerConfiguration.Imgproxy()
        c.key = Array("secret".utf8)
        c.salt = Array("hello".utf8)
        c.signatureSize = 8
        c.presets = ["default": "q:80", "thumb": "rs:fill:64:64/g:sm", "small": "w:32"]
        return c
    }()
    static let thumborOpen: ServerConfiguration.Thumbor = {
        var c = ServerConfiguration.Thumbor()
        c.allowUnsafe = true
        return c
    }()
    static let thumborSigned: ServerConfiguration.Thumbor = {
        var c = ServerConfiguration.Thumbor()
        c.key = "MY_SECURE_KEY"
        return c
    }()
}
