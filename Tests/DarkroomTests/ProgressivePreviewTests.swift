import DarkroomImage
import DarkroomTestSupport
import Foundation
import Testing

@testable import Darkroom

@Suite("Progressive previews: one per scan that arrived, each closer to the final image", .timeLimit(.minutes(5)))
struct ProgressivePreviewTests {
    @Test("A progressive JPEG sent scan by scan gives a preview per complete scan, PSNR rising, then the exact image")
    func previewPerScan() async throws {
        // Given a progressive photo, served so that the body stops at each scan after the first until the test
        // has seen the preview for the scans before it
        let (bytes, scans, server, pipeline, request) = try await Self.scanByScan(
            size: 1280, options: .progressivePreviews, share: .infinity)

        // When it loads
        var previews: [Bitmap] = []
        var final: ImageResponse?
        for try await event in pipeline.imageEvents(for: request) {
            switch event {
            case .progress: break
            case .preview(let r):
                previews.append(try #require(r.bitmap))
                #expect(r.container?.isPreview == true)
                server.step("scan")
            case .finished(let r): final = try r.get()
            }
        }

        // Then every scan but the last (which ends with the body) gave one preview at the display size
        let image = try #require(final?.bitmap)
        #expect(previews.count == scans.count - 1)
        for preview in previews {
            #expect(preview.width == image.width && preview.height == image.height)
        }
        // each closer to the final image than the one before
        let psnrs = try previews.map { PixelCompare.psnr(try $0.converted(to: image.format), image) }
        for (earlier, later) in zip(psnrs, psnrs.dropFirst()) { #expect(later >= earlier - 0.05, "PSNR \(psnrs)") }
        #expect(psnrs.first! < psnrs.last!, "PSNR \(psnrs)")
        // and the final image is a direct decode's, and the only one cached
        try Self.expectDirectDecode(image, of: bytes, request)
        #expect(pipeline.cachedImage(for: request)?.isPreview == false)
        await server.stop()
    }

    @Test("Previews read each scan once: with no CPU share beyond the first preview, one is made, then the exact image")
    func previewShare() async throws {
        // Given a progressive photo served scan by scan, and a pipeline whose previews may add nothing beyond the
        // first (a decode of the whole body so far for each preview would ignore the share and give one per scan)
        let (bytes, scans, server, pipeline, request) = try await Self.scanByScan(
            size: 1280, options: .progressivePreviews, share: 0)

        // When it loads (each stop is released once a preview arrived or the scan was read without one)
        var previews = 0
        var final: ImageResponse?
        let releaser = Task {
            for _ in scans {
                try await Task.sleep(for: .milliseconds(30))
                server.step("scan")
            }
        }
        for try await event in pipeline.imageEvents(for: request) {
            switch event {
            case .progress: break
            case .preview: previews += 1
            case .finished(let r): final = try r.get()
            }
        }
        releaser.cancel()

        // Then the first scan gave the only preview, and the final image is a direct decode's
        #expect(previews == 1)
        let image = try #require(final?.bitmap)
        try Self.expectDirectDecode(image, of: bytes, request)
        await server.stop()
    }

    @Test("An interlaced PNG arriving pass by pass gives a preview per pass, PSNR rising, then the exact image")
    func interlacedPNG() async throws {
        // Given an Adam7-interlaced photo whose body stops at each hand-over point until the test has seen the
        // preview made there (a loaded machine would otherwise skip some, and the PSNR's rise would be the load's)
        let bytes = try SamplePhotos.bytes("png/path-interlaced-1200x750.png")
        let server = try await TestServer.start()
        server.register("interlaced", bytes)
        let shares = ProgressivePreviewTrigger.interlacedPNGShares
        let stops = shares.map { String(Int(($0 * Double(bytes.count)).rounded(.up))) }.joined(separator: ",")
        let pipeline = makePipeline(configure: {
            $0.progressivePreviewInterval = 0
            $0.progressivePreviewCPUShare = .infinity
        })
        let request = ImageRequest(
            source: .url(server.url("/img/interlaced?stops=\(stops)&step=pass")),
            size: .maxPixelSize(600), options: .progressivePreviews)

        // When it loads
        var previews: [Bitmap] = []
        var final: ImageResponse?
        for try await event in pipeline.imageEvents(for: request) {
            switch event {
            case .progress: break
            case .preview(let r):
                previews.append(try #require(r.bitmap))
                server.step("pass")
            case .finished(let r): final = try r.get()
            }
        }
        await server.stop()

        // Then one preview came at each hand-over point, at the display size, each no further from the final image
        // than the one before, and the final image is a direct decode's
        let image = try #require(final?.bitmap)
        #expect(previews.count == shares.count, "\(previews.count)")
        for preview in previews { #expect(preview.width == 600 && preview.height == 375) }
        let psnrs = try previews.map { PixelCompare.psnr(try $0.converted(to: image.format), image) }
        for (earlier, later) in zip(psnrs, psnrs.dropFirst()) { #expect(later >= earlier - 0.05, "PSNR \(psnrs)") }
        #expect(psnrs.first! + 3 < psnrs.last!, "PSNR \(psnrs)")
        try Self.expectDirectDecode(image, of: bytes, request)
    }

    @Test("With progressiveBlur, previews are blurred by a radius that shrinks as more arrives; the image is not")
    func progressiveBlur() async throws {
        // Given a progressive photo served scan by scan, loaded with blurred previews
        let (bytes, _, server, pipeline, request) = try await Self.scanByScan(
            size: 640, options: [.progressivePreviews, .progressiveBlur], share: .infinity)

        // When it loads
        var previews: [Bitmap] = []
        var final: ImageResponse?
        for try await event in pipeline.imageEvents(for: request) {
            switch event {
            case .progress: break
            case .preview(let r):
                previews.append(try #require(r.bitmap))
                server.step("scan")
            case .finished(let r): final = try r.get()
            }
        }
        await server.stop()

        // Then the detail (mean absolute difference of neighbours) grows preview by preview from almost none, and
        // the final image is a direct decode's, unblurred
        let image = try #require(final?.bitmap)
        let detail = previews.map(Self.detail)
        #expect(previews.count >= 3)
        #expect(detail.first! < 0.2 * Self.detail(image), "\(detail) against \(Self.detail(image))")
        for (earlier, later) in zip(detail, detail.dropFirst()) { #expect(later >= earlier * 0.95, "\(detail)") }
        try Self.expectDirectDecode(image, of: bytes, request)
    }

    /// A progressive photo (several scans) served so that its body stops just after each scan's end — the next
    /// scan's marker tells the loader the scan before it is whole — until the test steps "scan"; a pipeline with no
    /// preview interval and the given CPU share; and a request for it at `size` with `options`.
    static func scanByScan(size: Int, options: ImageRequest.Options, share: Double) async throws -> (
        bytes: [UInt8], scans: [Int], server: TestServer, pipeline: ImagePipeline, request: ImageRequest
    ) {
        let bytes = try SamplePhotos.bytes("jpeg/summer_1am-2560x1600.jpg")
        let (scans, progressive) = try JPEGLayout.scans(bytes)
        try #require(progressive && scans.count >= 5, "the sample is a progressive JPEG with several scans")
        let server = try await TestServer.start()
        server.register("progressive", bytes)
        let stops = scans.dropFirst().map { String($0 + 2) }.joined(separator: ",")
        let pipeline = makePipeline(configure: {
            $0.progressivePreviewInterval = 0
            $0.progressivePreviewCPUShare = share
        })
        let request = ImageRequest(
            source: .url(server.url("/img/progressive?stops=\(stops)&step=scan")), size: .maxPixelSize(size),
            options: options)
        return (bytes, scans, server, pipeline, request)
    }

    /// Expects `image` to have exactly the pixels of a direct decode of `bytes` at `request`'s geometry.
    static func expectDirectDecode(_ image: Bitmap, of bytes: [UInt8], _ request: ImageRequest) throws {
        var options = DecodeOptions()
        options.geometry = request.geometry
        let direct = try ImageDecoder().decode(bytes, options: options).bitmap
        #expect(PixelCompare.psnr(try direct.converted(to: image.format), image) == .infinity)
    }

    /// The mean absolute difference between horizontal neighbours' first channel: how much fine detail shows.
    static func detail(_ bitmap: Bitmap) -> Double {
        var total = 0
        let step = bitmap.format.bytesPerPixel
        for y in 0..<bitmap.height {
            let row = bitmap.row(y).assumingMemoryBound(to: UInt8.self)
            for x in 1..<bitmap.width { total += abs(Int(row[x * step]) - Int(row[(x - 1) * step])) }
        }
        return Double(total) / Double(bitmap.height * (bitmap.width - 1))
    }

    @Test("darkroom fetch --progress reports and writes the previews of a slow download, then the image")
    func fetchCommand() async throws {
        // Given a progressive photo served slowly
        let bytes = try SamplePhotos.bytes("jpeg/summer_1am-2560x1600.jpg")
        let scans = try JPEGLayout.scans(bytes).offsets.count
        let server = try await TestServer.start()
        server.register("progressive.jpg", bytes)
        let directory = try TemporaryDirectory("previews")
        defer { directory.remove() }
        let url = server.url("/img/progressive.jpg?slow=20&chunk=16384").absoluteString

        // When the command line fetches it with --progress (in a child process, waited for off the test's pool)
        let run = try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(
                    with: Result {
                        try PageCommandTests.darkroom([
                            "fetch", url, "--progress", "--max-pixel-size", "1280", "--out", directory.path, "--json",
                        ])
                    })
            }
        }
        await server.stop()

        // Then it reports previews (at most one per scan before the last) and writes each as a file a person can
        // open, at the display size, beside the final image
        #expect(run.status == 0, "\(run.errors)")
        let lines = run.output.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        let previews = lines.filter { $0["preview"] != nil }
        #expect((1..<scans).contains(previews.count), "\(run.output)")
        for preview in previews {
            let file = try #require(preview["file"] as? String)
            let image = try ImageDecoder().decode(try FileBytes.read(directory.file(file))).bitmap
            #expect(image.width == 1280 && image.height == 800 && preview["width"] as? Int == 1280)
        }
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        #expect(files.contains("progressive-1280x800.jpg"), "\(files)")
    }

    @Test("The throttle keeps one preview decode in flight and starts them an interval apart")
    func throttle() throws {
        // Given a throttle with a long interval
        let throttle = PreviewThrottle(interval: 60)
        let body = { (n: UInt8) in FetchOutput(bytes: [n], origin: .network, timings: .init()) }

        // When bodies arrive while one decode runs
        let first = throttle.offer(body(1))
        let second = throttle.offer(body(2))
        let third = throttle.offer(body(3))

        // Then the first starts, the later ones wait (the newest replacing the older) and stay waiting while the
        // interval has not passed
        #expect(first?.bytes == [1])
        #expect(second?.bytes == nil && third?.bytes == nil)
        #expect(throttle.finished()?.bytes == nil)
        // and with no interval the waiting body starts as soon as the running one is done
        let eager = PreviewThrottle(interval: 0)
        #expect(eager.offer(body(1))?.bytes == [1])
        #expect(eager.offer(body(2))?.bytes == nil)
        #expect(eager.offer(body(3))?.bytes == nil)
        #expect(eager.finished()?.bytes == [3])
        #expect(eager.finished()?.bytes == nil)
    }
}
