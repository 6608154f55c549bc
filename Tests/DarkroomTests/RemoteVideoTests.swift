import DarkroomImage
import DarkroomSupport
import DarkroomTestSupport
import DarkroomVideo
import Foundation
import NIOHTTP1
import Testing

@testable import Darkroom

/// A remote video read by HTTP ranges where it lies: the pipeline fetches its first block, the decoder the ranges its
/// header and poster frame need, never the whole file.
@Suite("Remote videos by ranges", .timeLimit(.minutes(5)))
struct RemoteVideoTests {
    /// What the origin saw: each request's `Range` (nil without one) and the body bytes it sent.
    struct Seen: Sendable {
        var ranges: [String?] = []
        var bytes = 0
    }

    /// An origin serving `body` at `/ranges/clip.mp4` (honouring `Range` with 206 and `Content-Range`) and at
    /// `/whole/clip.mp4` (ignoring it: 200 and the whole file), counting what it sends.
    static func origin(_ body: [UInt8], seen: Locked<Seen>) async throws -> LoopbackHTTPServer {
        try await LoopbackHTTPServer.start { request, response in
            let range = request.head.headers["Range"].first
            seen.withLock { $0.ranges.append(range) }
            guard request.path.hasPrefix("/ranges/"), let range, range.hasPrefix("bytes=") else {
                seen.withLock { $0.bytes += body.count }
                try await response.send(.ok, [("Content-Type", "video/mp4")], body)
                return true
            }
            let bounds = range.dropFirst(6).split(separator: "-", omittingEmptySubsequences: false).map { Int($0) }
            let lower = bounds.first.flatMap { $0 } ?? 0
            let upper = min(body.count - 1, bounds.count > 1 ? bounds[1] ?? body.count - 1 : body.count - 1)
            guard lower <= upper else {
                try await response.send(.init(statusCode: 416), [("Content-Range", "bytes */\(body.count)")])
                return true
            }
            seen.withLock { $0.bytes += upper - lower + 1 }
            try await response.send(
                .partialContent, [("Content-Range", "bytes \(lower)-\(upper)/\(body.count)")],
                Array(body[lower...upper]))
            return true
        }
    }

    /// A 20 s 640 × 360 H.264 clip (a keyframe a second, its index at the end, as ffmpeg writes by default), made
    /// once for the suite (the file removed once read).
    static let clip: Result<[UInt8], any Error> = Result {
        let directory = try TemporaryDirectory("remote-video")
        defer { directory.remove() }
        let path = directory.file("clip.mp4")
        try FFmpegReference.writeLongClip(to: path)
        return try FileBytes.read(path, limit: 1 << 30)
    }

    static func pipeline() -> ImagePipeline {
        var loader = HTTPDataLoader.Configuration()
        loader.retryBaseDelay = 0.01
        var config = ImagePipeline.Configuration(dataLoader: HTTPDataLoader(configuration: loader))
        config.decoder = VideoDecoder.imageDecoder
        return ImagePipeline(configuration: config)
    }

