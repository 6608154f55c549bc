import DarkroomImage
import DarkroomSupport
import DarkroomTestSupport
import Dispatch
import Foundation
import Testing

@testable import DarkroomWorkers

/// A decoder that misbehaves inside a confined worker (`darkroom-test-worker`, built with the tests only): what an
/// exploited decoder would try is refused or ends the worker, and a crash or a spin costs exactly its own request,
/// under concurrent load.
@Suite struct WorkerFaultTests {
    static func executable() throws -> String { try SamplePhotos.builtExecutable("darkroom-test-worker") }

    static func attempt(_ misdeed: WorkerMisdeed, timeout: Double = 10) throws -> DarkroomImageError? {
        let worker = try WorkerProcess(executable: executable())
        return #expect(throws: DarkroomImageError.self) {
            try misdeed.input.withUnsafeBytes { try worker.decode($0, options: DecodeOptions(), timeout: timeout) }
        }
    }

    @Test func whatAnExploitedDecoderTriesIsRefused() throws {
        // Given a confined worker whose decoder tries to read /etc/passwd, open a socket or create a file
        let namespaces = try ConfinementCheck.run(.nothing).namespaces
        for misdeed in [WorkerMisdeed.openPasswd, .openSocket, .createFile] {
            // When it decodes, Then the call was refused with EPERM (reading a file in the namespaces' root: not
            // there, ENOENT — the root holds only the fonts) and the request gets the decoder's error
            let expected = misdeed == .openPasswd && namespaces ? ENOENT : EPERM
            let error = try Self.attempt(misdeed)
            #expect(
                error?.code == .io && error?.message.hasSuffix("errno \(expected)") == true,
                "\(misdeed): \(String(describing: error))")
        }
        #expect(!FileManager.default.fileExists(atPath: "/tmp/darkroom-test-worker"))
        // And an allocation past the address-space limit fails in the worker instead of taking the machine's memory
        let allocation = try Self.attempt(.allocate)
        #expect(
            allocation?.message == "map 8 GiB: result -1 errno \(ENOMEM)", "\(String(describing: allocation))")
    }

    @Test func runningAProgramEndsTheWorker() throws {
        // Given a worker whose decoder runs a program, When it decodes, Then the filter ends it (SIGSYS)
        let error = try Self.attempt(.runProgram)
        #expect(
            error?.code == .decoderCrashed && error?.message.contains("signal 31") == true,
            "\(String(describing: error))")
    }

    @Test func aCrashAndASpinCostTheirOwnRequestsUnderLoad() throws {
        // Given a pool of 2 workers, 30 decodes of a photo from 4 threads, and among them a decoder that segfaults
        // and one that spins forever (the pool's timeout 2 s)
        let pool = DecodeWorkerPool(configuration: .init(executable: try Self.executable(), workers: 2, timeout: 2))
        let photo = try SamplePhotos.bytes(SamplePhotos.path("jpeg/kite-2560x1600.jpg"))
        let options = DecodeOptions(size: .maxPixelSize(128))
        let expected = try ImageDecoder().decode(photo, options: options).bitmap
        let inputs: [Int: WorkerMisdeed] = [7: .crash, 15: .spin]
        let outcomes = Locked([Int: String]())
        // When they all run at once
        DispatchQueue.concurrentPerform(iterations: 32) { index in
            let bytes = inputs[index]?.input ?? photo
            let outcome: String
            do {
                let image = try bytes.withUnsafeBytes { try pool.decode($0, options: options) }
                outcome = PixelCompare.psnr(image.bitmap, expected) == .infinity ? "ok" : "different"
            } catch {
                outcome = (error as? DarkroomImageError)?.code.rawValue ?? "\(error)"
            }
            outcomes.withLock { $0[index] = outcome }
        }
        // Then the crash and the spin each cost their own request its typed error, and every other decode succeeds
        let all = outcomes.withLock { $0 }
        #expect(all[7] == "decoder_crashed" && all[15] == "limit_exceeded", "\(all)")
        let others = all.filter { inputs[$0.key] == nil }
        #expect(others.count == 30 && others.values.allSatisfy { $0 == "ok" }, "\(others)")
        let statistics = pool.statistics
        #expect(statistics.crashes == 1 && statistics.timeouts == 1, "\(statistics)")
    }
}
