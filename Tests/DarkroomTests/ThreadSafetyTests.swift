import DarkroomCache
import DarkroomImage
import DarkroomSupport
import DarkroomTestSupport
import Foundation
import Synchronization
import Testing

@testable import Darkroom

/// Hammers the shared machinery from many threads at once. Run under ThreadSanitizer:
/// `swift test --sanitize=thread --filter ThreadSafetyTests`.
@Suite("Thread safety (run under TSan)", .timeLimit(.minutes(5)))
struct ThreadSafetyTests {
    @Test("Job pool: concurrent subscribe, re-prioritise, preview, cancel and finish; every waiter hears exactly once")
    func jobPool() async {
        let pool = JobPool<Int, Int>()
        let heard = Locked<[Int: Int]>([:])
        let started = Atomic(0)
        let jobs = Locked<[Int: SharedJob<Int>]>([:])
        let subscriptions = Locked<[JobSubscription]>([])
        await onThreads(4) { worker in
            for i in 0..<2_000 {
                let key = i % 50
                let id = worker * 10_000 + i
                let (sub, _) = pool.subscribe(
                    key: key, priority: .normal,
                    handler: { event in
                        if case .finished = event { heard.withLock { $0[id, default: 0] += 1 } }
                    },
                    start: { job in
                        started.add(1, ordering: .relaxed)
                        job.onCancel {}
                        job.onPriorityChange { _ in }
                        jobs.withLock { $0[key] = job }
                    })
                switch (i + worker) % 4 {
                case 0: sub.setPriority(.high)
                case 1: sub.cancel()
                case 2: jobs.withLock { $0[key] }?.finish(.success(i))
                default:
                    // A preview, kept by the job for waiters who join later, races their subscriptions
                    jobs.withLock { $0[key] }?.send(.preview(i))
                    subscriptions.withLock { $0.append(sub) }
                }
            }
        }
        // Whatever is still in flight finishes; cancelled waiters heard nothing, all others exactly once.
        for job in jobs.withLock({ Array($0.values) }) { job.finish(.success(0)) }
        for sub in subscriptions.withLock({ $0 }) { sub.cancel() }
        // Waiters that did not cancel heard exactly once; none heard twice (a cancelled one may have heard the
        // result if its job finished first).
        let counts = heard.withLock { $0 }
        #expect(counts.values.allSatisfy { $0 == 1 })
        let kept = (0..<4).flatMap { w in (0..<2_000).filter { ($0 + w) % 4 != 1 }.map { w * 10_000 + $0 } }
        #expect(kept.allSatisfy { counts[$0] == 1 })
        #expect(pool.count == 0)
        #expect(started.load(ordering: .relaxed) >= 50)
    }

    @Test("Work queue: concurrent enqueue, cancel and re-prioritise; each item runs at most once, limit held")
    func workQueue() async {
        let queue = WorkQueue(name: "tsan", maxConcurrent: 3)
        let ran = Atomic(0)
        let cancelled = Atomic(0)
        let running = Atomic(0)
        let maxRunning = Atomic(0)
        await onThreads(4) { worker in
            for i in 0..<1_000 {
                let item = queue.enqueue(priority: WorkQueue.Priority(rawValue: i % 5)!) { _ in
                    let now = running.add(1, ordering: .relaxed).newValue
                    if now > maxRunning.load(ordering: .relaxed) { maxRunning.store(now, ordering: .relaxed) }
                    ran.add(1, ordering: .relaxed)
                    running.subtract(1, ordering: .relaxed)
                }
                if (i + worker) % 3 == 0, item.cancel() { cancelled.add(1, ordering: .relaxed) }
                if (i + worker) % 3 == 1 { item.setPriority(.veryHigh) }
            }
        }
        #expect(await eventually(20) { ran.load(ordering: .relaxed) + cancelled.load(ordering: .relaxed) == 4_000 })
        #expect(maxRunning.load(ordering: .relaxed) <= 3)
        #expect(queue.statistics.maxThreads <= 3)
    }

