import DarkroomImage
import DarkroomTestSupport
import Foundation
import NIOHTTP1

/// The safety tests' origin: a ``LoopbackHTTPServer`` with the routes they need. Counts every request it answers
/// and every connection it accepts.
///
/// Routes:
/// - `/img`: 64 bytes `0...63` as `image/jpeg`.
/// - `/to?url=U`: 302 with `Location: U`.
/// - `/loop/a` ↔ `/loop/b`: a redirect loop (relative `Location`s).
/// - `/bare-redirect`: 302 without `Location`.
/// - `/photo?delay=MS`: a real 400×300 JPEG, after an optional delay (slow origins for overload and timeouts).
enum LoopbackServer {
    /// The body `/img` answers with.
    static let image: [UInt8] = Array(0..<64)
    /// The body `/photo` answers with: a 400×300 JPEG.
    static let photo: [UInt8] = try! ImageEncoder.encode(TestBitmaps.gradient(400, 300, alpha: false), as: .jpeg)

    static func start() async throws -> LoopbackHTTPServer {
        try await LoopbackHTTPServer.start { request, response in
            switch request.path {
            case "/img":
                try await response.send(.ok, [("Content-Type", "image/jpeg")], image)
            case "/to":
                try await response.send(.found, [("Location", request.query["url"] ?? "/img")])
            case "/loop/a":
                try await response.send(.found, [("Location", "/loop/b")])
            case "/loop/b":
                try await response.send(.found, [("Location", "a")])
            case "/bare-redirect":
                try await response.send(.found)
            case "/photo":
                if let ms = request.query["delay"].flatMap(Int.init) { try await Task.sleep(for: .milliseconds(ms)) }
                try await response.send(.ok, [("Content-Type", "image/jpeg")], photo)
            default:
                try await response.send(.notFound, [], Array("not found".utf8))
            }
            return true
        }
    }
}
