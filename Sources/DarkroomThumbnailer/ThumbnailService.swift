import CDarkroomBus
import DarkroomDesktop
import DarkroomImage
import DarkroomSupport
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The desktop's thumbnail service (`darkroom thumbnaild`): the Thumbnail Management D-Bus Specification's
/// `org.freedesktop.thumbnails.Thumbnailer1` and `Cache1` on the session bus, in place of tumbler's `tumblerd`.
///
/// One bus thread answers calls and sends signals (sd-bus, through a small C shim); `threads` threads of its own
/// (nice 10) make thumbnails in the queue's order (foreground first, the newest foreground request first, each file
/// once), each with the configured decoder (in confined decode workers when it has them), into the freedesktop.org
/// cache, and one more (normal priority) takes only foreground work, so the folder on screen does not wait for a
/// background decode; one more thread does the cache's moves, copies and clean-ups. A thumbnail already valid is answered without decoding; a
/// file that failed is recorded under `fail/` and not tried again until it changes. Nothing runs on Swift's shared
/// cooperative pool.
///
/// The service ends when ``stop()`` is called, when the bus goes away, or after ``Configuration/idleTimeout``
/// seconds with nothing to do (it gives its names back first, so the bus starts it again for the next call).
public final class ThumbnailService: Sendable {
    /// What the service serves and its limits.
    public struct Configuration: Sendable {
        /// The cache thumbnails are written to.
        public var cache: DesktopThumbnailCache
        /// Decodes each file at its flavor's size (give it decode workers to confine the codecs).
        public var decoder: ImageDecoder
        /// Threads making thumbnails at once, foreground work first, at a lower CPU priority (nice 10) so that a
        /// desktop stays responsive while a large folder is thumbnailed.
        public var threads: Int
        /// The decoder of one more thread that takes only foreground work at normal priority, so that the folder on
        /// screen never waits for a background decode to end; nil: no such thread. Give it decode workers of its
        /// own (one is enough), apart from `decoder`'s, or it waits for theirs.
        public var foregroundDecoder: ImageDecoder?
        /// Seconds with nothing queued, running or called after which the service ends; 0: never.
        public var idleTimeout = Configuration.defaultIdleTimeout
        /// URIs one `Queue` call may carry (a larger call is refused with `LimitsExceeded`).
        public var maxURIsPerCall = Configuration.defaultMaxURIsPerCall
        /// 300 s: a desktop's service is started again by the bus in tens of milliseconds.
        public static let defaultIdleTimeout: Double = 300
        /// 100,000: a folder larger than most in one call; a larger call is refused rather than held.
        public static let defaultMaxURIsPerCall = 100_000
        /// Thumbnails waiting at once over all requests.
        public var maxPendingThumbnails = 1_000_000
        /// The bus's address (`unix:path=…`); nil: the user's session bus.
        public var busAddress: String?

        /// A service writing to `cache` with `decoder` on `threads` threads (default: the active cores).
        public init(cache: DesktopThumbnailCache, decoder: ImageDecoder, threads: Int? = nil) {
            self.cache = cache
            self.decoder = decoder
            self.threads = max(1, threads ?? ProcessStats.activeCores)
        }
    }

    /// What is sent from the bus thread: signals, and the answers to cache calls.
    enum Outgoing: Sendable {
        case event(ThumbnailQueue.Event)
        /// The call (a referenced sd-bus message, as its address) and the error to answer with, if any.
        case reply(UInt, (name: String, message: String)?)
    }

    /// A cache call waiting for the maintenance thread.
    private struct CacheCall: Sendable {
        let operation: dr_bus_cache_operation
        let uris: [String]
        let to: [String]
        let since: UInt32
        let call: UInt
    }

    /// What the service was made with.
    public let configuration: Configuration
    let queue: ThumbnailQueue
    /// The cache's folder, canonical and ending in `/`: a file under it is a thumbnail, never queued.
    private let cacheRoot: String
    private let outbox = Locked<[Outgoing]>([])
    private let cacheCalls = Locked<(calls: [CacheCall], busy: Bool)>(([], false))
    private let cacheCallArrived = NSCondition()
    private let stopping = Locked(false)
    /// Written to wake the bus thread (an eventfd).
    private let wakeFD: Int32
    /// Counts of what the service did: thumbnails decoded, answered from the cache, failed.
    let tally = Locked<[String: Int]>([:])

