import DarkroomImage
import DarkroomSupport
import DarkroomTestSupport
import Foundation
import Testing

@testable import Darkroom

/// `.embeddedThumbnailPreview`: the pipeline shows a photo's own EXIF thumbnail at the request's size before the
/// photo itself, hands it to waiters who join later, never caches it, and a target never shows it over the image.
@Suite("Embedded-thumbnail previews", .timeLimit(.minutes(5)))
struct EmbeddedThumbnailPreviewTests {
    /// A target that records what it was asked to show, in order.
    final class RecordingTarget: ImageTarget {
        let darkroom = ImageTargetState()
        let shown = Locked<[Bool]>([])  // isPreview of each image displayed
        func display(_ content: ImageTargetContent) {
            if case .image(let response) = content {
                shown.withLock { $0.append(response.container?.isPreview ?? false) }
            }
        }
    }

    static let geometry = OutputGeometry(
        size: .fill(width: 256, height: 256), pixelFormat: .exactly(.bgra8Premultiplied))

    @Test("a camera JPEG gives its EXIF thumbnail first, at the cell's size, then the photo; only the photo is cached")
    func previewThenImage() async throws {
        let directory = try TemporaryDirectory("embedded-preview")
        defer { directory.remove() }
        // Given a 12 MP photo with an EXIF thumbnail, and the same photo without one
        let photo = SamplePhotos.path("jpeg-12mp/onestandsout-4032x3024.jpg")
        let withThumbnail = directory.file("with-thumbnail.jpg")
        _ = try PythonReference.script("scripts/add-exif-thumbnail.py", [photo, withThumbnail])
        let pipeline = makePipeline()

        for (path, expectsPreview) in [(withThumbnail, true), (photo, false)] {
            var request = ImageRequest(source: .file(path), options: .embeddedThumbnailPreview)
            request.geometry = Self.geometry
            // When it loads
            var previews: [ImageResponse] = []
            var final: ImageResponse?
            for try await event in pipeline.imageEvents(for: request) {
                switch event {
                case .progress: break
                case .preview(let response): previews.append(response)
                case .finished(let result): final = try result.get()
                }
            }
            let image = try #require(final?.container)
            // Then a photo with a thumbnail gave one preview, at the cell's size and close to the photo; one without
            // gave none
            #expect(previews.count == (expectsPreview ? 1 : 0), "\(path)")
            if let preview = previews.first?.container {
                #expect(preview.isPreview && !image.isPreview)
                #expect(preview.bitmap.width == 256 && preview.bitmap.height == 256)
                let psnr = PixelCompare.psnr(preview.bitmap, image.bitmap)
                #expect(psnr >= 22, "PSNR \(psnr)")  // 120 px of thumbnail upscaled to 256: soft, but this picture
            }
            // And the image is the direct decode, and is what the memory cache holds
            let direct = try ImageDecoder().decode(fileAt: path, options: DecodeOptions(geometry: Self.geometry))
            #expect(PixelCompare.psnr(image.bitmap, direct.bitmap) == .infinity)
            #expect(pipeline.cachedImage(for: request)?.isPreview == false)
        }
    }

