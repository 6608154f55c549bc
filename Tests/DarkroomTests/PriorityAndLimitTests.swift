import DarkroomCache
import DarkroomImage
import DarkroomSupport
import DarkroomTestSupport
import Foundation
import Synchronization
import Testing

@testable import Darkroom

@Suite("Priorities and bounded work", .timeLimit(.minutes(5)))
struct PriorityAndLimitTests {
    @Test("The work queue starts the highest priority first, FIFO within a level, and honours a change in flight")
    func workQueueOrder() async throws {
        // Given one thread held busy
        let queue = WorkQueue(name: "test", maxConcurrent: 1)
        let gate = DispatchSemaphore(value: 0)
        let order = Locked<[String]>([])
        queue.enqueue(priority: .normal) { _ in gate.wait() }
        #expect(await eventually { queue.statistics.running == 1 })
        // When work of mixed priorities queues behind it, and one item is raised while queued
        for (name, p) in [
            ("low1", .low), ("high1", .high), ("normal1", .normal), ("high2", .high),
            ("veryLow", .veryLow),
        ] as [(String, WorkQueue.Priority)] {
            queue.enqueue(priority: p) { _ in order.withLock { $0.append(name) } }
        }
        let raised = queue.enqueue(priority: .low) { _ in order.withLock { $0.append("raised") } }
        raised.setPriority(.veryHigh)
        gate.signal()
        // Then they run in priority order
        #expect(await eventually { order.withLock { $0.count } == 6 })
        #expect(order.withLock { $0 } == ["raised", "high1", "high2", "normal1", "low1", "veryLow"])
    }

    @Test("Network: per-host limit 2 holds 8 slow requests to 2 at once; another host is not held up")
    func perHostLimit() async throws {
        let server = try await TestServer.start()
        for i in 0..<8 { server.register("p\(i)", TestImages.jpeg(seed: i)) }
        let pipeline = makePipeline(memory: false, perHostLimit: 2)
        server.hold("p")
        try await withThrowingTaskGroup(of: Void.self) { group in
            for i in 0..<8 {
                group.addTask { _ = try await pipeline.image(for: ImageRequest(url: server.url("/img/p\(i)?hold=p"))) }
            }
            #expect(await eventually { pipeline.statistics.requests == 8 && server.snapshot.inFlight == 2 })
            server.release("p")
            try await group.waitForAll()
        }
        #expect(server.snapshot.maxInFlight == 2)
        #expect(pipeline.context.network.highWater(host: "127.0.0.1") == 2)
        // Two hostnames for the same server are two hosts: 4 at once with a per-host limit of 2.
        let before = server.snapshot.requests.values.reduce(0, +)
        server.hold("q")
        try await withThrowingTaskGroup(of: Void.self) { group in
            for i in 0..<8 {
                let host = i % 2 == 0 ? "127.0.0.1" : "localhost"
                group.addTask {
                    _ = try await pipeline.image(for: ImageRequest(url: server.url("/img/p\(i)?hold=q", host: host)))
                }
            }
            #expect(await eventually { server.snapshot.inFlight == 4 })
            try await Task.sleep(for: .milliseconds(50))
            #expect(server.snapshot.inFlight == 4)
            server.release("q")
            try await group.waitForAll()
        }
        #expect(server.snapshot.requests.values.reduce(0, +) - before == 8)
        #expect(pipeline.context.network.highWater() == 4)
        await server.stop()
    }

    @Test(
        "Network: queued transfers start by priority; raising a queued task's priority moves it ahead (also when the change is made on the control thread)",
        arguments: [false, true])
    func networkPriority(deferred: Bool) async throws {
        let server = try await TestServer.start()
        for name in ["block", "low", "normal", "high", "raised"] { server.register(name, TestImages.jpeg()) }
        let pipeline = makePipeline(memory: false, perHostLimit: 1, configure: { $0.defersTaskControl = deferred })
        server.hold("block")
        let blocker = Task { try await pipeline.image(for: ImageRequest(url: server.url("/img/block?hold=block"))) }
        #expect(await eventually { server.requests("/img/block") == 1 })
        var tasks: [ImageTask] = []
        let done = Atomic(0)
        for (name, p) in [("low", .low), ("normal", .normal), ("raised", .veryLow), ("high", .high)]
            as [(String, ImageRequest.Priority)]
        {
            tasks.append(
                pipeline.loadImage(with: ImageRequest(url: server.url("/img/\(name)"), priority: p)) { _ in
                    done.add(1, ordering: .relaxed)
                })
        }
        tasks[2].priority = .veryHigh
        #expect(await eventually { pipeline.context.controlIsIdle })
        server.release("block")
        _ = try await blocker.value
        #expect(await eventually { done.load(ordering: .relaxed) == 4 })
        #expect(server.snapshot.order == ["/img/block", "/img/raised", "/img/high", "/img/normal", "/img/low"])
        await server.stop()
    }

