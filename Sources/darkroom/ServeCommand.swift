import ArgumentParser
import DarkroomImage
import DarkroomServer
import DarkroomSupport
import DarkroomWorkers
import Foundation
import Logging
import Metrics
import Prometheus

/// `darkroom serve`: the thumbnail server (see ``ThumbnailServer``).
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serve thumbnails over HTTP: /v1/thumb, /v1/info, /health, /metrics and a gallery at /.",
        discussion: """
            Sources are paths under --root or http(s) URLs on hosts named by --allow-host (never loopback, private, \
            link-local or multicast addresses, checked after DNS and on every redirect). With --key (or the \
            DARKROOM_KEY environment variable, which keeps the secret out of `ps`), /v1/* requests must carry \
            sig = HMAC-SHA256 of the canonical path and query; `darkroom sign` makes such URLs. Stops gracefully \
            on SIGTERM or SIGINT.
            """)

    @Option(help: "Interface to bind.") var host = "127.0.0.1"
    @Option(help: "Port to bind (0 picks a free one).") var port = 8080
    @Option(help: "Folder of images: src paths resolve here and the gallery lists it.") var root: String?
    @Option(help: "Folder for the disk caches (encoded thumbnails, remote originals); default: memory only.")
    var cacheDir: String?
    @Option(name: .customLong("allow-host"), help: "A host remote sources may come from (repeatable).")
    var allowHosts: [String] = []
    @Option(help: "Signing secret; every /v1/* request then needs a valid sig. Prefer DARKROOM_KEY.") var key: String?
    @Option(help: "Most renders at once (default: active cores).") var maxRenders: Int?
    @Option(help: "Most renders waiting for a slot before 429 (default: 4 × max-renders).") var maxQueue: Int?
    @Option(help: "Seconds a request may take, queueing included.") var requestTimeout: Double = 30
    @Option(help: "Seconds a connection may wait for its next complete request head (idle or slow) before closing.")
    var idleTimeout: Double = 60
    @Option(help: "Most client connections open at once (lowered to fit the descriptor limit).")
    var maxConnections = 4096
    @Option(help: "Most connections from one client address; 0 for none (behind a reverse proxy).")
    var maxConnectionsPerClient = 128
    @Option(help: "Cache-Control max-age of thumbnails, in seconds.") var maxAge = 86_400
    @Option(help: "Working memory the renders running at once may hold together, in MiB.") var renderMemoryMb = 256
    @Option(help: "Memory for encoded thumbnails, in MiB.") var memoryCacheMb = 64
    @Option(help: "Disk for each disk cache (thumbnails; remote originals), in MiB.") var diskCacheMb = 1024
    @Option(help: "Free space the disk caches leave on their file system, in MiB.") var minFreeDiskMb = 256
    @Option(help: "Memory for decoded bitmaps, in MiB.") var decodedCacheMb = 32
    @Option(help: "Largest source file or download, in MiB.") var maxSourceMb = 64
    @Option(help: "Largest source image, in megapixels.") var maxSourceMegapixels: Int?
    @Option(help: "Most frames kept in an animated thumbnail (later frames are dropped).") var maxAnimationFrames = 256
    @Option(help: "Log level: trace, debug, info, notice, warning, error, critical.") var logLevel = "info"
    @Flag(help: "JPEG colour exactly as libjpeg's 1/8 decode, also for thumbnails ~1/16 of the source (slower).")
    var exactChroma = false
    @Flag(help: "Answer format=auto with AVIF when Accept names image/avif (AVIF encodes cost several times WebP's).")
    var autoAvif = false
    @Flag(help: "Answer format=auto with JPEG XL when Accept names image/jxl (ahead of AVIF and WebP).")
    var autoJxl = false
    @Option(help: "AV1 encoder speed 0-10 for AVIF output.") var avifSpeed = 8
    @Flag(
        help: "Keep each source's colour profile (pixels unconverted, profile embedded) instead of converting to sRGB.")
    var keepColorProfile = false

    @Option(help: "imgproxy URLs (/imgproxy/…): the signing key in hex (default: DARKROOM_IMGPROXY_KEY).")
    var imgproxyKey: String?
    @Option(help: "imgproxy URLs: the salt in hex (default: DARKROOM_IMGPROXY_SALT).") var imgproxySalt: String?
    @Option(help: "imgproxy URLs: bytes of the HMAC kept in a signature (1-32).") var imgproxySignatureSize = 32
    @Option(
        name: .customLong("preset"),
        help: "A named option set in imgproxy syntax, NAME=rs:fill:300:300/q:80 (repeatable; 'default' applies to all)."
    )
    var presets: [String] = []
    @Option(help: "A file of presets, one NAME=OPTIONS per line (# comments).") var presetsFile: String?
    @Flag(help: "URLs may name presets only (imgproxy's IMGPROXY_ONLY_PRESETS).") var onlyPresets = false
    @Option(name: .customLong("allow-bucket"), help: "An S3 bucket src=s3://BUCKET/KEY may name (repeatable).")
    var allowBuckets: [String] = []
    @Option(
        help:
            "S3-compatible endpoint (MinIO, moto…; path-style URLs); default AWS for AWS_REGION. Credentials: AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN."
    )
    var s3Endpoint: String?
    @Option(help: "Default quality per output format when a request names none, e.g. jpeg=82,webp=80,avif=60.")
    var formatQuality: String?
    @Option(help: "An image sent with the error status when a thumbnail fails and the client asked for an image.")
    var fallbackImage: String?
    @Option(help: "thumbor URLs (/thumbor/…): the security key (default: DARKROOM_THUMBOR_KEY).") var thumborKey:
        String?
    @Flag(help: "thumbor URLs: serve /unsafe/ URLs even with a key.") var thumborAllowUnsafe = false
    @Flag(help: "thumbor URLs without format(): WebP to clients that accept it (thumbor's AUTO_WEBP).")
    var thumborAutoWebp = false
    @Flag(help: "imgproxy URLs without an extension: WebP to clients that accept it (IMGPROXY_AUTO_WEBP).")
    var imgproxyAutoWebp = false
    @Flag(help: "imgproxy URLs without an extension: AVIF to clients that accept it (IMGPROXY_AUTO_AVIF).")
    var imgproxyAutoAvif = false
    @Flag(
        help:
            "Decode in this process instead of confined workers (for benchmarks; a decoder's fault then ends the server)."
    )
    var inProcess = false
    @Option(help: "Decode workers (default: active cores; a worker decodes one image at a time).") var decodeWorkers:
        Int?
    @Option(help: "The decode worker program (default: darkroom-worker beside this one).") var decodeWorker: String?

    /// The imgproxy settings from the options and the environment.
    func imgproxySettings() throws -> ServerConfiguration.Imgproxy {
        var settings = ServerConfiguration.Imgproxy()
        let env = ProcessInfo.processInfo.environment
        func hex(_ text: String, _ name: String) throws -> [UInt8] {
            guard !text.isEmpty, let bytes = Hex.decode(text) else { throw ValidationError("\(name) must be hex") }
            return bytes
        }
        if let key = imgproxyKey ?? env["DARKROOM_IMGPROXY_KEY"], !key.isEmpty {
            settings.key = try hex(key, "--imgproxy-key")
            settings.salt =
                try (imgproxySalt ?? env["DARKROOM_IMGPROXY_SALT"]).map { try hex($0, "--imgproxy-salt") } ?? []
        }
        settings.signatureSize = imgproxySignatureSize
        var lines = presets
        if let presetsFile {
            lines += try String(contentsOfFile: presetsFile, encoding: .utf8).split(separator: "\n").map(String.init)
        }
        for line in lines.map({ $0.trimmingCharacters(in: .whitespaces) }) where !line.isEmpty && !line.hasPrefix("#") {
            guard let eq = line.firstIndex(of: "="), eq != line.startIndex else {
                throw ValidationError("a preset is NAME=OPTIONS, got '\(line)'")
            }
            settings.presets[String(line[..<eq])] = String(line[line.index(after: eq)...])
        }
        settings.onlyPresets = onlyPresets
        return settings
    }

    func validate() throws {
        guard (1...32).contains(imgproxySignatureSize) else {
            throw ValidationError("--imgproxy-signature-size must be 1...32")
        }
        guard (0...10).contains(avifSpeed) else { throw ValidationError("--avif-speed must be 0...10") }
        guard (0...65535).contains(port) else { throw ValidationError("--port must be 0...65535") }
        if let maxRenders, maxRenders < 1 { throw ValidationError("--max-renders must be ≥ 1") }
        if maxAnimationFrames < 1 { throw ValidationError("--max-animation-frames must be ≥ 1") }
        if let maxQueue, maxQueue < 0 { throw ValidationError("--max-queue must be ≥ 0") }
        guard maxConnections >= 1, maxConnectionsPerClient >= 0 else {
            throw ValidationError("--max-connections must be ≥ 1 and --max-connections-per-client ≥ 0")
        }
        guard requestTimeout > 0, idleTimeout > 0, maxAge >= 0, memoryCacheMb >= 1, renderMemoryMb >= 1,
            decodedCacheMb >= 1,
            diskCacheMb >= 1, minFreeDiskMb >= 0,
            maxSourceMb >= 1
        else {
            throw ValidationError("timeouts, ages and sizes must be positive")
        }
        guard Logger.Level(rawValue: logLevel) != nil else { throw ValidationError("unknown --log-level \(logLevel)") }
    }

    func run() async throws {
        let level = Logger.Level(rawValue: logLevel) ?? .info
        let logger = Logger(label: "darkroom.server") { ServerLogHandler(label: $0, level: level) }
        var configuration = ServerConfiguration()
        configuration.host = host
        configuration.port = port
        configuration.root = root
        configuration.cacheDirectory = cacheDir
        configuration.remote = RemotePolicy(allowedHosts: Set(allowHosts.map { $0.lowercased() }))
        configuration.signingKey =
            key ?? ProcessInfo.processInfo.environment["DARKROOM_KEY"].flatMap { $0.isEmpty ? nil : $0 }
        if let maxRenders { configuration.maxRenders = maxRenders }
        configuration.maxQueued = maxQueue ?? 4 * configuration.maxRenders
        configuration.requestTimeout = requestTimeout
        configuration.idleTimeout = idleTimeout
        configuration.maxConnections = maxConnections
        configuration.maxConnectionsPerClient = maxConnectionsPerClient
        configuration.cacheMaxAge = maxAge
        configuration.memoryCacheBytes = memoryCacheMb << 20
        configuration.diskCacheBytes = diskCacheMb << 20
        configuration.minFreeDiskBytes = minFreeDiskMb << 20
        configuration.renderMemoryBudget = renderMemoryMb << 20
        configuration.decodedCacheBytes = decodedCacheMb << 20
        configuration.exactChroma = exactChroma
        configuration.autoAVIF = autoAvif
        configuration.autoJXL = autoJxl
        configuration.avifSpeed = avifSpeed
        configuration.keepColorProfile = keepColorProfile
        configuration.limits.maxSourceBytes = maxSourceMb << 20
        configuration.limits.decode.maxInputBytes = maxSourceMb << 20
        if let maxSourceMegapixels { configuration.limits.decode.maxSourcePixels = maxSourceMegapixels * 1_000_000 }
        configuration.limits.maxAnimationFrames = maxAnimationFrames
        if inProcess {
            configuration.decodeWorkers = nil
        } else {
            if let decodeWorkers { configuration.decodeWorkers?.workers = max(1, decodeWorkers) }
            if let decodeWorker { configuration.decodeWorkers?.executable = decodeWorker }
        }
        configuration.logger = logger
        configuration.imgproxy = try imgproxySettings()
        configuration.thumbor.key =
            thumborKey ?? ProcessInfo.processInfo.environment["DARKROOM_THUMBOR_KEY"].flatMap { $0.isEmpty ? nil : $0 }
        configuration.thumbor.allowUnsafe = thumborAllowUnsafe
        configuration.thumbor.autoWebP = thumborAutoWebp
        configuration.imgproxy.autoWebP = imgproxyAutoWebp
        configuration.imgproxy.autoAVIF = imgproxyAutoAvif
        if imgproxyAutoAvif { configuration.autoAVIF = true }
        if !allowBuckets.isEmpty {
            let env = ProcessInfo.processInfo.environment
            guard let id = env["AWS_ACCESS_KEY_ID"], let secret = env["AWS_SECRET_ACCESS_KEY"], !id.isEmpty else {
                throw ValidationError("--allow-bucket needs AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY")
            }
            let region = env["AWS_REGION"] ?? env["AWS_DEFAULT_REGION"] ?? "us-east-1"
            let endpoint = s3Endpoint ?? "https://s3.\(region).amazonaws.com"
            guard let url = URL(string: endpoint), url.scheme == "http" || url.scheme == "https", url.host != nil else {
                throw ValidationError("--s3-endpoint must be an http(s) URL, got \(endpoint)")
            }
            configuration.s3 = ServerConfiguration.S3(
                endpoint: url, region: region, accessKeyID: id, secretAccessKey: secret,
                sessionToken: env["AWS_SESSION_TOKEN"].flatMap { $0.isEmpty ? nil : $0 },
                allowedBuckets: Set(allowBuckets),
                pathStyle: s3Endpoint != nil)
        }
        if let formatQuality {
            for pair in formatQuality.split(separator: ",") {
                let parts = pair.split(separator: "=").map { $0.trimmingCharacters(in: .whitespaces) }
                guard parts.count == 2, let format = ImageFileFormat(rawValue: parts[0] == "jpg" ? "jpeg" : parts[0]),
                    let q = Int(parts[1]), (1...100).contains(q)
                else { throw ValidationError("--format-quality takes FORMAT=Q pairs (1-100), got '\(pair)'") }
                configuration.limits.formatQuality[format] = q
            }
        }
        if let fallbackImage {
            let bytes = try FileBytes.read(fallbackImage)
            guard (try? ImageProber.probe(bytes)) != nil else {
                throw ValidationError("--fallback-image \(fallbackImage) is not an image Darkroom can read")
            }
            configuration.fallbackImage = bytes
        }

        let registry = PrometheusCollectorRegistry()
        MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: registry))
        let server: ThumbnailServer
        do {
            server = try ThumbnailServer(configuration: configuration, registry: registry)
        } catch {
            throw ValidationError(error.description)
        }
        let perClient = maxConnectionsPerClient == 0 ? "no limit" : String(maxConnectionsPerClient)
        let budget =
            (configuration.memoryCacheBytes + configuration.decodedCacheBytes + configuration.renderMemoryBudget) >> 20
        let summary =
            "  \(configuration.maxRenders) renders at once (\(renderMemoryMb) MiB between them), "
            + "\(configuration.maxQueued) waiting; memory budget \(budget) MiB + base; "
            + "\(server.connectionLimits.maxConnections) connections (\(perClient) per client); "
            + "signing \(configuration.signingKey == nil ? "off" : "on"); "
            + "remote hosts: \(allowHosts.isEmpty ? "none" : allowHosts.joined(separator: ", ")). Ctrl-C stops."
        let shown = host == "0.0.0.0" || host == "::" ? "127.0.0.1" : host
        let folder = root ?? "(no --root: remote sources only)"
        try await server.run { port in
            // Unbuffered, so a script reading a pipe sees the URL at once.
            let url = "http://\(shown.contains(":") ? "[\(shown)]" : shown):\(port)/"
            FileHandle.standardOutput.write(Data("Darkroom is serving \(folder) at \(url)\n\(summary)\n".utf8))
        }
    }
}

/// `darkroom sign --key K '/v1/thumb?src=…&w=…'`: prints the URL with its `sig`.
struct SignCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sign", abstract: "Add sig (HMAC-SHA256) to a /v1/* URL for a server started with --key.")

    @Option(help: "The server's secret (default: DARKROOM_KEY).") var key: String?
    @Argument(help: "A path and query, e.g. '/v1/thumb?src=a.jpg&w=256'.") var url: String

    func run() throws {
        guard let secret = key ?? ProcessInfo.processInfo.environment["DARKROOM_KEY"], !secret.isEmpty else {
            throw ValidationError("give --key or set DARKROOM_KEY")
        }
        do {
            print(try RequestSigner(key: secret).signed(pathAndQuery: url))
        } catch {
            throw ValidationError(error.description)
        }
    }
}
