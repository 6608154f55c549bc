import DarkroomDesktop
import DarkroomSupport
import Foundation

/// The service's requests and the thumbnails they wait for, in the order a user feels: `foreground` requests before
/// `background` ones and the newest foreground request first (the folder now on screen), each request's files in
/// the order given.
///
/// Each thumbnail (a file at a size) is one item however many requests wait for it: it is made once and every
/// waiter hears of it. A new request from the same caller (a bus connection) for a file that is still waiting takes
/// it over (the caller's older request stops waiting for it: the user has moved on); another caller's request shares
/// it. A dequeued request stops waiting at once, and an item nobody waits for any more is dropped
/// before it starts (one already decoding finishes, tens of milliseconds, and its thumbnail is kept).
///
/// The signals go out through `emit`, called with the lock held so that a request's `Started` (sent as it is
/// queued), `Ready`/`Error` and `Finished` are emitted in that order whatever thread completes its items. `emit` must be quick and must not call
/// back into the queue.
package final class ThumbnailQueue: @unchecked Sendable {
    // @unchecked Sendable: every stored property after init is read and written only with `condition` locked.

    /// A signal of the specification.
    package enum Event: Sendable, Equatable {
        case started(UInt32)
        case ready(UInt32, [String])
        case error(UInt32, [String], ThumbnailerProtocol.ErrorCode, String)
        case finished(UInt32)
    }

    /// One thumbnail to make: the file's canonical path and the size.
    package struct Key: Hashable, Sendable {
        package let path: String
        package let size: DesktopThumbnailCache.Size
    }

    /// How an item ended.
    package enum Result: Sendable {
        case ready
        case failed(ThumbnailerProtocol.ErrorCode, String)
    }

    private struct Item {
        var running = false
        /// The requests waiting (handle → the URI as that request spelled it), in arrival order.
        var waiters: [(handle: UInt32, uri: String)] = []
    }

    private struct Request {
        /// The caller's unique bus name.
        let sender: String
        var keys: [Key] = []
        /// The next of `keys` to look at when taking work.
        var next = 0
        /// Items still owed a signal.
        var remaining = 0
    }

    private let condition = NSCondition()
    private var items: [Key: Item] = [:]
    private var requests: [UInt32: Request] = [:]
    /// Foreground requests, newest last (taken from the end).
    private var foreground: [UInt32] = []
    /// Background requests, oldest first.
    private var background: [UInt32] = []
    private var backgroundStart = 0
    private var nextHandle: UInt32 = 1
    private var running = 0
    private var closed = false
    private var lastActivity = MonotonicClock.seconds()

    private let limits: Limits
    private let emit: @Sendable ([Event]) -> Void

    /// The queue's bounds.
    package struct Limits: Sendable {
        /// URIs one `Queue` call may carry.
        package var urisPerCall: Int
        /// Thumbnails waiting at once, over all requests.
        package var pendingThumbnails: Int
    }

    package init(limits: Limits, emit: @escaping @Sendable ([Event]) -> Void) {
        self.limits = limits
        self.emit = emit
    }

    // MARK: - Calls

    /// A `Queue` call: `files` are the URIs already read (a path, or the error to answer for that URI), in order.
    /// Returns the request's handle.
    /// - Throws: `.limitExceeded` past a limit.
    package func enqueue(
        _ files: [(uri: String, file: Swift.Result<String, Refusal>)], size: DesktopThumbnailCache.Size?,
        flavor: String, foreground isForeground: Bool, replacing old: UInt32, sender: String = ""
    ) throws(ThumbnailServiceError) -> UInt32 {
        guard files.count <= limits.urisPerCall else {
            throw ThumbnailServiceError(
                .limitExceeded, "\(files.count) URIs in one call; at most \(limits.urisPerCall) are taken")
        }
        condition.lock()
        defer { condition.unlock() }
        lastActivity = MonotonicClock.seconds()
        var events: [Event] = []
        if old != 0 { dequeueLocked(old, events: &events) }
        guard items.count + files.count <= limits.pendingThumbnails else {
            emit(events)
            throw ThumbnailServiceError(
                .limitExceeded,
                "\(items.count) thumbnails are waiting; \(files.count) more would pass the limit of "
                    + "\(limits.pendingThumbnails)")
        }
        let handle = nextHandle
        nextHandle = nextHandle == UInt32.max ? 1 : nextHandle + 1
        events.append(.started(handle))
        var request = Request(sender: sender)
        var refused: [(uri: String, refusal: Refusal)] = []
        if let size {
            var seen = Set<String>()
            for (uri, file) in files where seen.insert(uri).inserted {
                switch file {
                case .failure(let refusal): refused.append((uri, refusal))
                case .success(let path):
                    let key = Key(path: path, size: size)
                    takeOver(key, for: handle, from: sender, events: &events)
                    items[key, default: Item()].waiters.append((handle, uri))
                    request.keys.append(key)
                }
            }
        } else {
            refused = files.map { ($0.uri, Refusal(.unsupportedFlavor, "unsupported flavor \"\(flavor)\"")) }
        }
        for group in Self.grouped(refused.map { ($0.uri, $0.refusal.code, $0.refusal.message) }) {
            events.append(.error(handle, group.uris, group.code, group.message))
        }
        request.remaining = request.keys.count
        if request.keys.isEmpty {
            events.append(.finished(handle))
        } else {
            requests[handle] = request
            if isForeground { foreground.append(handle) } else { background.append(handle) }
            condition.broadcast()
        }
        emit(events)
        return handle
    }

    /// Why a URI is answered with an `Error` without being looked at.
    package struct Refusal: Error, Sendable {
        package let code: ThumbnailerProtocol.ErrorCode
        package let message: String
        package init(_ code: ThumbnailerProtocol.ErrorCode, _ message: String) {
            self.code = code
            self.message = message
        }
    }

    /// A `Dequeue` call: the request stops waiting; its `Finished` goes out now. An unknown handle is ignored.
    package func dequeue(_ handle: UInt32) {
        condition.lock()
        defer { condition.unlock() }
        lastActivity = MonotonicClock.seconds()
        var events: [Event] = []
        dequeueLocked(handle, events: &events)
        emit(events)
    }

    // MARK: - Work

    /// The next thumbnail to make, waiting for one; nil once the queue is closed. With `foregroundOnly`, only a
    /// foreground request's (the service's foreground lane, which background work never occupies).
    package func next(foregroundOnly: Bool = false) -> Key? {
        condition.lock()
        defer { condition.unlock() }
        while !closed {
            if let key = takeLocked(foregroundOnly: foregroundOnly) {
                items[key]!.running = true
                running += 1
                return key
            }
            condition.wait()
        }
        return nil
    }

    /// Reports how `key`'s thumbnail ended: every request waiting hears of it.
    package func complete(_ key: Key, _ result: Result) {
        condition.lock()
        defer { condition.unlock() }
        running -= 1
        lastActivity = MonotonicClock.seconds()
        guard let item = items.removeValue(forKey: key) else { return }
        var events: [Event] = []
        for (handle, uri) in item.waiters {
            switch result {
            case .ready: events.append(.ready(handle, [uri]))
            case .failed(let code, let message): events.append(.error(handle, [uri], code, message))
            }
            owed(handle, events: &events)
        }
        emit(events)
    }

    /// Stops handing out work: every request still waiting gets `Error` (shutting down) for what it waits for, then
    /// `Finished`. Workers' ``next()`` returns nil.
    package func close() {
        condition.lock()
        defer { condition.unlock() }
        closed = true
        var events: [Event] = []
        for handle in requests.keys.sorted() {
            let uris = requests[handle]!.keys.compactMap { key in
                items[key]?.waiters.first(where: { $0.handle == handle })?.uri
            }
            if !uris.isEmpty { events.append(.error(handle, uris, .shuttingDown, "the service is stopping")) }
            events.append(.finished(handle))
        }
        requests = [:]
        foreground = []
        background = []
        emit(events)
        condition.broadcast()
    }

    /// Counts a call that is not a request (a cache call) as activity, for ``idleSeconds``.
    package func touch() {
        condition.lock()
        defer { condition.unlock() }
        lastActivity = MonotonicClock.seconds()
    }

    /// Seconds since the last call or completion when nothing is queued or running; nil while busy.
    package var idleSeconds: Double? {
        condition.lock()
        defer { condition.unlock() }
        guard requests.isEmpty, running == 0 else { return nil }
        return MonotonicClock.seconds() - lastActivity
    }

    /// Requests still open and thumbnails waiting or being made.
    package var counts: (requests: Int, thumbnails: Int) {
        condition.lock()
        defer { condition.unlock() }
        return (requests.count, items.count)
    }

    // MARK: - Locked helpers

    /// A waiting item of the same caller's older requests moves to `handle` (the newer request replaces the older
    /// one); other callers' requests, and a running item, are shared.
    private func takeOver(_ key: Key, for handle: UInt32, from sender: String, events: inout [Event]) {
        guard let item = items[key], !item.running else { return }
        let replaced = Set(item.waiters.map(\.handle).filter { $0 != handle && requests[$0]?.sender == sender })
        guard !replaced.isEmpty else { return }
        items[key]!.waiters.removeAll { replaced.contains($0.handle) }
        for (other, _) in item.waiters where replaced.contains(other) {
            owed(other, events: &events)
        }
    }

    /// One item fewer owed to `handle`; `Finished` when it was the last.
    private func owed(_ handle: UInt32, events: inout [Event]) {
        guard var request = requests[handle] else { return }
        request.remaining -= 1
        if request.remaining <= 0 {
            requests[handle] = nil
            events.append(.finished(handle))
        } else {
            requests[handle] = request
        }
    }

    private func dequeueLocked(_ handle: UInt32, events: inout [Event]) {
        guard let request = requests.removeValue(forKey: handle) else { return }
        for key in request.keys {
            guard var item = items[key] else { continue }
            item.waiters.removeAll { $0.handle == handle }
            items[key] = item.waiters.isEmpty && !item.running ? nil : item
        }
        events.append(.finished(handle))
    }

    /// The next waiting item: the newest foreground request's first, else the oldest background request's.
    private func takeLocked(foregroundOnly: Bool) -> Key? {
        while let handle = foreground.last {
            if let key = nextKey(of: handle) { return key }
            foreground.removeLast()
        }
        if foregroundOnly { return nil }
        while backgroundStart < background.count {
            if let key = nextKey(of: background[backgroundStart]) { return key }
            backgroundStart += 1
            if backgroundStart > 1024 && backgroundStart * 2 > background.count {
                background.removeFirst(backgroundStart)
                backgroundStart = 0
            }
        }
        return nil
    }

    /// The next key of a request that waits and is still wanted by it; nil when none is left.
    private func nextKey(of handle: UInt32) -> Key? {
        guard var request = requests[handle] else { return nil }
        defer { requests[handle] = request }
        while request.next < request.keys.count {
            let key = request.keys[request.next]
            request.next += 1
            if let item = items[key], !item.running, item.waiters.contains(where: { $0.handle == handle }) {
                return key
            }
        }
        return nil
    }

    /// Refusals with the same code and message, together (one `Error` signal each group), in first-seen order.
    static func grouped(_ refusals: [(uri: String, code: ThumbnailerProtocol.ErrorCode, message: String)])
        -> [(uris: [String], code: ThumbnailerProtocol.ErrorCode, message: String)]
    {
        var order: [String] = []
        var groups: [String: (uris: [String], code: ThumbnailerProtocol.ErrorCode, message: String)] = [:]
        for (uri, code, message) in refusals {
            let key = "\(code.rawValue) \(message)"
            if groups[key] == nil {
                order.append(key)
                groups[key] = ([], code, message)
            }
            groups[key]!.uris.append(uri)
        }
        return order.map { groups[$0]! }
    }
}
