import CDarkroomSandbox
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

    @Test func aWorkersMemoryFilesAndOptionsAreKeptAcrossDecodes() throws {
        // Given a worker, and a sequence of decodes that changes the options, the input's size and its kind (bytes
        // and open files), and includes a full-size bitmap past what a worker keeps between decodes
        let worker = try Self.worker()
        let small = DecodeOptions(size: .maxPixelSize(64))
        let large = DecodeOptions(size: .maxPixelSize(256))
        let full = DecodeOptions()
        let steps: [(String, DecodeOptions, Bool)] = [
            ("jpeg/kite-2560x1600.jpg", small, false), ("png/cups-alpha-1600x1000.png", small, false),
            ("jpeg/kite-2560x1600.jpg", large, true), ("png/cups-alpha-1600x1000.png", full, false),
            ("orientation/fallenleaf-600x400-orientation-6.jpg", small, false),
            ("png/cups-alpha-1600x1000.png", large, true), ("jpeg/kite-2560x1600.jpg", small, false),
        ]
        let local = ImageDecoder()
        for (name, options, fromFile) in steps {
            // When each is decoded in the worker and in this process
            let path = SamplePhotos.path(name)
            let bytes = try SamplePhotos.bytes(path)
            let isolated: DecodedImage
            if fromFile {
                let fd = open(path, O_RDONLY | O_CLOEXEC)
                defer { close(fd) }
                isolated = try worker.decode(file: fd, length: bytes.count, options: options, timeout: 30)
            } else {
                isolated = try bytes.withUnsafeBytes { try worker.decode($0, options: options, timeout: 30) }
            }
            // Then each is the library's, for its own options (never the previous request's)
            let expected = try local.decode(bytes, options: options)
            #expect(isolated.bitmap.width == expected.bitmap.width && isolated.bitmap.height == expected.bitmap.height)
            #expect(PixelCompare.psnr(isolated.bitmap, expected.bitmap) == .infinity, "\(name) \(options.geometry)")
        }
        // And the worker holds one input and one output memory file, whatever it decoded
        let folder = "/proc/\(worker.pid)/fd"
        let memoryFiles = try FileManager.default.contentsOfDirectory(atPath: folder).compactMap {
            try? FileManager.default.destinationOfSymbolicLink(atPath: "\(folder)/\($0)")
        }.filter { $0.hasPrefix("/memfd:darkroom-") }
        #expect(memoryFiles.filter { $0.hasPrefix("/memfd:darkroom-input") }.count == 1, "\(memoryFiles)")
        #expect(memoryFiles.filter { $0.hasPrefix("/memfd:darkroom-output") }.count == 1, "\(memoryFiles)")
        #expect(worker.decodeCount == steps.count && worker.isRunning)
    }

    @Test func theOutputMemoryFileCannotBeResizedByAnyHolder() throws {
        // Given the output memory file a worker is handed (this process maps it to copy bitmaps out)
        let fd = try WorkerProcess.outputMemoryFile(size: 1 << 20)
        defer { close(fd) }
        // When a holder of the descriptor (a compromised worker) tries to shrink or grow it
        let shrunk = ftruncate(fd, 0)
        let shrinkError = errno
        let grown = ftruncate(fd, 2 << 20)
        // Then both are refused and the size holds, while writing into it and giving its pages back still work
        #expect(shrunk == -1 && shrinkError == EPERM && grown == -1)
        var status = stat()
        #expect(fstat(fd, &status) == 0 && status.st_size == 1 << 20)
        let bytes: [UInt8] = [1, 2, 3]
        #expect(bytes.withUnsafeBytes { POSIXIO.write(fd, $0, at: 4096) })
        #expect(dr_channel_release_memory(fd, 1 << 20) == 0)
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
