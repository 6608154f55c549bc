import DarkroomCache
import DarkroomImage
import DarkroomSupport
import DarkroomTestSupport
import Foundation
import Synchronization
import Testing

@testable import Darkroom

/// An image-table double holding one geometry: bitmaps by (geometry, entity), counting hits and stores.
final class TestTables: ImageTableCaching {
    private let entries = Locked<[String: Bitmap]>([:])
    let stores = Atomic(0)
    let geometry: OutputGeometry
    init(geometry: OutputGeometry) { self.geometry = geometry }
    func holds(_ geometry: OutputGeometry) -> Bool { geometry == self.geometry }
    func image(forEntity entity: String, geometry: OutputGeometry) -> Bitmap? {
        entries.withLock { $0[geometry.key + "|" + entity] }
    }
    func store(_ bitmap: Bitmap, forEntity entity: String, geometry: OutputGeometry) {
        stores.add(1, ordering: .relaxed)
        entries.withLock { $0[geometry.key + "|" + entity] = bitmap }
    }
}

@Suite("Flow through the layers, origins, timings and the three APIs", .timeLimit(.minutes(5)))
struct PipelineFlowTests {
    @Test("Each layer answers in turn: network → memory → processed disk → original disk → table")
    func layers() async throws {
        let server = try await TestServer.start()
        server.register("a", TestImages.jpeg(width: 120, height: 80))
        let disk = TestDataCache()
        let url = server.url("/img/a")
        let crop = ImageProcessors.Crop(x: 10, y: 10, width: 30, height: 20)
        let request = ImageRequest(url: url, size: .maxPixelSize(60), processors: [crop])

        // First: from the network, decoded, cropped; stored in memory and (original + processed) on disk.
        let p1 = makePipeline(disk: disk)
        let first = try await p1.image(for: request)
        #expect(first.origin == .network)
        #expect(first.bitmap.map { ($0.width, $0.height) }! == (30, 20))
        #expect(first.timings.fetch > 0 && first.timings.decode > 0 && first.timings.process > 0)
        #expect(first.timings.total >= first.timings.decode)
        // Second, same pipeline: memory.
        #expect(try await p1.image(for: request).origin == .memory)
        #expect(await eventually { disk.keys().count == 2 })

        // A new pipeline on the same disk: the processed image, no fetch, no processors run.
        let p2 = makePipeline(disk: disk)
        let fromProcessed = try await p2.image(for: request)
        #expect(fromProcessed.origin == .diskProcessed)
        #expect(fromProcessed.bitmap.map { ($0.width, $0.height) }! == (30, 20))
        #expect(p2.statistics.processings == 0)

        // Another size of the same URL: the original bytes from disk, decoded at the new size.
        let other = try await p2.image(for: ImageRequest(url: url, size: .maxPixelSize(40)))
        #expect(other.origin == .diskOriginal)
        #expect(other.bitmap?.width == 40)
        #expect(server.requests("/img/a") == 1)

        // A request whose geometry has a table: the first fills the table, the next (new pipeline) reads it.
        let tables = TestTables(geometry: OutputGeometry(size: .fill(width: 16, height: 16)))
        var config = ImagePipeline.Configuration(
            imageCache: TestImageCache(), dataCache: disk, dataLoader: HTTPDataLoader())
        config.imageTables = tables
        let p3 = ImagePipeline(configuration: config)
        let tableRequest = ImageRequest(url: url, size: .fill(width: 16, height: 16))
        #expect(try await p3.image(for: tableRequest).origin == .diskOriginal)
        #expect(await eventually { tables.stores.load(ordering: .relaxed) == 1 })
        var config4 = config
        config4.imageCache = TestImageCache()
        let fromTable = try await ImagePipeline(configuration: config4).image(for: tableRequest)
        #expect(fromTable.origin == .table)
        #expect(fromTable.bitmap?.width == 16)
        await server.stop()
    }