    /// A service ready to ``run(ready:)``.
    /// - Throws: `.busUnavailable` when no eventfd can be made.
    public init(configuration: Configuration) throws(ThumbnailServiceError) {
        self.configuration = configuration
        cacheRoot = FileURI.canonicalize(configuration.cache.root) + "/"
        let fd = dr_bus_wake_fd()
        guard fd >= 0 else {
            throw ThumbnailServiceError(
                .busUnavailable, "cannot make an eventfd", systemMessage: String(cString: strerror(-fd)))
        }
        wakeFD = fd
        let outbox = outbox
        queue = ThumbnailQueue(
            limits: .init(
                urisPerCall: configuration.maxURIsPerCall, pendingThumbnails: configuration.maxPendingThumbnails)
        ) { events in
            guard !events.isEmpty else { return }
            outbox.withLock { $0 += events.map(Outgoing.event) }
            dr_bus_wake(fd)
        }
    }

    deinit { close(wakeFD) }

    /// Ends ``run(ready:)`` soon (from any thread): requests still waiting get `Error` (shutting down) and
    /// `Finished`.
    public func stop() {
        stopping.withLock { $0 = true }
        wake()
    }

    /// Connects, owns the names and serves until stopped, idle or disconnected. Blocks the calling thread, which
    /// becomes the bus thread.
    /// - Parameter ready: called once the names are owned (with the connection's unique name).
    /// - Throws: `.busUnavailable` when the bus cannot be reached or goes away, `.nameTaken` when another process
    ///   (tumblerd) serves the names.
    public func run(ready: (String) -> Void = { _ in }) throws(ThumbnailServiceError) {
        let context = Unmanaged.passUnretained(self).toOpaque()
        let bus = try BusConnection(address: configuration.busAddress, handlers: Self.handlers(context: context))
        try bus.own(ThumbnailerProtocol.thumbnailerName)
        try bus.own(ThumbnailerProtocol.cacheName)
        let workers = startWorkers()
        let maintenance = DedicatedThread(name: "thumbnaild-cache") { [self] in maintain() }
        ready(bus.uniqueName)
        var failure: ThumbnailServiceError?
        while !stopping.withLock({ $0 }) {
            send(on: bus)
            var wait = Double.infinity
            if configuration.idleTimeout > 0 {
                if let idle = queue.idleSeconds, cacheCalls.withLock({ $0.calls.isEmpty && !$0.busy }) {
                    if idle >= configuration.idleTimeout { break }
                    wait = configuration.idleTimeout - idle
                } else {
                    wait = configuration.idleTimeout
                }
            }
            do { try bus.run(wakeFD: wakeFD, timeoutSeconds: wait) } catch {
                failure = error
                break
            }
        }
        // Names first, so that a call from now on starts a new instance instead of waiting on this one
        bus.release(ThumbnailerProtocol.thumbnailerName)
        bus.release(ThumbnailerProtocol.cacheName)
        queue.close()
        stopping.withLock { $0 = true }
        cacheCallArrived.lock()
        cacheCallArrived.broadcast()
        cacheCallArrived.unlock()
        for worker in workers { worker.wait() }
        maintenance.wait()
        send(on: bus)
        bus.flush()
        if let failure { throw failure }
    }

    // MARK: - The bus thread

    private func wake() { dr_bus_wake(wakeFD) }

    /// Sends what the other threads queued, runs of `Ready` (and of identical `Error`s) for one request merged
    /// into one signal.
    private func send(on bus: BusConnection) {
        let outgoing = outbox.withLock { pending -> [Outgoing] in
            defer { pending = [] }
            return pending
        }
        for item in Self.merged(outgoing) {
            switch item {
            case .event(let event): bus.emit(event)
            case .reply(let call, let error): bus.reply(UnsafeMutableRawPointer(bitPattern: call)!, error: error)
            }
        }
    }