    @Test("1,000 decodes: never more than the limit at once, on at most `limit` threads the pipeline owns")
    func thousandDecodes() async throws {
        // Given a pipeline limited to 2 processing threads and 1,000 distinct small images
        let limit = 2
        let pipeline = makePipeline(memory: false, processingLimit: limit)
        let counter = CountingProcessor()
        let png = TestImages.png(width: 24, height: 24)
        // When all 1,000 are requested at once (each decodes, then runs the counting processor)
        let finished = Atomic(0)
        for i in 0..<1000 {
            pipeline.loadImage(with: ImageRequest(source: .data(id: "img\(i)", bytes: png), processors: [counter])) {
                r in
                if (try? r.get()) != nil { finished.add(1, ordering: .relaxed) }
            }
        }
        #expect(await eventually(20) { finished.load(ordering: .relaxed) == 1000 })
        // Then: 1,000 decodes ran, never more than `limit` at a time, on at most `limit` threads
        let stats = pipeline.context.decodeQueue.statistics
        #expect(pipeline.statistics.decodes == 1000)
        #expect(counter.maxRunning.load(ordering: .relaxed) <= limit)
        #expect(stats.maxRunning <= limit)
        #expect(stats.maxThreads <= limit)
        #expect(counter.threads.withLock { $0.count } <= limit)
        #expect(stats.executed >= 2000)
    }

    @Test("Decoding and processing never run on Swift's cooperative pool, only on the pipeline's own threads")
    func cooperativePoolFree() async throws {
        let pipeline = makePipeline(memory: false, processingLimit: 2)
        let counter = CountingProcessor(work: 0.001)
        let png = TestImages.png(width: 16, height: 16)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for i in 0..<100 {
                group.addTask {
                    _ = try await pipeline.image(
                        for: ImageRequest(source: .data(id: "s\(i)", bytes: png), processors: [counter]))
                }
            }
            try await group.waitForAll()
        }
        // Every processor call ran on a thread the pipeline started (named "darkroom.decode"), none on the
        // cooperative pool that awaited them.
        #expect(counter.threadNames.withLock { $0 } == ["darkroom.decode"])
        #expect(counter.calls.load(ordering: .relaxed) == 100)
        #expect(counter.maxRunning.load(ordering: .relaxed) <= 2)
    }

    @Test("The network-activity count is published after the debounce and returns to 0")
    func activityCounter() async throws {
        let server = try await TestServer.start()
        server.register("a", TestImages.jpeg())
        let pipeline = makePipeline(memory: false)
        let seen = Locked<[Int]>([])
        pipeline.networkActivity.observe { n in seen.withLock { $0.append(n) } }
        server.hold("a")
        let t = Task { try await pipeline.image(for: ImageRequest(url: server.url("/img/a?hold=a"))) }
        #expect(await eventually { pipeline.networkActivity.published == 1 })
        server.release("a")
        _ = try await t.value
        #expect(await eventually { pipeline.networkActivity.published == 0 })
        #expect(seen.withLock { $0 } == [1, 0])
        await server.stop()
    }

    @Test("A cancelled item releases what its closure captured at once, though the queue has not reached its level")
    func cancelledItemsReleaseTheirCaptures() async throws {
        // Given one thread held busy and an item queued below it that captures a payload
        let queue = WorkQueue(name: "test", maxConcurrent: 1)
        let gate = DispatchSemaphore(value: 0)
        queue.enqueue(priority: .high) { _ in gate.wait() }
        #expect(await eventually { queue.statistics.running == 1 })
        final class Payload: Sendable {}
        weak var released: Payload?
        var item: WorkQueue.Item?
        do {
            let payload = Payload()
            released = payload
            item = queue.enqueue(priority: .low) { _ in withExtendedLifetime(payload) {} }
        }
        #expect(released != nil)
        // When it is cancelled while its handle is still held
        #expect(item?.cancel() == true)
        // Then the payload is gone (a file's bytes waiting for a decode are not kept by a cancelled decode)
        #expect(released == nil)
        // And moving and cancelling many items leaves no tombstones holding work
        for _ in 0..<1000 { queue.enqueue(priority: .veryLow) { _ in }.cancel() }
        gate.signal()
        #expect(await eventually { queue.statistics.running == 0 && queue.statistics.pending == 0 })
        withExtendedLifetime(item) {}
    }

    @Test("Worker threads run at the queue's nice value; the caller's is untouched")
    func workersRunAtTheirNiceValue() async throws {
        // Given a queue for background work at nice 10
        let queue = WorkQueue(name: "test", maxConcurrent: 1, niceness: 10)
        let seen = Locked<Int32?>(nil)
        // When an item reads its thread's nice value
        queue.enqueue { _ in seen.withLock { $0 = getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0) } }
        #expect(await eventually { seen.withLock { $0 } != nil })
        // Then it is 10, and this thread's is still the process's
        #expect(seen.withLock { $0 } == 10)
        #expect(getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0) == 0)
    }
}