    @Test("Files, file URLs and in-memory bytes load without the network; returnData skips decoding")
    func localSourcesAndData() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("darkroom-\(UUID()).png").path
        let png = TestImages.png(width: 20, height: 10)
        try FileBytes.writeAtomically(png, to: path)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let pipeline = makePipeline()
        #expect(try await pipeline.image(for: ImageRequest(path: path)).origin == .file)
        #expect(
            try await pipeline.image(for: ImageRequest(url: URL(fileURLWithPath: path), size: .maxPixelSize(10)))
                .bitmap?.width == 10)
        let data = try await pipeline.image(for: ImageRequest(source: .data(id: "x", bytes: png), options: .returnData))
        #expect(data.data == png && data.container == nil)
        #expect(pipeline.statistics.decodes == 2)
        let missing = await #expect(throws: DarkroomError.self) {
            try await pipeline.image(for: ImageRequest(path: path + ".missing"))
        }
        #expect(missing?.code == .notFound)
        let junk = await #expect(throws: DarkroomError.self) {
            try await pipeline.image(for: ImageRequest(source: .data(id: "junk", bytes: Array("hello".utf8))))
        }
        #expect(junk?.code == .notAnImage)
    }

    @Test("Callback API: progress, then one completion; the returned task can be re-prioritised")
    func callbackAPI() async throws {
        let server = try await TestServer.start()
        server.register("a", TestImages.noisyJPEG(width: 100, height: 100))
        let pipeline = makePipeline()
        let progress = Locked<[Int64]>([])
        let completions = Atomic(0)
        let task = pipeline.loadImage(
            with: ImageRequest(url: server.url("/img/a?slow=2")),
            progress: { c, _ in progress.withLock { $0.append(c) } },
            completion: { r in if (try? r.get()) != nil { completions.add(1, ordering: .relaxed) } })
        task.priority = .veryHigh
        #expect(task.priority == .veryHigh)
        #expect(await eventually { task.isDone })
        #expect(completions.load(ordering: .relaxed) == 1)
        #expect(progress.withLock { $0.count } > 1)
        task.cancel()  // no effect after completion
        #expect(!task.isCancelled)
        await server.stop()
    }

    @Test("Event stream with progressive previews: progress, previews from the rows so far, then the image")
    func previews() async throws {
        let server = try await TestServer.start()
        server.register("big", TestImages.noisyJPEG(width: 200, height: 200, seed: 5))
        // The body stops after its first half until the preview has arrived, so a loaded machine cannot deliver
        // the rest before the preview's decode has run (which would rightly drop the preview).
        server.hold("half")
        defer { server.release("half") }
        let pipeline = makePipeline()
        var kinds: [String] = []
        var preview: ImageResponse?
        var final: ImageResponse?
        let request = ImageRequest(
            source: .url(server.url("/img/big?slow=3&pause=half")), size: .maxPixelSize(100),
            options: .progressivePreviews)
        for try await event in pipeline.imageEvents(for: request) {
            switch event {
            case .progress: if kinds.last != "progress" { kinds.append("progress") }
            case .preview(let r):
                kinds.append("preview")
                preview = r
                server.release("half")
            case .finished(let r):
                kinds.append("finished")
                final = try r.get()
            }
        }
        #expect(kinds.first == "progress" && kinds.last == "finished")
        // (at a quarter of the bytes, and at half and three quarters unless the final image comes first)
        #expect((1...3).contains(kinds.filter { $0 == "preview" }.count), "\(kinds)")
        #expect(preview?.container?.isPreview == true)
        #expect(preview?.bitmap?.width == 100 && final?.bitmap?.width == 100)
        #expect(final?.container?.isPreview == false)
        #expect(pipeline.cachedImage(for: request)?.isPreview == false)
        await server.stop()
    }

    @Test("Event stream: ending the iteration early cancels the request")
    func eventStreamCancels() async throws {
        let server = try await TestServer.start()
        server.register("big", TestImages.noisyJPEG(seed: 9))
        let pipeline = makePipeline()
        // ~10 s of transfer (1 KiB every 50 ms): a loaded machine cannot finish it before the loop ends
        for try await event in pipeline.imageEvents(for: ImageRequest(url: server.url("/img/big?slow=50"))) {
            if case .progress = event { break }
        }
        #expect(await eventually { server.snapshot.closedEarly["/img/big"] == 1 })
        #expect(pipeline.statistics.cancellations == 1)
        await server.stop()
    }

    @Test("Processors: crop, resize, rounded corners; a throwing processor fails the request")
    func processors() async throws {
        let bitmap = TestImages.bitmap(width: 40, height: 20, seed: 0)
        let cropped = try ImageProcessors.Crop(x: 5, y: 5, width: 10, height: 100).process(bitmap)
        #expect((cropped.width, cropped.height) == (10, 15))
        let resized = try ImageProcessors.Resize(width: 20, height: 10).process(bitmap)
        #expect((resized.width, resized.height) == (20, 10))
        let rounded = try ImageProcessors.RoundedCorners(radius: 8).process(bitmap)
        #expect(rounded.row(0).load(fromByteOffset: 3, as: UInt8.self) == 0)  // corner transparent
        #expect(rounded.row(10).load(fromByteOffset: 20 * 4 + 3, as: UInt8.self) == 255)  // centre opaque
        #expect(!rounded.isOpaque)

        struct Failing: ImageProcessing {
            var identifier: String { "test.failing" }
            func process(_ bitmap: Bitmap) throws -> Bitmap { throw CancellationError() }
        }
        let pipeline = makePipeline()
        let error = await #expect(throws: DarkroomError.self) {
            try await pipeline.image(
                for: ImageRequest(source: .data(id: "f", bytes: TestImages.png()), processors: [Failing()]))
        }
        #expect(error?.code == .processingFailed)
    }
}
