import DarkroomImage
import DarkroomTestSupport
import DarkroomVideo
import Foundation
import Testing

@testable import DarkroomWorkers

/// An `ImageDecoder` whose isolation is a worker pool: every kind of file decodes in a worker exactly as in this
/// process — from its bytes and from its open file (a video by ranges) — with what the decode learned on the way.
@Suite struct IsolatedDecodeTests {
    /// The samples: photos in every container the workers must read, plus a TIFF, an SVG and a video made here.
    static func inputs(in directory: TemporaryDirectory) throws -> [String] {
        let tiff = directory.file("kite.tif")
        _ = try ReferenceTool.run("vips", ["copy", SamplePhotos.path("jpeg/kite-2560x1600.jpg"), tiff])
        let svg = directory.file("shapes.svg")
        try Data(
            """
            <svg xmlns="http://www.w3.org/2000/svg" width="400" height="300"><rect width="400" height="300" \
            fill="#2a6"/><circle cx="200" cy="150" r="100" fill="#e52" opacity="0.8"/></svg>
            """.utf8
        ).write(to: URL(fileURLWithPath: svg))
        // Two videos: the brand a WebM's header names must be read through the worker's ranges too
        let videos = ["clip.mp4", "clip.webm"].map(directory.file)
        for (video, codec) in zip(videos, ["libx264", "libvpx"]) {
            _ = try ReferenceTool.run(
                "ffmpeg",
                [
                    "-v", "error", "-f", "lavfi", "-i", "testsrc2=size=640x360:rate=10", "-t", "1", "-c:v", codec,
                    "-pix_fmt", "yuv420p", video,
                ])
        }
        return [
            "jpeg/kite-2560x1600.jpg", "png/cups-alpha-1600x1000.png", "webp/eveningglow-lossy-2560x1600.webp",
            "heic/cups-alpha-1600x1000.heic", "heic/eveningglow-4032x3024-thumb320.heic",
            "avif/kite-10bit-2560x1600.avif", "icc/displayp3-fallenleaf-4032x3024.jpg",
            "orientation/fallenleaf-600x400-orientation-6.jpg",
        ].map(SamplePhotos.path) + [tiff, svg] + videos
    }

    @Test func everyKindOfFileDecodesInAWorkerAsInThisProcess() throws {
        // Given a pool, a decoder isolated by it, the same decoder in this process, and every kind of file
        let directory = try TemporaryDirectory("isolated")
        defer { directory.remove() }
        let files = try Self.inputs(in: directory)
        let pool = try DecodeWorkerPoolTests.pool()
        let isolated = ImageDecoder(customDecoders: [VideoDecoder()], isolation: pool)
        let local = VideoDecoder.imageDecoder
        var options = DecodeOptions(size: .maxPixelSize(256))
        options.colorSpace = .original  // so the colour profile must come back from the worker

        var decodes = 0
        for file in files {
            // When each is decoded in a worker from its open file and (but a video) from its bytes, and here
            let expected = try local.decode(fileAt: file, options: options)
            var results = [("file", try isolated.decode(fileAt: file, options: options))]
            if !file.hasSuffix(".mp4") && !file.hasSuffix(".webm") {
                results.append(("bytes", try isolated.decode(try SamplePhotos.bytes(file), options: options)))
            }
            decodes += results.count

            // Then each is this process's decode: the pixels exactly, the probe, the profile, the thumbnail's use
            for (how, image) in results {
                let name = "\((file as NSString).lastPathComponent) from its \(how)"
                #expect(image.bitmap.width == expected.bitmap.width && image.bitmap.height == expected.bitmap.height)
                #expect(PixelCompare.psnr(image.bitmap, expected.bitmap) == .infinity, "\(name)")
                #expect(image.probe == expected.probe, "\(name)")
                #expect(image.colorProfile == expected.colorProfile, "\(name)")
                #expect(image.usedEmbeddedThumbnail == expected.usedEmbeddedThumbnail, "\(name)")
                #expect(image.convertedToSRGB == expected.convertedToSRGB, "\(name)")
            }
        }
        // and the profile and the thumbnail item did come back where the files have them, every decode in a worker
        let p3 = try isolated.decode(
            fileAt: SamplePhotos.path("icc/displayp3-fallenleaf-4032x3024.jpg"), options: options)
        #expect(p3.colorProfile?.summary.description?.contains("P3") == true, "\(String(describing: p3.colorProfile))")
        let thumbnail = try isolated.decode(
            fileAt: SamplePhotos.path("heic/eveningglow-4032x3024-thumb320.heic"), options: options)
        #expect(thumbnail.usedEmbeddedThumbnail)
        #expect(pool.statistics.decodes == decodes + 2, "\(pool.statistics)")
    }

    @Test func aMissingFileOrALimitIsRefusedHereBeforeAWorkerIsAsked() throws {
        // Given an isolated decoder with a small input limit
        let pool = try DecodeWorkerPoolTests.pool(workers: 1)
        let isolated = ImageDecoder(isolation: pool)
        var options = DecodeOptions(size: .maxPixelSize(64))
        options.limits.maxInputBytes = 1000

        // When it decodes a missing file and one past the limit
        let missing = #expect(throws: DarkroomImageError.self) {
            _ = try isolated.decode(fileAt: "/nonexistent/photo.jpg", options: options)
        }
        let large = #expect(throws: DarkroomImageError.self) {
            _ = try isolated.decode(fileAt: SamplePhotos.path("jpeg/kite-2560x1600.jpg"), options: options)
        }

        // Then both are this process's typed errors, and no worker was started for them
        #expect(missing?.code == .notFound)
        #expect(large?.code == .limitExceeded)
        #expect(pool.statistics.workersStarted == 0)
    }
}