    @Test func aRemoteVideosPosterFrameIsReadByRangesNotWhole() async throws {
        // Given a 20 s clip on an origin that serves ranges, and the poster frame the library decodes from its bytes
        let body = try Self.clip.get()
        let seen = Locked(Seen())
        let origin = try await Self.origin(body, seen: seen)
        let options = DecodeOptions(size: .fit(width: 256, height: 256), pixelFormat: .exactly(.bgra8Premultiplied))
        let local = try VideoDecoder.imageDecoder.decode(body, options: options).bitmap
        // When the pipeline loads it by URL at the same size
        let request = ImageRequest(
            source: .url(origin.url("/ranges/clip.mp4")), size: .fit(width: 256, height: 256),
            pixelFormat: .exactly(.bgra8Premultiplied))
        let image = try await Self.pipeline().image(for: request)
        // Then the frame is the one the bytes give, pixel for pixel
        let bitmap = try #require(image.container?.bitmap)
        #expect(bitmap.width == local.width && bitmap.height == local.height)
        #expect(PixelCompare.psnr(bitmap, local) >= 99, "\(PixelCompare.psnr(bitmap, local)) dB from the bytes'")
        // And every request asked for a range, and what they sent is a small part of the file
        let sent = seen.withLock { $0 }
        #expect(sent.ranges.allSatisfy { $0 != nil }, "\(sent.ranges)")
        #expect(sent.bytes * 4 < body.count, "\(sent.bytes) of \(body.count) bytes sent in \(sent.ranges.count) ranges")
        // And its header (a probe's) is read by ranges too: the clip's facts, for a small part of the file
        seen.withLock { $0 = Seen() }
        let probe = try await Self.pipeline().probe(request)
        #expect(probe.format == .video && probe.width == 640 && probe.height == 360)
        #expect(abs((probe.video?.duration ?? 0) - 20) < 0.1)
        let probed = seen.withLock { $0 }
        #expect(probed.ranges.allSatisfy { $0 != nil } && probed.bytes * 4 < body.count, "\(probed.bytes) bytes")
        // And the data of the same URL is the whole file, read range by range
        var dataRequest = request
        dataRequest.options.insert(.returnData)
        #expect(try await Self.pipeline().image(for: dataRequest).data == body)
        await origin.stop()
    }

    @Test func anOriginThatIgnoresRangesSendsTheWholeFileAndTheFrameIsTheSame() async throws {
        // Given the clip on an origin that answers every request with the whole file
        let body = try Self.clip.get()
        let seen = Locked(Seen())
        let origin = try await Self.origin(body, seen: seen)
        let options = DecodeOptions(size: .fit(width: 128, height: 128), pixelFormat: .exactly(.bgra8Premultiplied))
        let local = try VideoDecoder.imageDecoder.decode(body, options: options).bitmap
        // When the pipeline loads it
        let image = try await Self.pipeline().image(
            for: ImageRequest(
                source: .url(origin.url("/whole/clip.mp4")), size: .fit(width: 128, height: 128),
                pixelFormat: .exactly(.bgra8Premultiplied)))
        // Then one request brought the whole file and the frame is the bytes'
        let bitmap = try #require(image.container?.bitmap)
        #expect(PixelCompare.psnr(bitmap, local) >= 99)
        #expect(seen.withLock { $0.ranges.count } == 1)
        await origin.stop()
    }

    @Test func aRangeReaderHoldsToItsByteBudgetAndAnOriginThatLiesIsATypedError() async throws {
        // Given the clip on a ranges origin, and a pipeline that may fetch only 300 KB in all
        let body = try Self.clip.get()
        let seen = Locked(Seen())
        let origin = try await Self.origin(body, seen: seen)
        var config = ImagePipeline.Configuration(dataLoader: HTTPDataLoader())
        config.decoder = VideoDecoder.imageDecoder
        config.maxResponseBytes = 300_000
        let request = ImageRequest(source: .url(origin.url("/ranges/clip.mp4")), size: .fit(width: 64, height: 64))
        // When its poster frame is asked for
        let error = await #expect(throws: DarkroomError.self) {
            _ = try await ImagePipeline(configuration: config).image(for: request)
        }
        // Then the decode stops at the budget with a typed error, having sent no more than it
        #expect("\(String(describing: error))".contains("maxResponseBytes"), "\(String(describing: error))")
        #expect(seen.withLock { $0.bytes } <= 300_000)
        await origin.stop()
        // And a reader over an origin that is gone fails its read with a typed error, not a hang
        let ranges = RemoteRanges(
            url: origin.url("/ranges/clip.mp4"), size: Int64(body.count), first: Array(body.prefix(1024)),
            loader: HTTPDataLoader(), blockBytes: 1024, maxBytes: 1 << 20, timeout: 5,
            counters: PipelineCounters(prefix: "test"))
        #expect(throws: DarkroomImageError.self) { _ = try ranges.read(at: 4096, count: 100) }
    }
}
