import DarkroomImage
import DarkroomSupport
import Dispatch
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Long-lived, confined decode workers shared by the threads that decode: the cost of a process and its
/// confinement is paid once per worker, not once per image.
///
/// ``decode(_:options:)`` takes an idle worker (starting one while fewer than ``Configuration/workers`` run; else it
/// waits for one), decodes in it and gives it back. A worker found dead while idle is replaced before any request
/// reaches it; one that dies or overruns during a decode costs that request its typed error (`.decoderCrashed`,
/// `.limitExceeded`), is not given the input again, and is replaced by the next request that needs a worker. A worker
/// is retired after ``Configuration/decodesPerWorker`` decodes, so what a decoder leaks or fragments does not
/// accumulate. Blocking: call it on a pipeline thread, never on Swift's cooperative pool. Thread-safe.
public final class DecodeWorkerPool: DecodeIsolation {
    /// How the pool runs its workers.
    public struct Configuration: Sendable, Hashable {
        /// The worker executable: by default `darkroom-worker` beside the running executable.
        public var executable: String
        /// The most workers running at once (and so decodes in flight). Default: the number of active cores.
        public var workers: Int
        /// Decodes after which a worker is retired and replaced. Default 1,000.
        public var decodesPerWorker: Int
        /// The longest a decode may take in a worker before it is killed, in seconds. Default 30.
        public var timeout: Double
        /// How each worker is confined.
        public var confinement: Confinement
        /// The nice value workers run at (0…19): a program whose decoding threads yield to its drawing thread runs its
        /// workers as nice. Default 0.
        public var niceness: Int32 = 0

        /// Creates a configuration; omitted values take their documented defaults.
        public init(
            executable: String = Configuration.executableBesideThisOne(),
            workers: Int = ProcessInfo.processInfo
                .activeProcessorCount, decodesPerWorker: Int = 1000, timeout: Double = 30,
            confinement: Confinement = .default
        ) {
            self.executable = executable
            self.workers = max(1, workers)
            self.decodesPerWorker = max(1, decodesPerWorker)
            self.timeout = timeout
            self.confinement = confinement
        }

        /// Checks that ``executable`` is an executable file: a program that decodes in workers calls this at start,
        /// so a missing worker is one clear error then, not a failure of every decode (and never a silent fall-back
        /// to decoding unconfined). One `access` call.
        /// - Throws: ``WorkerError`` `.executableMissing`, naming the file and the ways out.
        public func checkExecutable() throws(WorkerError) {
            guard !FileManager.default.isExecutableFile(atPath: executable) else { return }
            throw WorkerError(
                .executableMissing,
                "the decode worker \(executable) is missing: build it beside this program (make release), or decode "
                    + "in this process (--in-process)")
        }

        /// `darkroom-worker` in the folder of the running executable.
        public static func executableBesideThisOne() -> String {
            let me = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? ""
            return (me as NSString).deletingLastPathComponent + "/darkroom-worker"
        }
    }

    /// What the pool has done, for metrics and health checks.
    public struct Statistics: Sendable, Hashable, Codable {
        /// Workers alive now (idle or decoding).
        public var workersRunning = 0
        /// Decodes in workers now.
        public var decodesRunning = 0
        /// Workers started (the first ones, replacements and recycled ones).
        public var workersStarted = 0
        /// Decodes answered by a worker (images and the decoders' own errors).
        public var decodes = 0
        /// Workers that ended during a decode (`decoder_crashed`).
        public var crashes = 0
        /// Decodes that ran past the timeout (their worker killed).
        public var timeouts = 0
        /// Workers retired after their number of decodes.
        public var recycled = 0
        /// Workers found dead while idle, replaced before any request reached them.
        public var diedIdle = 0

        /// No work done yet.
        public init() {}
    }

    /// The pool's configuration.
    public let configuration: Configuration

    private struct State {
        var idle: [WorkerProcess] = []
        var busy = 0
        var statistics = Statistics()
    }

