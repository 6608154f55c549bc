import DarkroomImage
import DarkroomSupport
import DarkroomTestSupport
import DarkroomVideo
import DarkroomWorkers
import Foundation
import Testing

@testable import DarkroomFuzzing

/// The fuzz corpora through the decode workers: every seed, damaged copies of each and every saved crasher decode in
/// a confined worker exactly as in this process — the same pixels or the same typed error — and none costs a worker.
@Suite struct HostileInputsInWorkersTests {
    @Test func theCorporaDecodeInWorkersAsInThisProcess() throws {
        // Given the decode and video targets' seeds, four damaged copies of each (header-biased byte flips, seeded),
        // and the crashers saved for any target
        var inputs = FuzzSeeds.seeds(for: "decode", photos: nil) + FuzzSeeds.seeds(for: "video", photos: nil)
        var rng = SplitMix64(state: 38)
        for (name, bytes) in inputs where !bytes.isEmpty {
            for copy in 0..<4 {
                inputs.append(("\(name)~\(copy)", ByteFlips.headerBiased(bytes, headerBytes: 512, using: &rng)))
            }
        }
        let crashers = FuzzRegressionTests.crashers
        for folder in try FileManager.default.contentsOfDirectory(atPath: crashers) where folder != "README.md" {
            for file in try FileManager.default.contentsOfDirectory(atPath: crashers + "/" + folder) {
                inputs.append((folder + "/" + file, try FileBytes.read(crashers + "/" + folder + "/" + file)))
            }
        }
        try #require(inputs.count >= 100, "\(inputs.count) inputs")
        let pool = DecodeWorkerPool(
            configuration: .init(executable: try SamplePhotos.builtExecutable("darkroom-worker"), workers: 2))
        let isolated = ImageDecoder(customDecoders: [VideoDecoder()], isolation: pool)
        let local = VideoDecoder.imageDecoder
        let options = DecodeOptions(size: .maxPixelSize(64))

        // When each is decoded in this process and in a worker
        var images = 0
        for (name, bytes) in inputs {
            let here = Result { () throws(DarkroomImageError) in try local.decode(bytes, options: options) }
            let there = Result { () throws(DarkroomImageError) in try isolated.decode(bytes, options: options) }

            // Then both give the same pixels, or the same typed error
            switch (here, there) {
            case (.success(let a), .success(let b)):
                images += 1
                #expect(PixelCompare.psnr(a.bitmap, b.bitmap) == .infinity && a.probe == b.probe, "\(name)")
            case (.failure(let a), .failure(let b)):
                #expect(a.code == b.code, "\(name): \(a) here, \(b) in a worker")
            default:
                Issue.record("\(name): \(here) here, \(there) in a worker")
            }
        }
        // and no input cost a worker (none crashed or overran), while some decoded and some were refused
        let statistics = pool.statistics
        #expect(statistics.crashes == 0 && statistics.timeouts == 0, "\(statistics)")
        #expect(images > 10 && images < inputs.count, "\(images) of \(inputs.count) decoded")
    }
}
