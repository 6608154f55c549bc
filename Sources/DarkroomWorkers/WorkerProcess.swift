import CDarkroomSandbox
import DarkroomImage
import DarkroomSupport
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// One decode worker process, seen from the parent: started from a worker executable (one that calls
/// ``DecodeWorker/run(decoder:arguments:)``), it decodes one request at a time and is replaced when it fails.
///
/// A decode hands the worker the input in a memory file (one copy of the encoded bytes, never of the pixels), or the
/// descriptor of a file the caller opened (no copy), and writes into an output memory file as large as
/// `DecodeLimits/maxDecodedBytes` (sparse: only the bitmap's pages are touched); then this side copies the bitmap (and
/// the colour profile after it) into a ``Bitmap`` of its own. Both memory files are made once per worker and reused,
/// their pages given back after a decode past a few MiB. A worker that dies during a decode
/// (a crash, a kill, the kernel's CPU limit) gives `.decoderCrashed`; one past `timeout` is killed and gives
/// `.limitExceeded`; either way this process is then finished (``isRunning`` false) and the input is not retried.
///
/// `@unchecked Sendable`, not thread-safe: one caller at a time. ``DecodeWorkerPool`` hands a worker to one decode
/// under its lock and takes it back under the lock, so the mutable state (``decodeCount``, whether it has finished)
/// is only touched by the thread holding it, with the lock's ordering between holders.
package final class WorkerProcess: @unchecked Sendable {
    /// The worker's process id.
    package let pid: pid_t
    private let channel: Int32
    private var finished = false
    /// The decodes this worker answered.
    package private(set) var decodeCount = 0
    /// Where replies are received: one buffer for the worker's life, not one per decode.
    private var replyBuffer = [UInt8](repeating: 0, count: WorkerReply.maxBytes)
    /// The memory file inputs given as bytes are written to, made at the first and kept.
    private var inputMemory: Int32?
    /// The size of what ``inputMemory`` holds.
    private var inputSize = 0
    /// The memory file the worker writes bitmaps into, made at the first decode and kept (a larger one replaces it
    /// when a decode's limit asks for more).
    private var outputMemory: (fd: Int32, capacity: Int)?
    /// The options the worker was last sent, which it keeps: a request with the same options leaves them out.
    private var lastOptions: DecodeOptions?
    /// The decoded-bytes limit of the last request with options: the most a reply's bitmap and profile may fill.
    private var outputCapacity = 0
    /// The most bytes of a memory file's pages kept between decodes; past it they are given back after the decode.
    static let keptBytes = 4 << 20

    /// Starts the worker executable at `path`, confined as `confinement` says, at nice value `niceness`.
    /// - Throws: ``WorkerError`` `.spawnFailed` when the process cannot be started.
    package init(executable path: String, confinement: Confinement = .default, niceness: Int32 = 0)
        throws(WorkerError)
    {
        var pair: [Int32] = [-1, -1]
        let paired = dr_channel_pair(&pair)
        guard paired == 0 else { throw WorkerError(.spawnFailed, "no channel: \(String(cString: strerror(-paired)))") }
        let argument = (try? JSONEncoder().encode(confinement)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
        var child: pid_t = 0
        let spawned = dr_channel_spawn(path, argument, pair[1], &child)
        close(pair[1])
        guard spawned == 0 else {
            close(pair[0])
            throw WorkerError(.spawnFailed, "\(path) could not be started: \(String(cString: strerror(-spawned)))")
        }
        pid = child
        channel = pair[0]
        if niceness > 0 { _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), id_t(child), niceness) }
    }

    deinit {
        close(channel)
        if let inputMemory { close(inputMemory) }
        if let outputMemory { close(outputMemory.fd) }
        if !finished { reap(kill: false) }
    }

    /// Whether the worker can take another request.
    package var isRunning: Bool { !finished }

    /// Whether the worker process has ended while idle (killed, or crashed on its own); it is then reaped.
    package func hasExited() -> Bool {
        guard !finished else { return true }
        var status: Int32 = 0
        guard waitpid(pid, &status, WNOHANG) == pid else { return false }
        finished = true
        return true
    }

    /// Decodes `bytes` in the worker as `options` ask, waiting at most `timeout` seconds.
    /// - Throws: `DarkroomImageError`: what the decode threw in the worker (its code and message), `.decoderCrashed`
    ///   when the worker ended before answering, `.limitExceeded` when it ran past `timeout` (it is then killed),
    ///   `.io`/`.outOfMemory` when the memory files cannot be made.
    package func decode(
        _ bytes: UnsafeRawBufferPointer, options: DecodeOptions, timeout: Double
    ) throws(DarkroomImageError) -> DecodedImage {
        let (input, kind) = try write(bytes)
        defer { releaseLargeInput() }
        return try decode(input: input, kind: kind, length: bytes.count, options: options, timeout: timeout)
    }

    /// Decodes the regular file open at `descriptor` (`length` bytes) in the worker, which reads it where it lies
    /// (see ``decode(_:options:timeout:)``). The caller keeps `descriptor`.
    package func decode(
        file descriptor: Int32, length: Int, options: DecodeOptions, timeout: Double
    ) throws(DarkroomImageError) -> DecodedImage {
        try decode(input: descriptor, kind: .file, length: length, options: options, timeout: timeout)
    }

    /// Decodes the small picture `bytes` carries beside its image in the worker: nil when it has none of the
    /// image's shape (see ``decode(_:options:timeout:)``).
    package func decodeEmbeddedThumbnail(
        _ bytes: UnsafeRawBufferPointer, options: DecodeOptions, timeout: Double
    ) throws(DarkroomImageError) -> DecodedImage? {
        let (input, kind) = try write(bytes)
        defer { releaseLargeInput() }
        let request = WorkerRequest(
            step: .decodeEmbeddedThumbnail, options: options, input: kind, inputLength: bytes.count)
        let reply = try exchange(request, input: input, timeout: timeout)
        return reply.noImage ? nil : try image(reply)
    }

    private func decode(
        input: Int32, kind: WorkerRequest.Input, length: Int, options: DecodeOptions, timeout: Double
    ) throws(DarkroomImageError) -> DecodedImage {
        let request = WorkerRequest(options: options, input: kind, inputLength: length)
        return try image(exchange(request, input: input, timeout: timeout))
    }

    /// The decoded image a reply describes, its bitmap and profile copied out of the output memory file.
    private func image(_ reply: WorkerReply) throws(DarkroomImageError) -> DecodedImage {
        guard let probe = reply.probe else {
            throw DarkroomImageError(.decoderCrashed, "the decode worker described an impossible bitmap")
        }
        let output = try self.output(reply, allocate: Bitmap.allocateOnHeap)
        var image = DecodedImage(
            bitmap: output.bitmap, probe: probe, shrinkDenominator: reply.shrinkDenominator,
            colorProfile: output.profile, convertedToSRGB: reply.convertedToSRGB, colorProblem: reply.colorProblem)
        image.usedEmbeddedThumbnail = reply.usedEmbeddedThumbnail
        return image
    }

    /// Makes the HDR thumbnail `request` asks for from `bytes` in the worker, waiting at most `timeout` seconds: the
    /// encoded file, copied out of the output memory file, or nil when the output declined the source.
    /// - Throws: `DarkroomImageError` as ``decode(_:options:timeout:)``.
    package func encodeHDRThumbnail(
        _ bytes: UnsafeRawBufferPointer, _ request: HDRThumbnailRequest, timeout: Double
    ) throws(DarkroomImageError) -> [UInt8]? {
        let (input, kind) = try write(bytes)
        defer { releaseLargeInput() }
        var message = WorkerRequest(step: .encodeHDR, options: request.options, input: kind, inputLength: bytes.count)
        message.hdrOutput = request.output
        message.encode = request.encode
        let reply = try exchange(message, input: input, timeout: timeout)
        guard let length = reply.encodedLength else { return nil }
        return try encodedFile(length: length)
    }

    /// The `length` bytes of an encoded file at the start of the output memory file, copied out; checked against
    /// the output's size first (the length is a possibly compromised process's).
    private func encodedFile(length: Int) throws(DarkroomImageError) -> [UInt8] {
        guard length > 0, length <= outputCapacity else {
            throw DarkroomImageError(.decoderCrashed, "the decode worker described an impossible encoded file")
        }
        return try readOutput(length, "encoded file") { [UInt8](UnsafeRawBufferPointer(start: $0, count: length)) }
    }

    /// Maps the first `length` bytes of the output memory file (what a reply says the worker wrote, already checked
    /// against the output's capacity), runs `read` over them, and gives a large output's pages back after.
    private func readOutput<Result>(_ length: Int, _ what: String, _ read: (UnsafeRawPointer) -> Result)
        throws(DarkroomImageError) -> Result
    {
        guard let output = outputMemory?.fd else {
            throw DarkroomImageError(.decoderCrashed, "the decode worker described a \(what) it had nowhere to write")
        }
        var status = stat()
        guard fstat(output, &status) == 0, Int(status.st_size) >= length,
            let source = mmap(nil, length, PROT_READ, MAP_SHARED, output, 0), source != MAP_FAILED
        else { throw DarkroomImageError(.io, "the decode worker's \(what) could not be mapped") }
        defer {
            munmap(source, length)
            if length > Self.keptBytes { _ = dr_channel_release_memory(output, length) }
        }
        return read(source)
    }

    /// `bytes` written to the kept input memory file (made at the first call): its descriptor, and how a request
    /// names it.
    func write(_ bytes: UnsafeRawBufferPointer) throws(DarkroomImageError) -> (Int32, WorkerRequest.Input) {
        guard !finished else { throw DarkroomImageError(.decoderCrashed, "the decode worker has ended") }
        let isNew = inputMemory == nil
        if isNew { inputMemory = try Self.memoryFile("darkroom-input") }
        let input = inputMemory!
        guard ftruncate(input, off_t(bytes.count)) == 0, POSIXIO.write(input, bytes, at: 0) else {
            throw DarkroomImageError(.io, "the input could not be written for the worker")
        }
        inputSize = bytes.count
        return (input, isNew ? .newMemory : .keptMemory)
    }

    /// Gives back the pages of a large input left in the input memory file, once the worker has done with it (after
    /// a decode, or an animation whose worker read it until its frames were released); a small one stays for the
    /// next input to write over.
    func releaseLargeInput() {
        guard let inputMemory, inputSize > Self.keptBytes else { return }
        _ = ftruncate(inputMemory, 0)
        inputSize = 0
    }

    /// Sends `request` (with `input`'s descriptor when the request hands one over, and the output memory file when
    /// it is new) and waits at most `timeout` seconds for the reply. The output file is made (or replaced by a larger
    /// one) for the request's options' decoded-bytes limit, and options equal to the worker's last are left out. A
    /// worker reading its input by ranges asks for each on the way: `ranges` reads it here and it is handed over in
    /// the input memory file (a worker that asks for a range of anything else broke the protocol).
    /// - Throws: `DarkroomImageError`: the worker's own failure, `.decoderCrashed` when it ended or answered what is
    ///   not a reply, `.limitExceeded` past `timeout`; the worker is finished by all but the first.
    func exchange(
        _ request: WorkerRequest, input: Int32? = nil, timeout: Double, ranges: (any ByteRangeReading)? = nil
    ) throws(DarkroomImageError) -> WorkerReply {
        guard !finished else { throw DarkroomImageError(.decoderCrashed, "the decode worker has ended") }
        var request = request
        let options = request.options
        var descriptors: [Int32] = []
        if let input, request.input == .file || request.input == .newMemory { descriptors.append(input) }
        if let options {
            let capacity = max(1, options.limits.maxDecodedBytes)
            if outputMemory == nil || outputMemory!.capacity < capacity {
                if let old = outputMemory { close(old.fd) }
                outputMemory = nil
                outputMemory = (try Self.outputMemoryFile(size: capacity), capacity)
                request.newOutput = true
                descriptors.append(outputMemory!.fd)
            }
            request.outputCapacity = capacity
            outputCapacity = capacity
            if options == lastOptions { request.options = nil }
        } else if let outputMemory {
            // A step of an animation opened earlier: the whole output is its to fill, whatever came between
            request.outputCapacity = outputMemory.capacity
            outputCapacity = outputMemory.capacity
        }
        try send(request, descriptors: descriptors)
        if let options { lastOptions = options }
        // One deadline for the whole request, the ranges read for it included: a worker that keeps asking for
        // ranges cannot outlast it
        let deadline = MonotonicClock.seconds() + timeout
        while true {
            let reply = try receive(timeout: deadline - MonotonicClock.seconds(), limit: timeout)
            guard let wanted = reply.rangeWanted else {
                decodeCount += 1
                if let failure = reply.failure {
                    throw DarkroomImageError(
                        DarkroomImageError.Code(rawValue: failure.code) ?? .corrupt, failure.message)
                }
                return reply
            }
            guard MonotonicClock.seconds() < deadline else {
                reap(kill: true)
                throw DarkroomImageError(
                    .limitExceeded, "the decode ran past its \(timeout) s in the worker, which was killed")
            }
            try serve(wanted, from: ranges)
        }
    }

    /// Reads the range a worker asked for with `ranges` and hands it over in the input memory file (or the read's
    /// failure). The ask is a possibly compromised process's: a range outside the file, larger than a read may be,
    /// or of an input not read by ranges ends the worker.
    private func serve(_ wanted: WorkerReply.RangeWanted, from ranges: (any ByteRangeReading)?)
        throws(DarkroomImageError)
    {
        guard let ranges, let inputMemory, wanted.offset >= 0, wanted.offset < ranges.size, wanted.count > 0,
            wanted.count <= WorkerReply.maxRangeBytes
        else {
            reap(kill: true)
            throw DarkroomImageError(.decoderCrashed, "the decode worker asked for a range it may not; it was killed")
        }
        var answer = WorkerRequest(step: .rangeBytes)
        do throws(DarkroomImageError) {
            let bytes = try ranges.read(at: wanted.offset, count: wanted.count)
            guard bytes.count <= wanted.count else {
                throw DarkroomImageError(.io, "\(ranges.name) gave more bytes than were asked for")
            }
            let written = bytes.withUnsafeBytes { raw in
                ftruncate(inputMemory, off_t(raw.count)) == 0 && POSIXIO.write(inputMemory, raw, at: 0)
            }
            guard written else { throw DarkroomImageError(.io, "the range could not be written for the worker") }
            inputSize = bytes.count
            answer.inputLength = bytes.count
        } catch {
            answer.rangeFailure = .init(code: error.code.rawValue, message: error.message)
        }
        try send(answer, descriptors: [])
    }

    /// Sends one message with `descriptors`.
    private func send(_ request: WorkerRequest, descriptors: [Int32]) throws(DarkroomImageError) {
        guard let encoded = try? JSONEncoder().encode(request) else {
            throw DarkroomImageError(.invalidArgument, "the decode options could not be encoded for the worker")
        }
        let sent = [UInt8](encoded).withUnsafeBytes { message in
            dr_channel_send(channel, message.baseAddress, message.count, descriptors, Int32(descriptors.count))
        }
        guard sent == 0 else { throw ended("before it took the request") }
    }

    /// The worker's next message, waiting at most `timeout` seconds (what is left of the request's `limit`).
    private func receive(timeout: Double, limit: Double) throws(DarkroomImageError) -> WorkerReply {
        var fds: [Int32] = [-1]
        var count: Int32 = 0
        let milliseconds = Int32(clamping: Int((max(0, timeout) * 1000).rounded(.up)))
        let length = dr_channel_receive(channel, &replyBuffer, replyBuffer.count, &fds, 1, &count, milliseconds)
        for fd in fds.prefix(Int(count)) { close(fd) }
        if length == -Int(ETIMEDOUT) {
            reap(kill: true)
            throw DarkroomImageError(
                .limitExceeded, "the decode ran past its \(limit) s in the worker, which was killed")
        }
        guard length > 0 else { throw ended("during the decode") }
        guard let reply = try? JSONDecoder().decode(WorkerReply.self, from: Data(replyBuffer[..<length])) else {
            reap(kill: true)
            throw DarkroomImageError(.decoderCrashed, "the decode worker answered what is not a reply; it was killed")
        }
        return reply
    }

    /// The file `ranges` reads (a remote video) decoded in the worker, which asks for each range it needs; they are
    /// read here and handed over through the input memory file, at most ``WorkerReply/maxRangeBytes`` at a time.
    /// - Throws: `DarkroomImageError` as ``decode(_:options:timeout:)``, and what the reads throw.
    package func decode(ranges: any ByteRangeReading, options: DecodeOptions, timeout: Double)
        throws(DarkroomImageError) -> DecodedImage
    {
        try image(readingRanges(ranges, step: .decode, options: options, timeout: timeout))
    }

    /// The header of the file `ranges` reads, read in the worker as ``decode(ranges:options:timeout:)`` reads it.
    package func probe(ranges: any ByteRangeReading, limits: DecodeLimits, timeout: Double)
        throws(DarkroomImageError) -> ImageProbe
    {
        try header(of: readingRanges(ranges, step: .probe, options: DecodeOptions(limits: limits), timeout: timeout))
    }

    /// The header of the video at `range` of the regular file open at `descriptor`, read in the worker by ranges of
    /// the file. The caller keeps `descriptor`.
    package func probe(file descriptor: Int32, range: Range<Int64>, limits: DecodeLimits, timeout: Double)
        throws(DarkroomImageError) -> ImageProbe
    {
        var request = WorkerRequest(
            step: .probe, options: DecodeOptions(limits: limits), input: .file, inputLength: Int(range.count))
        request.clipOffset = range.lowerBound
        return try header(of: exchange(request, input: descriptor, timeout: timeout))
    }

    /// The header a probe's reply carries.
    private func header(of reply: WorkerReply) throws(DarkroomImageError) -> ImageProbe {
        guard let probe = reply.probe else {
            throw DarkroomImageError(.decoderCrashed, "the decode worker sent no header")
        }
        return probe
    }

    /// One request over a file read by ranges, its input memory file ready for the ranges.
    private func readingRanges(
        _ ranges: any ByteRangeReading, step: WorkerRequest.Step, options: DecodeOptions, timeout: Double
    ) throws(DarkroomImageError) -> WorkerReply {
        guard ranges.size > 0 else { throw DarkroomImageError(.empty, "\(ranges.name) is empty") }
        let (memory, kind) = try write(UnsafeRawBufferPointer(start: nil, count: 0))
        defer { releaseLargeInput() }
        var request = WorkerRequest(
            step: step, options: options, input: kind, inputLength: Int(clamping: ranges.size))
        request.readsRanges = true
        return try exchange(request, input: memory, timeout: timeout, ranges: ranges)
    }

    /// The bitmap a reply describes, copied out of the output memory file into memory from `allocate`, and the
    /// colour profile after it; a large bitmap's pages are then given back (a thumbnail's stay for the next decode
    /// to write over). The reply is a possibly compromised process's: every size in it is checked, without
    /// arithmetic that could trap, before anything is mapped, and the profile's summary is the worker's (no parser
    /// here reads the profile).
    func output(_ reply: WorkerReply, allocate: BitmapAllocator) throws(DarkroomImageError) -> (
        bitmap: Bitmap, profile: ColorProfile?
    ) {
        let capacity = outputCapacity
        let rowBytes = reply.width.multipliedReportingOverflow(by: reply.format.bytesPerPixel)
        let size = reply.bytesPerRow.multipliedReportingOverflow(by: reply.height)
        let mapped = size.partialValue.addingReportingOverflow(reply.colorProfileLength)
        guard reply.width > 0, reply.height > 0, reply.colorProfileLength >= 0,
            !rowBytes.overflow, !size.overflow, !mapped.overflow, reply.bytesPerRow >= rowBytes.partialValue,
            mapped.partialValue <= capacity, reply.colorProfileLength == 0 || reply.colorProfileSummary != nil
        else { throw DarkroomImageError(.decoderCrashed, "the decode worker described an impossible bitmap") }
        let bitmap = try Bitmap.allocate(reply.width, reply.height, reply.format, reply.isOpaque, using: allocate)
        let profile = try readOutput(mapped.partialValue, "bitmap") { source -> ColorProfile? in
            for y in 0..<reply.height {
                bitmap.row(y).copyMemory(from: source + y * reply.bytesPerRow, byteCount: rowBytes.partialValue)
            }
            guard let summary = reply.colorProfileSummary, reply.colorProfileLength > 0 else { return nil }
            let data = UnsafeRawBufferPointer(start: source + size.partialValue, count: reply.colorProfileLength)
            return ColorProfile(data: [UInt8](data), summary: summary)
        }
        return (bitmap, profile)
    }

    /// Kills the worker (one that broke the protocol) and waits for it; it is then finished.
    func terminate() {
        guard !finished else { return }
        reap(kill: true)
    }

    /// The worker ended (or broke its channel): reaped, and reported with how it ended.
    private func ended(_ when: String) -> DarkroomImageError {
        let status = reap(kill: true)
        let how =
            status.map { (($0 & 0x7f) != 0) ? "signal \($0 & 0x7f)" : "exit status \(($0 >> 8) & 0xff)" } ?? "unknown"
        return DarkroomImageError(.decoderCrashed, "the decode worker ended \(when) (\(how))")
    }

    /// Kills (when asked) and waits for the worker; its wait status.
    @discardableResult
    private func reap(kill: Bool) -> Int32? {
        finished = true
        if kill { _ = Glibc.kill(pid, SIGKILL) }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            if errno != EINTR { return nil }
        }
        return status
    }

    /// A new, empty memory file.
    /// A new memory file holding `bytes`: an animation's own input, which the worker maps for as long as the
    /// animation is open (the caller closes its descriptor once the worker has it).
    static func memoryFile(holding bytes: UnsafeRawBufferPointer) throws(DarkroomImageError) -> Int32 {
        let fd = try memoryFile("darkroom-animation")
        guard ftruncate(fd, off_t(bytes.count)) == 0, POSIXIO.write(fd, bytes, at: 0) else {
            close(fd)
            throw DarkroomImageError(.io, "the animation could not be written for the worker")
        }
        return fd
    }

    private static func memoryFile(_ name: String) throws(DarkroomImageError) -> Int32 {
        let fd = dr_channel_memory_file(name)
        guard fd >= 0 else {
            throw DarkroomImageError(.outOfMemory, "no memory file: \(String(cString: strerror(-fd)))")
        }
        return fd
    }

    /// The output memory file, `size` bytes (sparse) and sealed at that size: this process maps it to copy a bitmap
    /// out, and a compromised worker that shrank it under that mapping would fault this process, not itself.
    static func outputMemoryFile(size: Int) throws(DarkroomImageError) -> Int32 {
        let fd = dr_channel_sealed_memory_file("darkroom-output", size)
        guard fd >= 0 else {
            throw DarkroomImageError(
                .outOfMemory, "no output memory file of \(size) bytes: \(String(cString: strerror(-fd)))")
        }
        return fd
    }
}
