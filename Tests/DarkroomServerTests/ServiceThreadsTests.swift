import Darkroom
import DarkroomImage
import DarkroomSupport
import DarkroomTestSupport
import Foundation
import Testing

@testable import DarkroomServer

@Suite("Thumbnail service threads")
struct ServiceThreadsTests {
    @Test("encode and disk-cache reads and writes run on the pipeline's threads, never on the cooperative pool")
    func blockingStepsOnPipelineThreads() async throws {
        // Given a service with a disk cache that records the thread of each blocking step
        let root = ServerHarness.makeRoot()
        let cacheDirectory = ServerHarness.temporaryDirectory("threads-cache")
        let steps = Locked<[(step: String, thread: String)]>([])
        let service = try ThumbnailRenderer(
            configuration: ServerHarness.configuration(root: root, cacheDirectory: cacheDirectory),
            stepObserver: { step in
                let thread = WorkQueue.currentName ?? "not a pipeline thread"
                steps.withLock { $0.append((step, thread)) }
            })
        // When a thumbnail is rendered (disk miss, encode, store) and the info of the same file asked for
        let answer = try await service.thumbnail(
            query: [("src", "photo.jpg"), ("w", "64")], accept: nil, ifNoneMatch: nil)
        let probe = try await service.info(query: [("src", "photo.jpg")])
        // Then the render happened, and each blocking step ran on a named pipeline thread of the right pool
        guard case .thumbnail(let thumbnail, _, let origin) = answer else {
            Issue.record("expected a thumbnail, got \(answer)")
            return
        }
        #expect(origin == "rendered")
        #expect(thumbnail.width == 64)
        #expect(probe.width == 640 && probe.height == 480)
        // (the disk write follows the answer)
        #expect(await eventually { steps.withLock { $0.count } == 3 })
        let recorded = steps.withLock { $0 }
        #expect(recorded.map(\.step) == ["disk-read", "encode", "disk-write"])
        for (step, thread) in recorded {
            let expected = step == "encode" ? "darkroom.decode" : "darkroom.io"
            #expect(thread == expected, "\(step) ran on \(thread)")
        }
    }

    @Test("a file missing when the pipeline reads it is not_found by its error code (404), not by its message")
    func missingFileIsNotFound() async throws {
        // Given a pipeline and a path that does not exist
        let pipeline = ImagePipeline()
        let missing = ServerHarness.temporaryDirectory("missing") + "/gone.jpg"
        // When the pipeline loads it, and the server maps the failure
        var pipelineError: DarkroomError?
        do {
            _ = try await pipeline.image(for: ImageRequest(path: missing))
        } catch {
            pipelineError = error
        }
        var probeError: DarkroomError?
        do {
            _ = try await pipeline.probe(ImageRequest(source: .file(missing)))
        } catch {
            probeError = error as? DarkroomError
        }
        // Then both carry the not_found code, and the client sees 404 not_found
        #expect(pipelineError?.code == .notFound)
        #expect(probeError?.code == .notFound)
        let answered = ServerError(mapping: try #require(pipelineError))
        #expect(answered.code == .notFound && answered.status == 404)
        // And a file that exists but cannot be read is a server fault (500), not a 404
        let denied = ServerError(mapping: DarkroomError(.fileIO, "cannot open x: Permission denied"))
        #expect(denied.status == 500)
    }
}