    @Test("Network scheduler: concurrent schedule, cancel and completion keep the limits and reach zero")
    func networkScheduler() async {
        let activity = NetworkActivity(debounce: 0.01)
        let scheduler = NetworkScheduler(totalLimit: 4, perHostLimit: 2, activity: activity)
        let done = Atomic(0)
        let removed = Atomic(0)
        await onThreads(4) { worker in
            for i in 0..<500 {
                let ticket = scheduler.schedule(host: "h\(i % 3)", priority: .normal) { finish in
                    DispatchQueue.global().async {
                        done.add(1, ordering: .relaxed)
                        finish()
                    }
                }
                if (i + worker) % 4 == 0 {
                    if ticket.cancel() { removed.add(1, ordering: .relaxed) }
                } else {
                    ticket.setPriority(.high)
                }
            }
        }
        #expect(await eventually(20) { done.load(ordering: .relaxed) + removed.load(ordering: .relaxed) == 2_000 })
        #expect(scheduler.highWater() <= 4)
        #expect((0..<3).allSatisfy { scheduler.highWater(host: "h\($0)") <= 2 })
        #expect(await eventually { activity.published == 0 && scheduler.running == 0 })
    }

    @Test(
        "Pipeline: 8 threads request, cancel and re-prioritise 2,000 shared requests; every task ends once (also with the control thread)",
        arguments: [false, true])
    func pipelineRequests(deferred: Bool) async {
        let pipeline = makePipeline(memory: true, processingLimit: 2, configure: { $0.defersTaskControl = deferred })
        let images = (0..<20).map { TestImages.png(width: 12, height: 12, seed: $0) }
        let completions = Atomic(0)
        await onThreads(8) { worker in
            for i in 0..<250 {
                let n = (i * 7 + worker) % 20
                let request = ImageRequest(
                    source: .data(id: "t\(n)", bytes: images[n]),
                    size: .maxPixelSize(4 + n % 3 * 4))
                let task = pipeline.loadImage(with: request) { _ in completions.add(1, ordering: .relaxed) }
                switch i % 5 {
                case 0: task.cancel()
                case 1: task.priority = .veryHigh
                case 2: task.priority = .veryLow
                default: break
                }
            }
        }
        #expect(await eventually(20) { completions.load(ordering: .relaxed) == 2_000 })
        let stats = pipeline.statistics
        #expect(stats.requests == 2_000)
        #expect(stats.decodes <= 2_000 - stats.memoryHits)
        // And nothing is left behind: no job in flight at any stage, nothing waiting for the control thread
        #expect(
            await eventually {
                pipeline.context.controlIsIdle && pipeline.images.jobs.count == 0 && pipeline.decodes.jobs.count == 0
                    && pipeline.fetches.jobs.count == 0
            })
    }

    @Test("Targets: 4 threads rebinding 8 targets while results land from decode threads")
    func targets() async {
        let pipeline = makePipeline(memory: false, processingLimit: 2)
        let images = (0..<10).map { TestImages.png(width: 8, height: 8, seed: $0) }
        let cells = (0..<8).map { _ in TestCell() }
        await onThreads(4) { worker in
            for i in 0..<500 {
                let n = (i + worker) % 10
                cells[worker * 2 + i % 2].bind(ImageRequest(source: .data(id: "c\(n)", bytes: images[n])), on: pipeline)
            }
        }
        #expect(await eventually(20) { cells.allSatisfy(\.settled) })
        #expect(cells.map(\.stale).reduce(0, +) == 0)
    }

    @Test("Progressive stream: previews of growing bodies race the final image on 3 threads; the final is exact")
    func progressiveStream() async throws {
        // Given a progressive photo and one stream
        let bytes = try SamplePhotos.bytes("jpeg/summer_1am-2560x1600.jpg")
        let options = DecodeOptions(size: .maxPixelSize(640))
        let stream = try #require(ProgressiveJPEGStream(limits: options.limits, previewShare: .infinity))
        let finals = Locked<[Bitmap]>([])

        // When two threads ask for previews of ever longer bodies while a third asks for the final image midway
        await onThreads(3) { worker in
            for step in 1...12 {
                let end = worker == 2 && step == 6 ? bytes.count : bytes.count * step / 13
                let image = Array(bytes[..<end]).withUnsafeBytes { body in
                    try? stream.image(body, isComplete: end == bytes.count, options: options)
                }
                if end == bytes.count, let image { finals.withLock { $0.append(image.bitmap) } }
            }
        }

        // Then the final image (if the stream took it rather than giving up on an out-of-order body) is a direct
        // decode's, and nothing raced
        let direct = try ImageDecoder().decode(bytes, options: options).bitmap
        for image in finals.withLock({ $0 }) { #expect(PixelCompare.psnr(image, direct) == .infinity) }
    }
}
