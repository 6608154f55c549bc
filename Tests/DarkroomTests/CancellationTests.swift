import DarkroomCache
import DarkroomImage
import DarkroomSupport
import DarkroomTestSupport
import Foundation
import Synchronization
import Testing

@testable import Darkroom

@Suite(
    "Cancellation: no delivery after cancel; the transfer stops when the last waiter leaves", .timeLimit(.minutes(5)))
struct CancellationTests {
    @Test(
        "Cancelling the only waiter delivers cancelled once, never the image, and stops the transfer (also when the shared work learns of it on the control thread)",
        arguments: [false, true])
    func cancelOnlyWaiter(deferred: Bool) async throws {
        // Given a transfer of ~200 KB that takes ~10 s (1 KiB every 50 ms: a loaded machine, whose test tasks may
        // wait seconds between two steps, cannot finish it before the cancel)
        let server = try await TestServer.start()
        server.register("big", TestImages.noisyJPEG(seed: 3))
        let pipeline = makePipeline(configure: { $0.defersTaskControl = deferred })
        let events = Locked<[String]>([])
        let task = pipeline.loadImage(with: ImageRequest(url: server.url("/img/big?slow=50"))) { result in
            events.withLock { $0.append((try? result.get()) == nil ? "failure:\(result)" : "image") }
        }
        #expect(await eventually { server.bytesSent("/img/big") > 0 })

        // When it is cancelled mid-transfer
        task.cancel()

        // Then exactly one cancelled delivery, the server sees the connection go, nothing more arrives
        #expect(events.withLock { $0.count } == 1)
        #expect(events.withLock { $0.first?.contains("cancelled") } == true)
        #expect(await eventually { server.snapshot.closedEarly["/img/big"] == 1 })
        try await Task.sleep(for: .milliseconds(100))
        #expect(events.withLock { $0.count } == 1)
        #expect(pipeline.statistics.decodes == 0)
        #expect(pipeline.statistics.cancellations == 1)
        await server.stop()
    }

    @Test("One of two waiters cancels: the other still gets the image from the same transfer")
    func oneOfTwoCancels() async throws {
        let server = try await TestServer.start()
        server.register("a", TestImages.jpeg(width: 128, height: 128))
        let pipeline = makePipeline()
        server.hold("a")
        let request = ImageRequest(url: server.url("/img/a?hold=a"))
        let first = pipeline.loadImage(with: request) { _ in }
        let second = Task { try await pipeline.image(for: request) }
        #expect(await eventually { pipeline.statistics.requests == 2 })

        first.cancel()
        server.release("a")

        let response = try await second.value
        #expect(response.bitmap?.width == 128)
        #expect(server.requests("/img/a") == 1)
        #expect(server.snapshot.closedEarly["/img/a"] == nil)
        await server.stop()
    }

    @Test("All 5 waiters cancel (async tasks): the shared transfer stops")
    func allWaitersCancel() async throws {
        let server = try await TestServer.start()
        server.register("big", TestImages.noisyJPEG(seed: 4))
        let pipeline = makePipeline()
        // ~40 s of transfer (1 KiB every 200 ms): longer than the steps below can take on a loaded machine (with other
        // suites' synchronous tests holding both of a 2-core machine's cooperative threads, they took over 10 s)
        let request = ImageRequest(url: server.url("/img/big?slow=200"))
        let tasks = (0..<5).map { _ in Task { try await pipeline.image(for: request) } }
        #expect(await eventually { server.bytesSent("/img/big") > 0 })

        for t in tasks.dropLast() { t.cancel() }
        try await Task.sleep(for: .milliseconds(50))
        #expect(server.snapshot.closedEarly["/img/big"] == nil)  // one waiter is left: still running
        tasks.last!.cancel()

        for t in tasks {
            await #expect(throws: DarkroomError.self) { try await t.value }
        }
        #expect(await eventually { server.snapshot.closedEarly["/img/big"] == 1 })
        #expect(pipeline.images.jobs.count == 0 && pipeline.fetches.jobs.count == 0 && pipeline.decodes.jobs.count == 0)
        await server.stop()
    }

    @Test("Cancelling a queued decode removes it from the pool: it never runs")
    func cancelQueuedDecode() async throws {
        // Given one processing thread held by a processor that waits for the test
        let pipeline = makePipeline(memory: false, processingLimit: 1)
        let gate = GateProcessor()
        let busy = pipeline.loadImage(
            with: ImageRequest(
                source: .data(id: "busy", bytes: TestImages.png()),
                processors: [gate])
        ) { _ in }
        #expect(await eventually { gate.calls.load(ordering: .relaxed) == 1 })
        // When a second request queues behind it and is cancelled
        let delivered = Atomic(0)
        let queued = pipeline.loadImage(with: ImageRequest(source: .data(id: "queued", bytes: TestImages.png(seed: 1))))
        { r in
            if (try? r.get()) != nil { delivered.add(1, ordering: .relaxed) }
        }
        #expect(pipeline.context.decodeQueue.statistics.pending == 1)
        queued.cancel()
        #expect(pipeline.context.decodeQueue.statistics.pending == 0)
        gate.gate.signal()
        #expect(await eventually { busy.isDone })
        try await Task.sleep(for: .milliseconds(50))
        // Then only the busy request decoded
        #expect(pipeline.statistics.decodes == 1)
        #expect(delivered.load(ordering: .relaxed) == 0)
    }
}
