import DarkroomCache
import DarkroomImage
import DarkroomSupport
import DarkroomTestSupport
import Foundation
import Synchronization
import Testing

@testable import Darkroom

/// A reusable "cell": records what it was bound to and flags any display of an image for an older binding.
final class TestCell: ImageTarget {
    let darkroom = ImageTargetState()
    private struct State {
        /// The binding being made (set before `setImage`, cleared after), and the last one made.
        var pending: String?
        var bound: String?
        var shown: String?
        var displays = 0
        var stale = 0
        var placeholders = 0
        var failures = 0
    }
    private let state = Locked(State())

    /// Binds through the pipeline. While `setImage` runs, both the previous binding (until the pipeline's rebind)
    /// and the new one (a memory hit displays synchronously) may legitimately display; after it returns, only the
    /// new one may.
    func bind(_ request: ImageRequest, on pipeline: ImagePipeline, failureImage: Bitmap? = nil) {
        state.withLock { $0.pending = request.source.key }
        pipeline.setImage(with: request, on: self, failureImage: failureImage)
        state.withLock { s in
            s.bound = s.pending
            s.pending = nil
        }
    }

    func display(_ content: ImageTargetContent) {
        state.withLock { s in
            switch content {
            case .placeholder: s.placeholders += 1
            case .image(let response):
                s.displays += 1
                s.shown = response.request.source.key
                let key = response.request.source.key
                if key != s.bound && key != s.pending { s.stale += 1 }
            case .failure: s.failures += 1
            }
        }
    }

    var stale: Int { state.withLock { $0.stale } }
    var displays: Int { state.withLock { $0.displays } }
    var failures: Int { state.withLock { $0.failures } }
    var placeholders: Int { state.withLock { $0.placeholders } }
    var settled: Bool { state.withLock { $0.bound == $0.shown } }
}

@Suite("Targets: generation counter, placeholders, failure images", .timeLimit(.minutes(5)))
struct TargetTests {
    @Test("10,000 rapid re-bindings of 20 reused targets: zero stale deliveries, every target ends on its last binding")
    func rebindStress() async throws {
        // Given 20 cells and 200 distinct images whose decodes finish in random order on 2 threads
        let pipeline = makePipeline(memory: true, processingLimit: 2)
        let images = (0..<200).map { TestImages.png(width: 8 + $0 % 16, height: 8, seed: $0) }
        let cells = (0..<20).map { _ in TestCell() }
        // When 4 threads (each owning 5 cells, as a UI thread owns its cells) rebind random cells to random
        // images 10,000 times in all, while results land from the decode threads
        await onThreads(4) { worker in
            var rng = SystemRandomNumberGenerator()
            for _ in 0..<2_500 {
                let cell = cells[worker * 5 + Int.random(in: 0..<5, using: &rng)]
                let i = Int.random(in: 0..<images.count, using: &rng)
                cell.bind(ImageRequest(source: .data(id: "i\(i)", bytes: images[i])), on: pipeline)
            }
        }
        // Then every cell settles on its last binding and no cell ever showed an image for an older one
        #expect(await eventually(20) { cells.allSatisfy(\.settled) })
        #expect(cells.map(\.stale).reduce(0, +) == 0)
        #expect(cells.map(\.displays).reduce(0, +) > 0)
        #expect(pipeline.statistics.requests == 10_000)
    }

    @Test("The sentinel alone: a result carrying an old generation is refused, however late it arrives")
    func generationSentinel() {
        let state = ImageTargetState()
        let (first, _) = state.rebind()
        let (second, _) = state.rebind()
        var shown: [UInt64] = []
        #expect(state.displayIfCurrent(first) { shown.append(first) } == false)
        #expect(state.displayIfCurrent(second) { shown.append(second) } == true)
        state.cancel()
        #expect(state.displayIfCurrent(second) { shown.append(second) } == false)
        #expect(shown == [second])
    }

