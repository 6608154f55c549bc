import DarkroomImage
import DarkroomSupport
import DarkroomTestSupport
import Foundation
import Testing

@testable import DarkroomWorkers

/// A decode worker process: its decodes are the library's own, pixel for pixel; a worker that dies or runs past its
/// time costs its own request (a typed error) and nothing else.
@Suite struct WorkerProcessTests {
    static func worker() throws -> WorkerProcess {
        try WorkerProcess(executable: SamplePhotos.builtExecutable("darkroom-worker"))
    }

    @Test(arguments: [
        "jpeg/kite-2560x1600.jpg", "png/cups-alpha-1600x1000.png", "heic/onestandsout-4032x3024-grid512.heic",
    ])
    func aWorkersDecodeIsTheLibrarys(_ name: String) throws {
        // Given a photo, and a worker
        let bytes = try SamplePhotos.bytes(SamplePhotos.path(name))
        let worker = try Self.worker()
        let options = DecodeOptions(size: .maxPixelSize(256))
        // When the worker decodes it, twice, and the library decodes it in this process
        let isolated = try bytes.withUnsafeBytes { try worker.decode($0, options: options, timeout: 30) }
        let again = try bytes.withUnsafeBytes { try worker.decode($0, options: options, timeout: 30) }
        let local = try ImageDecoder().decode(bytes, options: options)
        // Then the bitmaps and probes are the same, and the worker is still running
        #expect(PixelCompare.psnr(isolated.bitmap, local.bitmap) == .infinity, "\(name)")
        #expect(PixelCompare.psnr(again.bitmap, local.bitmap) == .infinity)
        #expect(isolated.probe == local.probe && isolated.shrinkDenominator == local.shrinkDenominator)
        #expect(worker.isRunning)
    }

    @Test func aDecodeErrorIsTheLibrarysAndTheWorkerCarriesOn() throws {
        // Given a worker, When it is handed bytes that are no image, Then the library's typed error comes back
        let worker = try Self.worker()
        let junk: [UInt8] = Array("not an image at all".utf8)
        let error = #expect(throws: DarkroomImageError.self) {
            try junk.withUnsafeBytes { try worker.decode($0, options: DecodeOptions(), timeout: 10) }
        }
        #expect(error?.code == .unsupportedFormat, "\(String(describing: error))")
        // And the worker decodes the next input
        let bytes = try SamplePhotos.bytes(SamplePhotos.path("jpeg/kite-2560x1600.jpg"))
        let image = try bytes.withUnsafeBytes {
            try worker.decode($0, options: DecodeOptions(size: .maxPixelSize(64)), timeout: 30)
        }
        #expect(image.bitmap.width == 64 && worker.isRunning)
    }

    @Test func aWorkerThatDiesCostsItsRequest() throws {
        // Given a worker that is killed (as a crashing decoder would end it)
        let worker = try Self.worker()
        let bytes = try SamplePhotos.bytes(SamplePhotos.path("jpeg/kite-2560x1600.jpg"))
        kill(worker.pid, SIGKILL)
        // When a decode is asked of it, Then the request gets decoder_crashed naming the signal, and the worker is done
        let error = #expect(throws: DarkroomImageError.self) {
            try bytes.withUnsafeBytes { try worker.decode($0, options: DecodeOptions(), timeout: 10) }
        }
        #expect(
            error?.code == .decoderCrashed && error?.message.contains("signal 9") == true,
            "\(String(describing: error))")
        #expect(!worker.isRunning)
        // And a new worker decodes the same input
        let fresh = try Self.worker()
        let image = try bytes.withUnsafeBytes {
            try fresh.decode($0, options: DecodeOptions(size: .maxPixelSize(64)), timeout: 30)
        }
        #expect(image.bitmap.width == 64)
    }

    @Test func aDecodePastItsTimeIsStopped() throws {
        // Given a worker stopped by SIGSTOP (a decode that never answers)
        let worker = try Self.worker()
        let bytes = try SamplePhotos.bytes(SamplePhotos.path("jpeg/kite-2560x1600.jpg"))
        kill(worker.pid, SIGSTOP)
        // When a decode waits 0.3 s for it, Then it is a limit error and the worker is killed
        let error = #expect(throws: DarkroomImageError.self) {
            try bytes.withUnsafeBytes { try worker.decode($0, options: DecodeOptions(), timeout: 0.3) }
        }
        #expect(error?.code == .limitExceeded && !worker.isRunning, "\(String(describing: error))")
        #expect(kill(worker.pid, 0) == -1 && errno == ESRCH)
    }
}