    @Test("the preview does not wait for the full decodes that hold every decoding thread")
    func previewLane() async throws {
        let directory = try TemporaryDirectory("embedded-preview")
        defer { directory.remove() }
        // Given a photo with an EXIF thumbnail, and a pipeline whose only decoding thread is held by other work
        let file = directory.file("photo.jpg")
        _ = try PythonReference.script(
            "scripts/add-exif-thumbnail.py", [SamplePhotos.path("jpeg-12mp/kite-4032x3024-progressive.jpg"), file])
        let pipeline = makePipeline(memory: false, processingLimit: 1)
        let release = DispatchSemaphore(value: 0)
        let held = Locked(false)
        pipeline.context.decodeQueue.enqueue(priority: .veryHigh) { _ in
            held.withLock { $0 = true }
            release.wait()
        }
        while !held.withLock({ $0 }) { try await Task.sleep(for: .milliseconds(5)) }
        // (freed after 20 s whatever happens, so a preview stuck behind it fails the test instead of hanging it)
        let timedOut = Locked(false)
        DispatchQueue.global().asyncAfter(deadline: .now() + 20) {
            timedOut.withLock { $0 = true }
            release.signal()
        }
        var request = ImageRequest(source: .file(file), options: .embeddedThumbnailPreview)
        request.geometry = Self.geometry
        // When the photo is asked for
        var events: [String] = []
        for try await event in pipeline.imageEvents(for: request) {
            switch event {
            case .progress: break
            case .preview(let response):
                let when = timedOut.withLock { $0 } ? "after the thread was freed" : "while the thread was held"
                events.append("preview \(response.container?.bitmap.width ?? 0) \(when)")
                release.signal()
            case .finished(let result):
                events.append("finished \(try result.get().container?.isPreview == false)")
            }
        }
        // Then its preview came while the decoding thread was still held; once freed, the photo followed
        #expect(events == ["preview 256 while the thread was held", "finished true"])
    }

    @Test("a target shows the preview, then the image, and never the preview after the image")
    func targetOrder() async throws {
        let directory = try TemporaryDirectory("embedded-preview")
        defer { directory.remove() }
        // Given a photo with an EXIF thumbnail bound to a target
        let file = directory.file("photo.jpg")
        _ = try PythonReference.script(
            "scripts/add-exif-thumbnail.py", [SamplePhotos.path("jpeg-12mp/path-4032x3024.jpg"), file])
        let pipeline = makePipeline(memory: false)
        let target = RecordingTarget()
        var request = ImageRequest(source: .file(file), options: .embeddedThumbnailPreview)
        request.geometry = Self.geometry
        // When it loads
        let task = pipeline.setImage(with: request, on: target)
        let deadline = MonotonicClock.seconds() + 30
        while !task.isDone && MonotonicClock.seconds() < deadline { try await Task.sleep(for: .milliseconds(10)) }
        // Then the target showed the preview, then the image
        #expect(target.shown.withLock { $0 } == [true, false])
        // And a preview that races in after the image is dropped; a new binding takes previews again
        let state = target.darkroom
        let generation = state.generation
        #expect(!state.displayIfCurrent(generation, .preview) {})
        let (next, _) = state.rebind()
        #expect(state.displayIfCurrent(next, .preview) {})
        #expect(state.displayIfCurrent(next, .final) {})
        #expect(!state.displayIfCurrent(next, .preview) {})
    }

    @Test("a waiter joining a job after its preview was sent is handed that preview; a new job starts without one")
    func lateJoinerGetsPreview() {
        // Given a shared job that has sent a preview
        let pool = JobPool<Int, Int>()
        let first = Locked<[String]>([])
        let second = Locked<[String]>([])
        func record(_ log: Locked<[String]>) -> SharedJob<Int>.Handler {
            { event in
                switch event {
                case .progress: break
                case .preview(let v): log.withLock { $0.append("preview \(v)") }
                case .finished(let r): log.withLock { $0.append("finished \((try? r.get()) ?? -1)") }
                }
            }
        }
        let job = Locked<SharedJob<Int>?>(nil)
        let (a, _) = pool.subscribe(
            key: 1, priority: .low, handler: record(first), start: { j in job.withLock { $0 = j } })
        job.withLock { $0 }?.send(.preview(7))
        // When a second waiter joins, and the job then finishes
        let (b, joined) = pool.subscribe(key: 1, priority: .high, handler: record(second), start: { _ in })
        job.withLock { $0 }?.finish(.success(9))
        // Then both heard the preview once and the result once
        #expect(joined)
        #expect(first.withLock { $0 } == ["preview 7", "finished 9"])
        #expect(second.withLock { $0 } == ["preview 7", "finished 9"])
        // And a later waiter starts a new job and hears no old preview
        let third = Locked<[String]>([])
        let (c, rejoined) = pool.subscribe(key: 1, priority: .low, handler: record(third), start: { _ in })
        #expect(!rejoined && third.withLock { $0 }.isEmpty)
        for s in [a, b, c] { s.cancel() }
    }
}