    @Test("A late result for an earlier binding is dropped even when it arrives after the newer one")
    func lateResultDropped() async throws {
        let server = try await TestServer.start()
        server.register("old", TestImages.jpeg(seed: 1))
        server.register("new", TestImages.jpeg(seed: 2))
        let pipeline = makePipeline()
        let cell = TestCell()
        // The old request is slow; the cell is reused for a fast one before it lands.
        let oldRequest = ImageRequest(url: server.url("/img/old?delay=150"))
        let keepAlive = Task { try await pipeline.image(for: oldRequest) }  // keeps the old transfer running
        cell.bind(oldRequest, on: pipeline)
        cell.bind(ImageRequest(url: server.url("/img/new")), on: pipeline)
        _ = try await keepAlive.value
        #expect(await eventually { cell.settled })
        #expect(cell.displays == 1)
        #expect(cell.stale == 0)
        await server.stop()
    }

    @Test("Placeholder first, failure image on failure; a memory hit shows no placeholder")
    func placeholderAndFailure() async throws {
        let server = try await TestServer.start()
        server.register("a", TestImages.jpeg())
        let pipeline = makePipeline()
        let cell = TestCell()
        cell.bind(
            ImageRequest(url: server.url("/status/404")), on: pipeline,
            failureImage: TestImages.bitmap(width: 2, height: 2, seed: 0))
        #expect(await eventually { cell.failures == 1 })
        #expect(cell.placeholders == 1)

        let good = ImageRequest(url: server.url("/img/a"))
        cell.bind(good, on: pipeline)
        #expect(await eventually { cell.displays == 1 })
        #expect(cell.placeholders == 2)
        cell.bind(good, on: pipeline)  // memory hit: synchronous, no placeholder
        #expect(cell.displays == 2)
        #expect(cell.placeholders == 2)
        await server.stop()
    }
}

@Suite("Prefetcher", .timeLimit(.minutes(5)))
struct PrefetcherTests {
    @Test("Prefetches 6 images 2 at a time into the memory cache, delivering nothing")
    func prefetchesIntoCache() async throws {
        let server = try await TestServer.start()
        for i in 0..<6 { server.register("p\(i)", TestImages.jpeg(seed: i)) }
        let pipeline = makePipeline()
        let prefetcher = ImagePrefetcher(pipeline: pipeline)
        let requests = (0..<6).map { ImageRequest(url: server.url("/img/p\($0)?delay=40")) }
        prefetcher.startPrefetching(with: requests)
        #expect(await eventually { prefetcher.completedCount == 6 })
        #expect(server.snapshot.maxInFlight <= 2)
        #expect(requests.allSatisfy { pipeline.cachedImage(for: $0) != nil })
        await server.stop()
    }

    @Test("A real request joins the prefetch in flight (1 fetch) and raises its priority above queued work")
    func realRequestJoins() async throws {
        // Given one connection slot, busy, and a low-priority prefetch queued behind a normal request
        let server = try await TestServer.start()
        for name in ["block", "other", "wanted"] { server.register(name, TestImages.jpeg()) }
        let pipeline = makePipeline(perHostLimit: 1)
        server.hold("block")
        let blocker = Task { try await pipeline.image(for: ImageRequest(url: server.url("/img/block?hold=block"))) }
        #expect(await eventually { server.requests("/img/block") == 1 })
        let other = Task { try await pipeline.image(for: ImageRequest(url: server.url("/img/other"))) }
        #expect(await eventually { pipeline.fetches.jobs.count == 2 })
        let wanted = ImageRequest(url: server.url("/img/wanted"))
        let prefetcher = ImagePrefetcher(pipeline: pipeline)
        prefetcher.startPrefetching(with: [wanted])
        #expect(pipeline.fetches.jobs.count == 3)
        #expect(server.requests("/img/block") == 1 && server.snapshot.order.count == 1)

        // When the app asks for the prefetched image at high priority
        var real = wanted
        real.priority = .high
        let realTask = Task { try await pipeline.image(for: real) }

        // Then it shared the prefetch's fetch, which jumped ahead of the normal request
        #expect(await eventually { pipeline.statistics.sharedRequests >= 1 })
        server.release("block")
        let response = try await realTask.value
        #expect(response.bitmap != nil)
        #expect(server.requests("/img/wanted") == 1)
        #expect(pipeline.statistics.sharedRequests >= 1)
        _ = try await (blocker.value, other.value)
        #expect(server.snapshot.order == ["/img/block", "/img/wanted", "/img/other"])
        await server.stop()
    }
}
