import DarkroomDesktop
import DarkroomSupport
import Testing

@testable import DarkroomThumbnailer

/// The service's scheduling without a bus: which thumbnail is made next, who hears of it, and in what order the
/// signals go out.
@Suite("Thumbnail queue")
struct ThumbnailQueueTests {
    /// A queue whose signals are recorded.
    final class Recorder: Sendable {
        let events = Locked<[ThumbnailQueue.Event]>([])
        let queue: ThumbnailQueue

        init(urisPerCall: Int = 1000, pending: Int = 10_000) {
            let events = events
            queue = ThumbnailQueue(limits: .init(urisPerCall: urisPerCall, pendingThumbnails: pending)) { new in
                events.withLock { $0 += new }
            }
        }

        /// Queues files named by `names` (paths `/p/NAME`, URIs `file:///p/NAME`) for the caller `sender`.
        func enqueue(
            _ names: [String], foreground: Bool = false, size: DesktopThumbnailCache.Size? = .normal,
            sender: String = ":1.1"
        ) throws -> UInt32 {
            try queue.enqueue(
                names.map { ("file:///p/" + $0, .success("/p/" + $0)) }, size: size, flavor: "custom",
                foreground: foreground, replacing: 0, sender: sender)
        }

        /// Takes and completes `count` thumbnails; returns their file names in the order taken.
        func work(_ count: Int, _ result: ThumbnailQueue.Result = .ready) -> [String] {
            (0..<count).compactMap { _ in
                guard let key = queue.next() else { return nil }
                queue.complete(key, result)
                return String(key.path.dropFirst(3))
            }
        }

        func signals(of handle: UInt32) -> [ThumbnailQueue.Event] {
            events.withLock { all in
                all.filter {
                    switch $0 {
                    case .started(let h), .finished(let h), .ready(let h, _), .error(let h, _, _, _): h == handle
                    }
                }
            }
        }
    }

    @Test("foreground requests go first, the newest first, each in its own order; background ones oldest first")
    func foregroundFirst() throws {
        // Given two background requests and then two foreground ones
        let recorder = Recorder()
        let b1 = try recorder.enqueue(["b1", "b2"])
        let b2 = try recorder.enqueue(["b3"])
        let f1 = try recorder.enqueue(["f1", "f2"], foreground: true)
        let f2 = try recorder.enqueue(["f3", "f4"], foreground: true)
        // When the thumbnails are made one at a time
        let order = recorder.work(7)
        // Then the newest foreground request's files come first, then the older one's, then the background's
        #expect(order == ["f3", "f4", "f1", "f2", "b1", "b2", "b3"])
        // And each request heard Started, a Ready per file in order, then Finished
        #expect(
            recorder.signals(of: f2) == [
                .started(f2), .ready(f2, ["file:///p/f3"]), .ready(f2, ["file:///p/f4"]), .finished(f2),
            ])
        for handle in [b1, b2, f1] { #expect(recorder.signals(of: handle).last == .finished(handle)) }
    }

    @Test("a file two requests want is made once and both hear of it")
    func sharedOnce() throws {
        // Given a file already being made for one request
        let recorder = Recorder()
        let first = try recorder.enqueue(["a", "b"])
        let running = try #require(recorder.queue.next())
        #expect(running.path == "/p/a")
        // When a second request asks for it too, and for a file of its own
        let second = try recorder.enqueue(["a", "c"], foreground: true)
        recorder.queue.complete(running, .ready)
        let rest = recorder.work(2)
        // Then "a" was made once, and both requests got its Ready
        #expect(rest == ["c", "b"])
        #expect(recorder.signals(of: first).contains(.ready(first, ["file:///p/a"])))
        #expect(recorder.signals(of: second).contains(.ready(second, ["file:///p/a"])))
        #expect(recorder.queue.counts == (0, 0))
    }

    @Test("a caller's new request for files still waiting takes them over; its old request finishes without them")
    func newerReplacesOlder() throws {
        // Given a background request for three files, none started
        let recorder = Recorder()
        let old = try recorder.enqueue(["x", "y", "z"])
        // When a foreground request asks for two of them, then for the third
        let new = try recorder.enqueue(["x", "y"], foreground: true)
        #expect(recorder.signals(of: old) == [.started(old)])
        let newest = try recorder.enqueue(["z"], foreground: true)
        // Then the old request has nothing left and is finished at once
        #expect(recorder.signals(of: old) == [.started(old), .finished(old)])
        // And the files are made once each, for the newer requests
        #expect(recorder.work(3) == ["z", "x", "y"])
        #expect(recorder.signals(of: new).filter { if case .ready = $0 { true } else { false } }.count == 2)
        #expect(recorder.signals(of: newest).contains(.ready(newest, ["file:///p/z"])))
        #expect(recorder.queue.counts == (0, 0))
    }

