import DarkroomCache
import DarkroomImage
import DarkroomSupport
import DarkroomTestSupport
import Foundation
import Testing

@testable import Darkroom

@Suite("Sharing: identical requests share one task; sizes share the fetch", .timeLimit(.minutes(5)))
struct SharingTests {
    @Test("50 identical concurrent requests → 1 network fetch and 1 decode")
    func fiftyIdentical() async throws {
        // Given a server whose image takes 200 ms to start, and a pipeline without a memory cache
        let server = try await TestServer.start()
        server.register("a", TestImages.jpeg())
        let pipeline = makePipeline(memory: false)
        server.hold("a")
        let request = ImageRequest(url: server.url("/img/a?hold=a"), size: .maxPixelSize(32))

        // When 50 callers ask for it at once (the server answers once all 50 have asked)
        let responses = try await withThrowingTaskGroup(of: ImageResponse.self) { group in
            for _ in 0..<50 { group.addTask { try await pipeline.image(for: request) } }
            #expect(await eventually { pipeline.statistics.requests == 50 })
            server.release("a")
            return try await group.reduce(into: []) { $0.append($1) }
        }

        // Then all 50 get the image, from one fetch and one decode
        #expect(responses.count == 50)
        #expect(responses.allSatisfy { $0.bitmap?.width == 32 && $0.origin == .network })
        #expect(server.requests("/img/a") == 1)
        let stats = pipeline.statistics
        #expect(stats.networkFetches == 1)
        #expect(stats.decodes == 1)
        #expect(stats.sharedRequests == 49)
        #expect(stats.requests == 50)
        await server.stop()
    }

    @Test("3 sizes of one URL → 1 fetch, 3 decodes; 2 processors at one size → 1 decode")
    func sizesShareFetch() async throws {
        // Given a slow image
        let server = try await TestServer.start()
        server.register("a", TestImages.jpeg(width: 200, height: 100))
        let pipeline = makePipeline(memory: false)
        server.hold("a")
        let url = server.url("/img/a?hold=a")

        // When it is requested at three sizes, and twice more at one size with different processors
        let requests = [
            ImageRequest(url: url, size: .maxPixelSize(100)),
            ImageRequest(url: url, size: .maxPixelSize(50)),
            ImageRequest(url: url, size: .fill(width: 20, height: 20)),
            ImageRequest(
                url: url, size: .maxPixelSize(100),
                processors: [ImageProcessors.Crop(x: 0, y: 0, width: 10, height: 10)]),
            ImageRequest(url: url, size: .maxPixelSize(100), processors: [ImageProcessors.RoundedCorners(radius: 8)]),
        ]
        let sizes = try await withThrowingTaskGroup(of: (Int, Int, Int).self) { group in
            for (i, r) in requests.enumerated() {
                group.addTask {
                    let b = try await pipeline.image(for: r).bitmap!
                    return (i, b.width, b.height)
                }
            }
            #expect(await eventually { pipeline.statistics.requests == 5 })
            server.release("a")
            return try await group.reduce(into: [Int: (Int, Int)]()) { $0[$1.0] = ($1.1, $1.2) }
        }

        // Then one fetch served all, the three sizes decoded once each, the processed ones shared size 100's decode
        #expect(sizes[0]! == (100, 50))
        #expect(sizes[1]! == (50, 25))
        #expect(sizes[2]! == (20, 20))
        #expect(sizes[3]! == (10, 10))
        #expect(sizes[4]! == (100, 50))
        #expect(server.requests("/img/a") == 1)
        #expect(pipeline.statistics.networkFetches == 1)
        #expect(pipeline.statistics.decodes == 3)
        #expect(pipeline.statistics.processings == 2)
        await server.stop()
    }

    @Test("With sharing off, the same 10 requests fetch 10 times (the control for the tests above)")
    func sharingOffControl() async throws {
        let server = try await TestServer.start()
        server.register("a", TestImages.jpeg())
        var config = ImagePipeline.Configuration(dataLoader: HTTPDataLoader())
        config.isSharingEnabled = false
        config.perHostLimit = 10
        let pipeline = ImagePipeline(configuration: config)
        server.hold("a")
        let request = ImageRequest(url: server.url("/img/a?hold=a"))
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<10 { group.addTask { _ = try await pipeline.image(for: request) } }
            #expect(await eventually { server.requests("/img/a") == 10 })
            server.release("a")
            try await group.waitForAll()
        }
        #expect(server.requests("/img/a") == 10)
        #expect(pipeline.statistics.decodes == 10)
        await server.stop()
    }

    @Test("A memory-cache hit is answered synchronously: the completion runs before loadImage returns")
    func memoryHitIsSynchronous() async throws {
        let server = try await TestServer.start()
        server.register("a", TestImages.jpeg())
        let pipeline = makePipeline()
        let request = ImageRequest(url: server.url("/img/a"), size: .maxPixelSize(16))
        _ = try await pipeline.image(for: request)

        let delivered = Locked<ImageResponse.Origin?>(nil)
        let task = pipeline.loadImage(with: request) { result in delivered.withLock { $0 = try? result.get().origin } }

        #expect(delivered.withLock { $0 } == .memory)
        #expect(task.isDone)
        #expect(pipeline.cachedImage(for: request)?.bitmap.width == 16)
        #expect(server.requests("/img/a") == 1)
        await server.stop()
    }
}
