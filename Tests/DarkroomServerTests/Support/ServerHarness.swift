import DarkroomImage
import DarkroomTestSupport
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Metrics
import NIOCore
import Prometheus
import Testing

@testable import DarkroomServer

/// Builds servers over temporary roots and caches, and runs requests against them.
enum ServerHarness {
    /// One Prometheus registry for the whole test process (swift-metrics can be bootstrapped once).
    static let registry: PrometheusCollectorRegistry = {
        let registry = PrometheusCollectorRegistry()
        MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: registry))
        return registry
    }()

    /// The shared sample photos (``SamplePhotos/root``).
    static var photos: String { SamplePhotos.root }

    /// The first 12 MP photo, relative to ``photos``.
    static let twelveMP: String = {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: photos + "/jpeg-12mp")) ?? []
        return "jpeg-12mp/" + (names.filter { $0.hasSuffix(".jpg") }.sorted().first ?? "missing.jpg")
    }()

    /// A fresh temporary directory.
    static func temporaryDirectory(_ name: String = "server") -> String {
        try! TemporaryDirectory.make(name)
    }

    /// A root with small generated images: `photo.jpg` (640×480 opaque), `alpha.png` (300×200 with soft alpha),
    /// `gray.png` (gray 200×200), `sub/inner.jpg`, and `broken.jpg` (text).
    static func makeRoot() -> String {
        let root = temporaryDirectory("root")
        try! FileManager.default.createDirectory(atPath: root + "/sub", withIntermediateDirectories: true)
        write(root + "/photo.jpg", try! ImageEncoder.encode(gradient(640, 480, alpha: false), as: .jpeg))
        write(root + "/alpha.png", try! ImageEncoder.encode(gradient(300, 200, alpha: true), as: .png))
        write(root + "/sub/inner.jpg", try! ImageEncoder.encode(gradient(320, 240, alpha: false), as: .jpeg))
        write(root + "/broken.jpg", Array("this is not a JPEG".utf8))
        return root
    }

    static func write(_ path: String, _ bytes: [UInt8]) {
        _ = FileManager.default.createFile(atPath: path, contents: Data(bytes))
    }

    /// A BGRA gradient (``TestBitmaps/gradient(_:_:alpha:)``).
    static func gradient(_ width: Int, _ height: Int, alpha: Bool) -> Bitmap {
        try! TestBitmaps.gradient(width, height, alpha: alpha)
    }

    /// A configuration over `root` with memory-only caches unless `cacheDirectory` is given.
    static func configuration(root: String?, cacheDirectory: String? = nil) -> ServerConfiguration {
        var c = ServerConfiguration()
        c.root = root
        c.cacheDirectory = cacheDirectory
        c.port = 0
        c.maxRenders = 2
        c.maxQueued = 8
        // Generous: debug builds render animations slowly, and the suites share 2 cores; tests of timeouts set
        // their own
        c.requestTimeout = 60
        return c
    }

    /// Runs `body`, then shuts the server down before returning, so its caches are closed when this returns
    /// (another server may then open the same cache directory).
    private static func run<T: Sendable>(
        _ server: ThumbnailServer, _ setup: TestingSetup,
        _ body: @Sendable (ThumbnailServer, any TestClientProtocol) async throws -> T
    ) async throws -> T {
        do {
            let result = try await server.makeApplication().test(setup) { client in try await body(server, client) }
            await server.shutdown()
            return result
        } catch {
            await server.shutdown()
            throw error
        }
    }

    static func makeServer(_ configuration: ServerConfiguration, resolver: (any HostResolving)?) throws
        -> ThumbnailServer
    {
        if let resolver {
            return try ThumbnailServer(configuration: configuration, registry: registry, resolver: resolver)
        }
        return try ThumbnailServer(configuration: configuration, registry: registry)
    }

    /// Runs `body` with a router-level test client (no sockets) for a server built from `configuration`.
    static func withServer<T: Sendable>(
        _ configuration: ServerConfiguration, resolver: (any HostResolving)? = nil,
        _ body: @Sendable (ThumbnailServer, any TestClientProtocol) async throws -> T
    ) async throws -> T {
        try await run(try makeServer(configuration, resolver: resolver), .router, body)
    }

    /// Runs `body` against a live server on a loopback port with an AsyncHTTPClient client (concurrent requests).
    static func withLiveServer<T: Sendable>(
        _ configuration: ServerConfiguration, resolver: (any HostResolving)? = nil,
        _ body: @Sendable (ThumbnailServer, any TestClientProtocol) async throws -> T
    ) async throws -> T {
        try await run(try makeServer(configuration, resolver: resolver), .ahc(.http), body)
    }
}

extension TestResponse {
    /// The body's bytes.
    var bytes: [UInt8] { Array(body.readableBytesView) }

    /// The JSON error code, when the body is `{"error": {"code": …}}`.
    var errorCode: String? {
        struct Body: Decodable {
            struct E: Decodable {
                let code: String
                let message: String
            }
            let error: E
        }
        return (try? JSONDecoder().decode(Body.self, from: Data(bytes)))?.error.code
    }

    /// The image's probe, when the body is an image.
    var probe: ImageProbe? {
        bytes.withUnsafeBytes { try? ImageProber.probe($0) }
    }
}

extension String {
    /// Percent-encodes a query value.
    var queryEncoded: String {
        addingPercentEncoding(
            withAllowedCharacters: CharacterSet(
                charactersIn:
                    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")) ?? ""
    }
}

/// The code of the `ServerError` `body` throws, or `nil` if it returns.
func code(_ body: () throws -> Void) -> ServerError.Code? {
    do {
        try body()
        return nil
    } catch let error as ServerError {
        return error.code
    } catch {
        Issue.record("expected a ServerError, got \(error)")
        return nil
    }
}
