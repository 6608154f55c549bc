import DarkroomImage
import DarkroomSupport
import DarkroomTestSupport
import Dispatch
import Foundation
import Testing

@testable import DarkroomWorkers

/// The pool of decode workers: decodes side by side are the library's, no more workers run than configured, workers
/// are reused and retired after their number of decodes, and a dead worker costs only what it was doing.
@Suite struct DecodeWorkerPoolTests {
    static func pool(workers: Int = 2, decodesPerWorker: Int = 1000) throws -> DecodeWorkerPool {
        DecodeWorkerPool(
            configuration: .init(
                executable: try SamplePhotos.builtExecutable("darkroom-worker"), workers: workers,
                decodesPerWorker: decodesPerWorker))
    }

    @Test func decodesSideBySideAreTheLibrarys() throws {
        // Given a pool of 2 workers and 3 photos
        let pool = try Self.pool()
        let names = [
            "jpeg/kite-2560x1600.jpg", "png/cups-alpha-1600x1000.png", "webp/eveningglow-lossy-2560x1600.webp",
        ]
        let inputs = try names.map { try SamplePhotos.bytes(SamplePhotos.path($0)) }
        let options = DecodeOptions(size: .maxPixelSize(200))
        // When 12 decodes run from 4 threads at once
        let results = Locked([Int: Double]())
        DispatchQueue.concurrentPerform(iterations: 12) { index in
            let bytes = inputs[index % inputs.count]
            let psnr: Double
            do {
                let isolated = try bytes.withUnsafeBytes { try pool.decode($0, options: options) }
                let local = try ImageDecoder().decode(bytes, options: options)
                psnr = PixelCompare.psnr(isolated.bitmap, local.bitmap)
            } catch {
                psnr = -1
            }
            results.withLock { $0[index] = psnr }
        }
        // Then every one is the library's decode, by at most 2 workers, each started once
        let all = results.withLock { $0 }
        #expect(all.count == 12 && all.values.allSatisfy { $0 == .infinity }, "\(all)")
        let statistics = pool.statistics
        #expect(statistics.workersStarted <= 2 && statistics.decodes == 12, "\(statistics)")
    }

    @Test func workersAreRetiredAfterTheirDecodes() throws {
        // Given a pool whose one worker decodes twice before it is replaced
        let pool = try Self.pool(workers: 1, decodesPerWorker: 2)
        let bytes = try SamplePhotos.bytes(SamplePhotos.path("jpeg/kite-2560x1600.jpg"))
        // When it decodes 5 times
        for _ in 0..<5 {
            _ = try bytes.withUnsafeBytes { try pool.decode($0, options: DecodeOptions(size: .maxPixelSize(64))) }
        }
        // Then three workers served them, two of them retired
        let statistics = pool.statistics
        #expect(statistics.workersStarted == 3 && statistics.recycled == 2 && statistics.decodes == 5, "\(statistics)")
    }

    @Test func aWorkerKilledWhileIdleCostsNoRequest() throws {
        // Given a pool with one worker that has decoded once, then is killed while idle
        let pool = try Self.pool(workers: 1)
        let bytes = try SamplePhotos.bytes(SamplePhotos.path("jpeg/kite-2560x1600.jpg"))
        let options = DecodeOptions(size: .maxPixelSize(64))
        _ = try bytes.withUnsafeBytes { try pool.decode($0, options: options) }
        let pids = Self.workerPIDs(of: pool)
        try #require(pids.count == 1)
        kill(pids[0], SIGKILL)
        usleep(100_000)
        // When the next decode comes, Then it succeeds on a new worker
        let image = try bytes.withUnsafeBytes { try pool.decode($0, options: options) }
        #expect(image.bitmap.width == 64)
        let statistics = pool.statistics
        #expect(statistics.diedIdle == 1 && statistics.workersStarted == 2 && statistics.crashes == 0, "\(statistics)")
    }

    @Test func workersRunAtTheConfiguredNiceValueAndReportTheirPeakMemory() throws {
        // Given a pool whose workers run at nice 12, started ahead of any decode
        var configuration = DecodeWorkerPool.Configuration(
            executable: try SamplePhotos.builtExecutable("darkroom-worker"), workers: 2)
        configuration.niceness = 12
        let pool = DecodeWorkerPool(configuration: configuration)
        pool.prestart()
        // When one decodes a photo
        let bytes = try SamplePhotos.bytes(SamplePhotos.path("jpeg/kite-2560x1600.jpg"))
        _ = try bytes.withUnsafeBytes { try pool.decode($0, options: DecodeOptions(size: .maxPixelSize(64))) }
        // Then both were started at once, run at nice 12 (the 19th field of /proc/PID/stat), and report a peak RSS
        let pids = Self.workerPIDs(of: pool)
        #expect(pids.count == 2 && pool.statistics.workersStarted == 2, "\(pool.statistics)")
        for pid in pids {
            let stat = try String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)
            let fields = stat[stat.range(of: ")")!.upperBound...].split(separator: " ")
            #expect(fields[16] == "12", "\(stat)")
        }
        let peaks = pool.workersPeakRSS()
        #expect(peaks.count == 2 && peaks.allSatisfy { $0 > 1 << 20 }, "\(peaks)")
    }

    /// The process ids of the pool's idle workers.
    static func workerPIDs(of pool: DecodeWorkerPool) -> [pid_t] {
        pool.idlePIDs
    }
}