    @Test("another caller's request for the same files shares them; dequeuing one caller's leaves the other's")
    func callersShare() throws {
        // Given one caller's request for two files, and another caller's for the same files
        let recorder = Recorder()
        let first = try recorder.enqueue(["x", "y"], sender: ":1.1")
        let second = try recorder.enqueue(["x", "y"], foreground: true, sender: ":1.2")
        // When the second caller dequeues its request
        recorder.queue.dequeue(second)
        // Then the first still gets both files, made once
        #expect(recorder.work(2) == ["x", "y"])
        #expect(
            recorder.signals(of: first) == [
                .started(first), .ready(first, ["file:///p/x"]), .ready(first, ["file:///p/y"]), .finished(first),
            ])
        #expect(recorder.signals(of: second) == [.started(second), .finished(second)])
        #expect(recorder.queue.counts == (0, 0))
    }

    @Test("a dequeued request finishes at once; its waiting files are dropped and its running one tells nobody")
    func dequeue() throws {
        // Given a request whose first file is being made
        let recorder = Recorder()
        let handle = try recorder.enqueue(["a", "b", "c"])
        let running = try #require(recorder.queue.next())
        // When it is dequeued
        recorder.queue.dequeue(handle)
        // Then it is finished at once, and nothing is left to make
        #expect(recorder.signals(of: handle) == [.started(handle), .finished(handle)])
        recorder.queue.complete(running, .ready)
        #expect(recorder.signals(of: handle) == [.started(handle), .finished(handle)])
        #expect(recorder.queue.counts == (0, 0))
        #expect(recorder.queue.idleSeconds != nil)
    }

    @Test("refused URIs and an unknown flavor get Error at once, grouped by reason, then Finished")
    func refusals() throws {
        let recorder = Recorder()
        // Given a request with a good file, two malformed URIs and an unsupported scheme
        let handle = try recorder.queue.enqueue(
            [
                ("file:///p/good", .success("/p/good")), ("bad1", .failure(.init(.invalidFormat, "not a URI"))),
                ("http://h/x", .failure(.init(.unsupported, "only file"))),
                ("bad2", .failure(.init(.invalidFormat, "not a URI"))),
            ], size: .large, flavor: "large", foreground: true, replacing: 0)
        // Then the refusals are reported at once, one signal a reason, and the good file waits
        #expect(
            recorder.signals(of: handle) == [
                .started(handle), .error(handle, ["bad1", "bad2"], .invalidFormat, "not a URI"),
                .error(handle, ["http://h/x"], .unsupported, "only file"),
            ])
        #expect(recorder.work(1) == ["good"])
        #expect(recorder.signals(of: handle).last == .finished(handle))
        // Given an unknown flavor, Then every URI is refused with code 5 and the request is over
        let other = try recorder.enqueue(["a", "b"], size: nil)
        #expect(
            recorder.signals(of: other) == [
                .started(other),
                .error(other, ["file:///p/a", "file:///p/b"], .unsupportedFlavor, "unsupported flavor \"custom\""),
                .finished(other),
            ])
    }

    @Test("closing answers every waiting file with shutting-down, then Finished; workers stop")
    func close() throws {
        let recorder = Recorder()
        let handle = try recorder.enqueue(["a", "b"])
        recorder.queue.close()
        #expect(
            recorder.signals(of: handle) == [
                .started(handle),
                .error(handle, ["file:///p/a", "file:///p/b"], .shuttingDown, "the service is stopping"),
                .finished(handle),
            ])
        #expect(recorder.queue.next() == nil)
    }

    @Test("a call over the per-call limit, or one that would pass the pending limit, is refused whole")
    func limits() throws {
        let recorder = Recorder(urisPerCall: 3, pending: 4)
        #expect(throws: ThumbnailServiceError.self) { try recorder.enqueue(["a", "b", "c", "d"]) }
        _ = try recorder.enqueue(["a", "b", "c"])
        let error = #expect(throws: ThumbnailServiceError.self) { try recorder.enqueue(["d", "e"]) }
        #expect(error?.code == .limitExceeded)
        #expect(recorder.queue.counts == (1, 3))
    }

    @Test("signals waiting to be sent are merged: a run of Ready for one request, of one Error for one request")
    func merging() {
        // Given signals as the rendering threads queued them
        let events: [ThumbnailQueue.Event] = [
            .started(1), .ready(1, ["a"]), .ready(1, ["b"]), .ready(2, ["c"]), .ready(1, ["d"]),
            .error(1, ["e"], .other, "gone"), .error(1, ["f"], .other, "gone"), .error(1, ["g"], .other, "other"),
            .error(2, ["h"], .other, "gone"), .finished(1),
        ]
        // When they are sent, Then each run is one signal, in order, and nothing is lost
        let sent = ThumbnailService.merged(events.map { .event($0) }).compactMap { item -> ThumbnailQueue.Event? in
            if case .event(let event) = item { event } else { nil }
        }
        #expect(
            sent == [
                .started(1), .ready(1, ["a", "b"]), .ready(2, ["c"]), .ready(1, ["d"]),
                .error(1, ["e", "f"], .other, "gone"), .error(1, ["g"], .other, "other"),
                .error(2, ["h"], .other, "gone"), .finished(1),
            ])
    }
}