    /// `outgoing` with each run of `Ready`s for one request, and of `Error`s with one code and message, made one
    /// signal (the URIs appended in place: linear in the URIs).
    static func merged(_ outgoing: [Outgoing]) -> [Outgoing] {
        var merged: [Outgoing] = []
        var run: (event: ThumbnailQueue.Event, uris: [String])?
        func flush() {
            guard let (event, uris) = run else { return }
            switch event {
            case .ready(let handle, _): merged.append(.event(.ready(handle, uris)))
            case .error(let handle, _, let code, let message):
                merged.append(.event(.error(handle, uris, code, message)))
            default: merged.append(.event(event))
            }
            run = nil
        }
        for item in outgoing {
            guard case .event(let event) = item else {
                flush()
                merged.append(item)
                continue
            }
            switch event {
            case .ready(let handle, let uris):
                if case .ready(handle, _)? = run?.event {
                    run!.uris += uris
                } else {
                    flush()
                    run = (event, uris)
                }
            case .error(let handle, let uris, let code, let message):
                if case .error(handle, _, code, message)? = run?.event {
                    run!.uris += uris
                } else {
                    flush()
                    run = (event, uris)
                }
            default:
                flush()
                merged.append(item)
            }
        }
        flush()
        return merged
    }

    // MARK: - Calls (on the bus thread)

    /// A `Queue` call, its URIs read here (no file is touched on the bus thread).
    func queue(
        sender: String, uris: [String], mimeTypes: [String], flavor: String, scheduler: String, replacing old: UInt32
    ) throws(ThumbnailServiceError) -> UInt32 {
        guard mimeTypes.count == uris.count else {
            throw ThumbnailServiceError(
                .invalidArgument, "\(uris.count) URIs and \(mimeTypes.count) MIME types: each URI needs its type")
        }
        let size = DesktopThumbnailCache.Size(rawValue: flavor)
        let supported = Self.supportedMIMETypes
        let cacheRoot = cacheRoot
        let files = zip(uris, mimeTypes).map {
            uri, mimeType -> (uri: String, file: Result<String, ThumbnailQueue.Refusal>) in
            (uri, Self.read(uri, mimeType: mimeType, supported: supported, cacheRoot: cacheRoot))
        }
        return try queue.enqueue(
            files, size: size, flavor: flavor, foreground: scheduler == "foreground", replacing: old, sender: sender)
    }

    private static let supportedMIMETypes = Set(ThumbnailerProtocol.mimeTypes)

    /// The canonical path a URI names, or why it is answered with an error at once.
    static func read(_ uri: String, mimeType: String, supported: Set<String>, cacheRoot: String)
        -> Result<String, ThumbnailQueue.Refusal>
    {
        guard let path = FileURI.path(of: uri) else {
            if let colon = uri.firstIndex(of: ":"), uri[..<colon] != "file",
                uri[..<colon].allSatisfy({ $0.isLetter || $0.isNumber || "+-.".contains($0) }), !uri[..<colon].isEmpty
            {
                return .failure(.init(.unsupported, "only file:// URIs are read"))
            }
            return .failure(.init(.invalidFormat, "not a valid file:// URI"))
        }
        if !mimeType.isEmpty, !supported.contains(mimeType) {
            return .failure(.init(.unsupported, "unsupported MIME type \(mimeType)"))
        }
        let canonical = FileURI.canonicalize(path)
        if canonical.hasPrefix(cacheRoot) {
            return .failure(.init(.isThumbnail, "the file is a thumbnail in the cache"))
        }
        return .success(canonical)
    }

