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
        /// Requests answered by a worker: decodes (images and the decoders' own errors), headers read, and each step
        /// of an animation (its opening, every frame, its closing).
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

    struct State {
        var idle: [WorkerProcess] = []
        var busy = 0
        var statistics = Statistics()
        /// Open animations by the worker that holds them: a worker with any is not retired.
        var animations: [ObjectIdentifier: Int] = [:]
        /// Workers that ended while holding animations: those animations' next steps fail.
        var ended: Set<ObjectIdentifier> = []
        /// Animations released but not yet closed in their worker: closed by the next request that takes it, so
        /// releasing a frame source never blocks (a viewer drops players on its drawing thread).
        var closing: [ObjectIdentifier: [Int]] = [:]
        var nextAnimationID = 1
    }

    let state = Locked(State())
    let slots: DispatchSemaphore
    /// Signalled whenever a worker is given back, for an animation's step waiting for its own worker.
    let returned = NSCondition()

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

    /// Runs `body` with an idle worker (waiting for one when all are busy) and gives the worker back after it.
    func withWorker<Result>(_ body: (WorkerProcess) throws(DarkroomImageError) -> Result)
        throws(DarkroomImageError) -> Result
    {
        try run(body, leased: lease())
    }

    /// Runs `body` with `worker`, leased, after closing the animations released in it since it was last taken, and
    /// ends the lease (with the failure, if any).
    func run<Result>(_ body: (WorkerProcess) throws(DarkroomImageError) -> Result, leased worker: WorkerProcess)
        throws(DarkroomImageError) -> Result
    {
        for id in state.withLock({ $0.closing.removeValue(forKey: ObjectIdentifier(worker)) ?? [] }) {
            // A worker that fails to close is found out by the request itself
            _ = try? worker.exchange(
                WorkerRequest(step: .closeAnimation, animationID: id), timeout: configuration.timeout)
        }
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
    /// `forAnimation` prefers the idle worker holding the fewest animations, and a new worker over one that holds
    /// some while the pool may grow.
    func lease(forAnimation: Bool = false) throws(DarkroomImageError) -> WorkerProcess {
        slots.wait()
        do throws(DarkroomImageError) {
            return try takeWorker(forAnimation: forAnimation)
        } catch {
            slots.signal()
            throw error
        }
    }

    /// Ends a lease: the worker given back (with the failure that ended it, if any), then its slot; an animation's
    /// step waiting for this worker is woken.
    func release(_ worker: WorkerProcess, failure: DarkroomImageError?) {
        giveBack(worker, failure: failure)
        slots.signal()
        returned.lock()
        returned.broadcast()
        returned.unlock()
    }

    /// An idle worker that is still alive, or a new one.
    private func takeWorker(forAnimation: Bool) throws(DarkroomImageError) -> WorkerProcess {
        while let worker = state.withLock({ Self.pick(&$0, forAnimation: forAnimation, cap: configuration.workers) }) {
            if worker.hasExited() {
                state.withLock { $0.statistics.diedIdle += 1 }
                Self.endAnimations(of: worker, state)
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

    /// The idle worker to take (removed from the idle ones), or nil to start one: the last idle one, or for an
    /// animation the one holding the fewest animations (nil when it holds some and fewer than `cap` run).
    private static func pick(_ state: inout State, forAnimation: Bool, cap: Int) -> WorkerProcess? {
        guard forAnimation else { return state.idle.popLast() }
        let held = state.idle.map { state.animations[ObjectIdentifier($0)] ?? 0 }
        guard let index = held.indices.min(by: { held[$0] < held[$1] }) else { return nil }
        if held[index] > 0, state.idle.count + state.busy < cap { return nil }
        return state.idle.remove(at: index)
    }

    /// Marks the animations `worker` holds as ended (it is gone): their next steps fail.
    private static func endAnimations(of worker: WorkerProcess, _ state: Locked<State>) {
        state.withLock { state in
            if state.animations[ObjectIdentifier(worker)] != nil { state.ended.insert(ObjectIdentifier(worker)) }
        }
    }

    /// Returns a worker after a decode: kept while it runs and has decodes left (or holds animations).
    private func giveBack(_ worker: WorkerProcess, failure: DarkroomImageError?) {
        state.withLock { state in
            let key = ObjectIdentifier(worker)
            state.busy -= 1
            if worker.isRunning { state.statistics.decodes += 1 }
            if !worker.isRunning, state.animations[key] != nil { state.ended.insert(key) }
            if !worker.isRunning, let failure {
                if failure.code == .limitExceeded {
                    state.statistics.timeouts += 1
                } else {
                    state.statistics.crashes += 1
                }
            } else if worker.decodeCount >= configuration.decodesPerWorker, state.animations[key] == nil {
                state.statistics.recycled += 1
            } else if worker.isRunning {
                state.idle.append(worker)
                return
            }
            state.closing[key] = nil  // the worker goes, and what it held with it
        }
    }
}
