import DarkroomCache
import DarkroomImage
import DarkroomTables
import DarkroomTestSupport
import Foundation
import Testing

@testable import Darkroom

@Suite("With DarkroomCache's MemoryCache and DiskCache plugged in", .timeLimit(.minutes(5)))
struct RealCachesTests {
    /// A pipeline with a fresh memory cache over `disk` (one DiskCache per directory: it locks its manifest).
    func pipeline(_ disk: DiskCache) throws -> ImagePipeline {
        var loader = HTTPDataLoader.Configuration()
        loader.retryBaseDelay = 0.01
        let config = ImagePipeline.Configuration(
            imageCache: MemoryCache<ImageCacheKey, ImageContainer>(),
            dataCache: disk,
            dataLoader: HTTPDataLoader(configuration: loader))
        return ImagePipeline(configuration: config)
    }

    @Test("network → memory; a second pipeline on the same disk cache: processed disk, original disk, revalidation")
    func layers() async throws {
        let server = try await TestServer.start()
        server.register("a", TestImages.jpeg(width: 160, height: 120))
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("darkroom-pipeline-\(UUID())")
            .path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let rounded = ImageRequest(
            url: server.url("/img/a?etag=1"), size: .maxPixelSize(80),
            processors: [ImageProcessors.RoundedCorners(radius: 10)])

        let disk = try DiskCache(directory: directory)
        let first = try pipeline(disk)
        #expect(try await first.image(for: rounded).origin == .network)
        #expect(try await first.image(for: rounded).origin == .memory)
        #expect(first.cachedImage(for: rounded)?.bitmap.width == 80)
        // Wait for the background disk writes (original + encoded processed image).
        #expect(
            await eventually {
                disk.cachedData(forKey: "o|" + rounded.source.key) != nil
                    && disk.cachedData(forKey: rounded.cacheKey.processedDiskKey) != nil
            })
        #expect(
            HTTPCacheMetadata.decode(disk.cachedData(forKey: "o|" + rounded.source.key)?.metadata)?.etag == "\"a-v1\"")

        let second = try pipeline(disk)
        let processed = try await second.image(for: rounded)
        #expect(processed.origin == .diskProcessed)
        #expect(processed.bitmap.map { ($0.width, $0.isOpaque) }! == (80, false))  // PNG keeps the transparent corners
        // Another size needs the original: stale (max-age=0), so revalidated with its ETag → 304 → disk bytes.
        let other = try await second.image(for: ImageRequest(url: server.url("/img/a?etag=1"), size: .maxPixelSize(40)))
        #expect(other.origin == .diskOriginal)
        #expect(second.statistics.revalidated == 1)
        #expect(server.requests("/img/a") == 2)
        #expect(server.snapshot.conditional == 1)
        await server.stop()
    }

    @Test("A request whose geometry has a table: decoded once into a real ImageTable, then answered from it zero-copy")
    func imageTable() async throws {
        let server = try await TestServer.start()
        server.register("a", TestImages.jpeg(width: 120, height: 90))
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("darkroom-table-\(UUID()).table").path
        defer { for suffix in ["", ".index", ".lock"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
        let geometry = OutputGeometry(size: .fill(width: 32, height: 32))
        let table = try ImageTable(
            path: path, format: ImageTableFormat(name: "thumb32", geometry: geometry, maximumCount: 100))
        var config = ImagePipeline.Configuration(imageCache: nil, dataLoader: HTTPDataLoader())
        config.imageTables = try ImageTableSet([geometry: table])
        let pipeline = ImagePipeline(configuration: config)
        let request = ImageRequest(url: server.url("/img/a"), size: .fill(width: 32, height: 32))

        let first = try await pipeline.image(for: request)
        #expect(first.origin == .network)
        #expect(await eventually { table.count == 1 })
        let second = try await pipeline.image(for: request)
        #expect(second.origin == .table)
        #expect(second.bitmap.map { ($0.width, $0.height) }! == (32, 32))
        #expect(second.bitmap!.pixelsEqual(first.bitmap!))
        #expect(server.requests("/img/a") == 1)
        await server.stop()
    }
}