    /// A `Cache1` call: handed to the maintenance thread, answered when done.
    func cache(
        _ operation: dr_bus_cache_operation, uris: [String], to: [String], since: UInt32, call: UnsafeMutableRawPointer
    ) throws(ThumbnailServiceError) {
        if operation == DR_BUS_CACHE_MOVE || operation == DR_BUS_CACHE_COPY, uris.count != to.count {
            throw ThumbnailServiceError(
                .invalidArgument, "\(uris.count) source URIs and \(to.count) destination URIs: they must pair up")
        }
        guard uris.count <= configuration.maxURIsPerCall else {
            throw ThumbnailServiceError(
                .limitExceeded, "\(uris.count) URIs in one call; at most \(configuration.maxURIsPerCall) are taken")
        }
        cacheCalls.withLock {
            $0.calls.append(
                CacheCall(operation: operation, uris: uris, to: to, since: since, call: UInt(bitPattern: call)))
        }
        cacheCallArrived.lock()
        cacheCallArrived.signal()
        cacheCallArrived.unlock()
    }

    // MARK: - Worker threads

    private func startWorkers() -> [DedicatedThread] {
        (0..<configuration.threads).map { index in
            DedicatedThread(name: "thumbnaild-\(index)") { [self] in
                let buffer = FileReadBuffer()
                while let key = queue.next() {
                    queue.complete(key, make(key, buffer: buffer))
                }
            }
        }
    }

    /// One thumbnail: looked up, else made; the outcome as the specification reports it.
    func make(_ key: ThumbnailQueue.Key, buffer: FileReadBuffer) -> ThumbnailQueue.Result {
        let outcome = configuration.cache.render(
            key.path, size: key.size, decoder: configuration.decoder, buffer: buffer)
        let result = Self.result(of: outcome)
        tally.withLock { counts in
            switch outcome {
            case .valid: counts["valid", default: 0] += 1
            case .rendered: counts["rendered", default: 0] += 1
            case .knownFailure, .failed, .notSaved: counts["failed", default: 0] += 1
            }
        }
        return result
    }

    /// What the `Ready` or `Error` signal says of an outcome. Messages name no path, so the failures of many files
    /// for one reason travel in one signal.
    static func result(of outcome: DesktopThumbnailCache.Outcome) -> ThumbnailQueue.Result {
        switch outcome {
        case .valid, .rendered: return .ready
        case .knownFailure:
            return .failed(.invalidFormat, "an earlier attempt failed and the file has not changed since")
        case .notSaved(let error):
            return .failed(.saveFailed, "\(error.code.rawValue): the thumbnail cannot be written")
        case .failed(let error):
            switch error.code {
            case .notFound: return .failed(.other, "not_found: the file does not exist")
            case .io: return .failed(.other, "io: the file cannot be read")
            case .empty: return .failed(.noContent, "empty: the file is empty")
            case .unsupportedFormat, .unsupportedFeature: return .failed(.unsupported, error.description)
            case .corrupt, .truncated: return .failed(.invalidFormat, error.description)
            default: return .failed(.other, error.description)
            }
        }
    }

    // MARK: - The maintenance thread

    private func maintain() {
        while true {
            cacheCallArrived.lock()
            var next: CacheCall?
            while true {
                next = cacheCalls.withLock { state -> CacheCall? in
                    guard !state.calls.isEmpty else { return nil }
                    state.busy = true
                    return state.calls.removeFirst()
                }
                if next != nil || stopping.withLock({ $0 }) { break }
                cacheCallArrived.wait()
            }
            cacheCallArrived.unlock()
            guard let call = next else { return }
            let error = perform(call)
            outbox.withLock { $0.append(.reply(call.call, error)) }
            queue.touch()
            cacheCalls.withLock { $0.busy = false }
            wake()
        }
    }

    private func perform(_ call: CacheCall) -> (name: String, message: String)? {
        let cache = configuration.cache
        do {
            switch call.operation {
            case DR_BUS_CACHE_MOVE: try cache.move(from: call.uris, to: call.to)
            case DR_BUS_CACHE_COPY: try cache.copy(from: call.uris, to: call.to)
            case DR_BUS_CACHE_DELETE: cache.delete(uris: call.uris)
            default: cache.cleanup(under: call.uris, since: call.since)
            }
            return nil
        } catch {
            return ("org.freedesktop.DBus.Error.InvalidArgs", error.description)
        }
    }
}
