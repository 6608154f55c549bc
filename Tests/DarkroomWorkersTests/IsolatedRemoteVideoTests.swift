import DarkroomImage
import DarkroomSupport
import DarkroomTestSupport
import DarkroomVideo
import Foundation
import Testing

@testable import DarkroomWorkers

/// A video read by ranges where it lies (a remote one) decoded and probed in a decode worker, which can reach no
/// network: the ranges its decoder asks for are read in this process and handed over, so the frame and header are
/// this process's, a small part of the file is read, and a read that fails is the decode's typed error. A local
/// video's header is read in a worker too.
@Suite(.serialized) struct IsolatedRemoteVideoTests {
    /// A file read by ranges from memory, counting what it was asked for; it fails past `budget` bytes as a remote
    /// reader past its byte budget does, and takes `delay` seconds a read as a slow origin does.
    final class CountingRanges: ByteRangeReading, @unchecked Sendable {
        // @unchecked: the counters are touched only by the thread that reads (one decode at a time)
        let bytes: [UInt8]
        let budget: Int
        let delay: Double
        var read = 0
        var reads = 0
        var size: Int64 { Int64(bytes.count) }
        var name: String { "the test's clip" }

        init(_ bytes: [UInt8], budget: Int = .max, delay: Double = 0) {
            self.bytes = bytes
            self.budget = budget
            self.delay = delay
        }

        func read(at offset: Int64, count: Int) throws(DarkroomImageError) -> [UInt8] {
            if delay > 0 { usleep(UInt32(delay * 1_000_000)) }
            let range = Int(offset)..<min(bytes.count, Int(offset) + count)
            guard read + range.count <= budget else {
                throw DarkroomImageError(.limitExceeded, "past the test's budget of \(budget) bytes")
            }
            read += range.count
            reads += 1
            return Array(bytes[range])
        }
    }

    /// A 20 s clip (a keyframe a second, its index at the end), made once for the suite.
    static let clip: Result<[UInt8], any Error> = Result {
        let directory = try TemporaryDirectory("isolated-remote-video")
        defer { directory.remove() }
        try FFmpegReference.writeLongClip(to: directory.file("clip.mp4"))
        return try FileBytes.read(directory.file("clip.mp4"), limit: 1 << 30)
    }

    @Test func aVideoReadByRangesDecodesAndProbesInAWorkerAsHere() throws {
        // Given the clip read by ranges, and a decoder isolated by one worker
        let body = try Self.clip.get()
        let pool = try DecodeWorkerPoolTests.pool(workers: 1)
        let isolated = VideoDecoder.imageDecoder.isolated(by: pool)
        let options = DecodeOptions(size: .fit(width: 200, height: 200), pixelFormat: .exactly(.bgra8Premultiplied))
        // When its poster frame and header are read in the worker and here
        let ranges = CountingRanges(body)
        let there = try isolated.decode(ranges: ranges, options: options)
        let readThere = ranges.read
        let here = try VideoDecoder.imageDecoder.decode(ranges: CountingRanges(body), options: options)
        let probed = CountingRanges(body)
        let probe = try isolated.probe(ranges: probed, limits: .default)
        // Then the frame is this process's, pixel for pixel, for a small part of the file
        #expect(PixelCompare.psnr(there.bitmap, here.bitmap) == .infinity && there.probe == here.probe)
        #expect(readThere * 4 < body.count, "\(readThere) of \(body.count) bytes in \(ranges.reads) reads")
        // And the header is this process's, read from a small part too
        #expect(probe == (try VideoDecoder.imageDecoder.probe(ranges: CountingRanges(body), limits: .default)))
        #expect(probe.format == .video && probed.read * 4 < body.count, "\(probed.read) bytes")
        // And the worker did both
        #expect(pool.statistics.decodes == 2 && pool.statistics.workersStarted == 1)
    }

    @Test func aLocalVideosHeaderIsReadInAWorkerAsHere() throws {
        // Given the clip as a local file, and a decoder isolated by one worker
        let directory = try TemporaryDirectory("isolated-video-header")
        defer { directory.remove() }
        try TemporaryDirectory.write(try Self.clip.get(), to: directory.file("clip.mp4"))
        let pool = try DecodeWorkerPoolTests.pool(workers: 1)
        // When its header is read in the worker (the open file handed over) and here
        let there = try VideoDecoder.imageDecoder.isolated(by: pool).probe(fileAt: directory.file("clip.mp4"))
        let here = try VideoDecoder.imageDecoder.probe(fileAt: directory.file("clip.mp4"))
        // Then they are the same, and the worker read it
        #expect(there == here && there.format == .video && abs((there.video?.duration ?? 0) - 20) < 0.1)
        #expect(pool.statistics.decodes == 1)
    }

    @Test func theRangesReadForADecodeCountAgainstItsTimeout() throws {
        // Given the clip read by a reader that takes 0.25 s a read, and a worker given 1 s a request
        let body = try Self.clip.get()
        let slow = CountingRanges(body, delay: 0.25)
        let worker = try WorkerProcess(executable: SamplePhotos.builtExecutable("darkroom-worker"))
        // When its poster frame is decoded there (each range is answered at once by the worker, so no single wait
        // runs out)
        let started = MonotonicClock.seconds()
        let error = #expect(throws: DarkroomImageError.self) {
            try worker.decode(ranges: slow, options: DecodeOptions(), timeout: 1)
        }
        // Then the request ends at its deadline, limit_exceeded, and the worker is killed
        #expect(error?.code == .limitExceeded, "\(String(describing: error))")
        #expect(MonotonicClock.seconds() - started < 3 && !worker.isRunning && slow.reads >= 4)
    }

    @Test func aReadThatFailsIsTheDecodesTypedErrorAndTheWorkerStays() throws {
        // Given the clip read by a reader that may read only 20 KB, and a decoder isolated by one worker
        let body = try Self.clip.get()
        let pool = try DecodeWorkerPoolTests.pool(workers: 1)
        let isolated = VideoDecoder.imageDecoder.isolated(by: pool)
        // When its poster frame is decoded in the worker
        let error = #expect(throws: DarkroomImageError.self) {
            try isolated.decode(ranges: CountingRanges(body, budget: 20_000), options: DecodeOptions())
        }
        // Then the reader's error is the decode's, and the worker carries on: the next decode succeeds in it
        #expect(
            error?.code == .limitExceeded && error?.message.contains("budget") == true, "\(String(describing: error))")
        let frame = try isolated.decode(ranges: CountingRanges(body), options: DecodeOptions(size: .maxPixelSize(64)))
        #expect(frame.bitmap.width == 64)
        #expect(pool.statistics.crashes == 0 && pool.statistics.workersStarted == 1)
    }
}

extension ImageDecoder {
    /// This decoder with its decodes handed to `pool`.
    func isolated(by pool: DecodeWorkerPool) -> ImageDecoder {
        var decoder = self
        decoder.isolation = pool
        return decoder
    }
}