    private let state = Locked(State())
    private let slots: DispatchSemaphore

    /// Creates a pool; no worker starts until the first decode.
    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
        slots = DispatchSemaphore(value: configuration.workers)
    }

    /// What the pool has done so far.
    public var statistics: Statistics {
        state.withLock {
            var statistics = $0.statistics
            statistics.workersRunning = $0.idle.count + $0.busy
            statistics.decodesRunning = $0.busy
            return statistics
        }
    }

    /// Starts every worker the configuration allows now, so a batch's first decodes do not wait for them: a worker
    /// loads its libraries and confines itself while the caller goes on (the spawn itself takes little of this
    /// thread). A worker that cannot start is left to the first decode that needs one, which reports it.
    public func prestart() {
        let missing = state.withLock { configuration.workers - $0.idle.count - $0.busy }
        var started: [WorkerProcess] = []
        for _ in 0..<max(0, missing) {
            guard let worker = try? makeWorker() else { break }
            started.append(worker)
        }
        state.withLock {
            $0.idle += started
            $0.statistics.workersStarted += started.count
        }
    }

    /// The peak resident memory of each idle worker so far, in bytes (`VmHWM` of `/proc/PID/status`): what one
    /// worker costs at its peak, for benchmarks and health checks. One small file read per worker.
    public func workersPeakRSS() -> [Int] {
        idlePIDs.compactMap(ProcessStats.peakRSSBytes(ofProcess:))
    }

    /// The process ids of the idle workers (tests reach into them).
    var idlePIDs: [pid_t] { state.withLock { $0.idle.map(\.pid) } }

    /// Decodes `bytes` as `options` ask in a worker (see the type's summary): one copy of the bytes into a memory
    /// file, one of the bitmap out of the worker's. Blocking.
    /// - Throws: `DarkroomImageError`: the decoder's own error, `.decoderCrashed` when the worker ended (or could not
    ///   start), `.limitExceeded` when the decode ran past ``Configuration/timeout``.
    public func decode(_ bytes: UnsafeRawBufferPointer, options: DecodeOptions) throws(DarkroomImageError)
        -> DecodedImage
    {
        try withWorker { worker throws(DarkroomImageError) in
            try worker.decode(bytes, options: options, timeout: configuration.timeout)
        }
    }

    /// Decodes the regular file open at `descriptor` (`length` bytes) in a worker, which reads it where it lies:
    /// mapped, a video by ranges as its decoder asks; never copied in this process. Blocking. The caller keeps
    /// `descriptor`.
    /// - Throws: `DarkroomImageError` as ``decode(_:options:)``.
    public func decode(file descriptor: Int32, length: Int, options: DecodeOptions) throws(DarkroomImageError)
        -> DecodedImage
    {
        try withWorker { worker throws(DarkroomImageError) in
            try worker.decode(file: descriptor, length: length, options: options, timeout: configuration.timeout)
        }
    }

    /// Decodes the file `ranges` reads where it lies (a remote video) in a worker, which can reach no network: each
    /// range its decoder asks for is read here, on the calling thread, and handed over through memory. Blocking as
    /// the reads are.
    /// - Throws: `DarkroomImageError` as ``decode(_:options:)``, and what the reads throw.
    public func decode(ranges: any ByteRangeReading, options: DecodeOptions) throws(DarkroomImageError)
        -> DecodedImage
    {
        try withWorker { worker throws(DarkroomImageError) in
            try worker.decode(ranges: ranges, options: options, timeout: configuration.timeout)
        }
    }

    /// Reads the header of the file `ranges` reads (a remote video's container) in a worker, the ranges handed over
    /// as ``decode(ranges:options:)`` hands them. Blocking as the reads are.
    /// - Throws: `DarkroomImageError` as ``decode(_:options:)``, and what the reads throw.
    public func probe(ranges: any ByteRangeReading, limits: DecodeLimits) throws(DarkroomImageError) -> ImageProbe {
        try withWorker { worker throws(DarkroomImageError) in
            try worker.probe(ranges: ranges, limits: limits, timeout: configuration.timeout)
        }
    }

    /// Reads the header of the video at `range` of the regular file open at `descriptor` in a worker, which reads
    /// the file by ranges itself. The caller keeps `descriptor`. Blocking.
    /// - Throws: `DarkroomImageError` as ``decode(_:options:)``.
    public func probe(file descriptor: Int32, range: Range<Int64>, limits: DecodeLimits) throws(DarkroomImageError)
        -> ImageProbe
    {
        try withWorker { worker throws(DarkroomImageError) in
            try worker.probe(file: descriptor, range: range, limits: limits, timeout: configuration.timeout)
        }
    }

    /// Decodes the small picture `bytes` carries beside its image (an EXIF or HEIF thumbnail) in a worker: nil when
    /// it has none of the image's shape. One copy of the bytes in, one of the bitmap out. Blocking.
    /// - Throws: `DarkroomImageError` as ``decode(_:options:)``.
    public func decodeEmbeddedThumbnail(_ bytes: UnsafeRawBufferPointer, options: DecodeOptions)
        throws(DarkroomImageError) -> DecodedImage?
    {
        try withWorker { worker throws(DarkroomImageError) in
            try worker.decodeEmbeddedThumbnail(bytes, options: options, timeout: configuration.timeout)
        }
    }

    /// The frames of the animation in `bytes`, made in a worker at `options`' size, at most `frameLimit` of them:
    /// the worker opens the animation now (its limits and header checked there) and makes each frame when asked.
    /// The source holds its worker, and so one of ``Configuration/workers`` slots, until it is released: a caller
    /// releases each before opening the next. Blocking.
    /// - Throws: `DarkroomImageError` as ``decode(_:options:)``, and the animation decoder's own errors.
    public func animation(_ bytes: UnsafeRawBufferPointer, options: DecodeOptions, frameLimit: Int?)
        throws(DarkroomImageError) -> any AnimationFrameSource
    {
        try openAnimation { worker throws(DarkroomImageError) in
            let (input, kind) = try worker.write(bytes)
            return try worker.exchange(
                WorkerRequest(
                    step: .openAnimation, options: options, input: kind, inputLength: bytes.count,
                    frameLimit: frameLimit), input: input, timeout: configuration.timeout)
        }
    }

    /// The frames of the animation in the regular file open at `descriptor` (`length` bytes), made in a worker
    /// that reads the file itself (see ``animation(_:options:frameLimit:)``). The caller keeps `descriptor`.
    public func animation(file descriptor: Int32, length: Int, options: DecodeOptions, frameLimit: Int?)
        throws(DarkroomImageError) -> any AnimationFrameSource
    {
        try openAnimation { worker throws(DarkroomImageError) in
            try worker.exchange(
                WorkerRequest(
                    step: .openAnimation, options: options, input: .file, inputLength: length, frameLimit: frameLimit
                ), input: descriptor, timeout: configuration.timeout)
        }
    }

    /// The motion preview of the clip at `range` of the regular file open at `descriptor`, made in a worker that
    /// reads the file by ranges (the clip found by the caller, from headers): the worker opens the video now and
    /// decodes each frame when asked, holding a slot as an animation does. The caller keeps `descriptor`. Blocking.
    /// - Throws: `DarkroomImageError` as ``decode(_:options:)``, and the video decoder's own errors.
    public func motion(file descriptor: Int32, range: Range<Int64>, options: DecodeOptions, preview: MotionPreview)
        throws(DarkroomImageError) -> any AnimationFrameSource
    {
        try openAnimation { worker throws(DarkroomImageError) in
            var request = WorkerRequest(
                step: .openMotion, options: options, input: .file, inputLength: Int(range.count))
            request.preview = preview
            request.clipOffset = range.lowerBound
            return try worker.exchange(request, input: descriptor, timeout: configuration.timeout)
        }
    }

    /// Makes the HDR thumbnail `request` asks for from `bytes` in a worker: one copy of the bytes into a memory file,
    /// one of the encoded file out of the worker's. Blocking.
    /// - Returns: the encoded file, or nil when the output declines the source.
    /// - Throws: `DarkroomImageError` as ``decode(_:options:)``, and the encoder's own errors.
    public func encodeHDRThumbnail(_ bytes: UnsafeRawBufferPointer, _ request: HDRThumbnailRequest)
        throws(DarkroomImageError) -> [UInt8]?
    {
        try withWorker { worker throws(DarkroomImageError) in
            try worker.encodeHDRThumbnail(bytes, request, timeout: configuration.timeout)
        }
    }

    /// Takes a worker, opens an animation in it with `open`, and hands it to the frame source, which gives it back
    /// when it goes (or gives it back at once when opening fails).
    private func openAnimation(_ open: (WorkerProcess) throws(DarkroomImageError) -> WorkerReply)
        throws(DarkroomImageError) -> any AnimationFrameSource
    {
        let worker = try lease()
        do throws(DarkroomImageError) {
            guard let header = try open(worker).animation else {
                worker.terminate()
                throw DarkroomImageError(.decoderCrashed, "the decode worker opened no animation")
            }
            return WorkerAnimation(worker: worker, header: header, timeout: configuration.timeout) {
                [self] worker, failure in release(worker, failure: failure)
            }
        } catch {
            release(worker, failure: error)
            throw error
        }
    }

    /// Runs `body` with an idle worker (waiting for one when all are busy) and gives the worker back after it.
    private func withWorker<Result>(_ body: (WorkerProcess) throws(DarkroomImageError) -> Result)
        throws(DarkroomImageError) -> Result
    {
        let worker = try lease()
        do throws(DarkroomImageError) {
            let result = try body(worker)
            release(worker, failure: nil)
            return result
        } catch {
            release(worker, failure: error)
            throw error
        }
    }

    /// A slot and a worker for it: waits while every slot is taken. Each lease ends with one ``release(_:failure:)``.
    private func lease() throws(DarkroomImageError) -> WorkerProcess {
        slots.wait()
        do throws(DarkroomImageError) {
            return try takeWorker()
        } catch {
            slots.signal()
            throw error
        }
    }

    /// Ends a lease: the worker given back (with the failure that ended it, if any), then its slot.
    private func release(_ worker: WorkerProcess, failure: DarkroomImageError?) {
        giveBack(worker, failure: failure)
        slots.signal()
    }

    /// An idle worker that is still alive, or a new one.
    private func takeWorker() throws(DarkroomImageError) -> WorkerProcess {
        while let worker = state.withLock({ $0.idle.popLast() }) {
            if worker.hasExited() {
                state.withLock { $0.statistics.diedIdle += 1 }
                continue
            }
            state.withLock { $0.busy += 1 }
            return worker
        }
        do throws(WorkerError) {
            let worker = try makeWorker()
            state.withLock {
                $0.statistics.workersStarted += 1
                $0.busy += 1
            }
            return worker
        } catch {
            throw DarkroomImageError(.decoderCrashed, "no decode worker could be started: \(error.message)")
        }
    }

    /// A new worker process as the configuration says.
    private func makeWorker() throws(WorkerError) -> WorkerProcess {
        try WorkerProcess(
            executable: configuration.executable, confinement: configuration.confinement,
            niceness: configuration.niceness)
    }

    /// Returns a worker after a decode: kept while it runs and has decodes left.
    private func giveBack(_ worker: WorkerProcess, failure: DarkroomImageError?) {
        state.withLock { state in
            state.busy -= 1
            if worker.isRunning { state.statistics.decodes += 1 }
            if !worker.isRunning, let failure {
                if failure.code == .limitExceeded {
                    state.statistics.timeouts += 1
                } else {
                    state.statistics.crashes += 1
                }
            } else if worker.decodeCount >= configuration.decodesPerWorker {
                state.statistics.recycled += 1
            } else if worker.isRunning {
                state.idle.append(worker)
            }
        }
    }
}
