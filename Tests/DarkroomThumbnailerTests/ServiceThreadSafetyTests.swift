import DarkroomImage
import DarkroomSupport
import DarkroomTestSupport
import Foundation
import Testing

@testable import DarkroomDesktop
@testable import DarkroomThumbnailer

/// The service's threads under load from several clients at once (run under ThreadSanitizer by `make tsan`): the
/// bus thread, the rendering threads, the foreground lane and the cache thread share the queue and the outbox.
@Suite("Thumbnail service threads", .serialized)
struct ServiceThreadSafetyTests {
    @Test("four clients queueing overlapping files, dequeuing and moving at once: each file made once, all finish")
    func clientsAtOnce() throws {
        let harness = try ServiceHarness { $0.foregroundDecoder = ImageDecoder() }
        defer { harness.stop() }
        // Given 40 photos, and four clients (four bus connections) each queueing all of them (two in the foreground),
        // one of them dequeuing its first request and queueing ten again, one copying a file's thumbnail meanwhile
        let photos = try ThumbnailServiceTests.photos(40, in: harness.folder.path).map(FileURI.of(path:))
        let sessions = Locked<[Int: ServiceHarness.Session]>([:])
        let failures = Locked<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 4) { client in
            var calls: [[String: Any]] = [
                ServiceHarness.queue(photos.shuffled(), scheduler: client < 2 ? "foreground" : "background")
            ]
            if client == 3 {
                calls.append(["method": "Dequeue", "signature": "u", "args": [["handle_of": 0]]])
                calls.append(ServiceHarness.queue(Array(photos.prefix(10)), scheduler: "background"))
            }
            if client == 2 {
                calls.append([
                    "method": "Copy", "object": "Cache1", "signature": "asas",
                    "args": [[photos[0]], [photos[0] + ".copy"]],
                ])
            }
            do {
                let session = try harness.client(calls)
                sessions.withLock { $0[client] = session }
            } catch {
                failures.withLock { $0.append("\(error)") }
            }
        }
        #expect(failures.withLock { $0 }.isEmpty, "\(failures.withLock { $0 })")
        // Then every client's requests finished, and each client's whole request heard of every photo (another
        // caller's request shares a file, never takes it)
        let all = sessions.withLock { $0 }
        #expect(all.count == 4 && all.values.allSatisfy(\.complete))
        for (client, session) in all where client != 3 {
            #expect(Set(session.ready(session.handle(0))) == Set(photos), "client \(client)")
        }
        #expect(all[3].map { Set($0.ready($0.handle(2))) } == Set(photos.prefix(10)))
        // And each photo was decoded once
        #expect(harness.service.tally.withLock { $0["rendered"] } == photos.count)
        #expect(harness.service.queue.counts == (0, 0))
    }
}
