import DarkroomImage
import DarkroomTestSupport
import Foundation
import Testing

/// `darkroom thumb` decodes in confined workers unless told `--in-process`: the same files either way, stills,
/// animations and motion.
@Suite("darkroom thumb in decode workers")
struct ThumbCommandIsolationTests {
    @Test("by default thumb decodes in workers and writes byte for byte what --in-process writes")
    func workersWriteWhatTheProcessWrites() throws {
        // Given photos of several formats (a 12 MP JPEG, a HEIC with alpha, a 10-bit AVIF, a P3 PNG, a rotated JPEG),
        // an animated GIF (its frames made in a worker; the other animation formats are the workers' own tests') and a
        // still in a format that may animate
        let directory = try TemporaryDirectory("thumb-isolation")
        defer { directory.remove() }
        let files = [
            "jpeg-12mp/path-4032x3024.jpg", "heic/cups-alpha-1600x1000.heic", "avif/kite-10bit-2560x1600.avif",
            "icc/displayp3-kite-1280x800.png", "orientation/fallenleaf-600x400-orientation-6.jpg",
            "animated/disposal-mixed-480x300.gif", "png/cups-alpha-1600x1000.png",
        ].map(SamplePhotos.path)

        // When thumb writes them in workers (the default) and in this process
        var summaries: [String: [String: Any]] = [:]
        for (name, extra) in [("workers", [String]()), ("in-process", ["--in-process"])] {
            let run = try PageCommandTests.darkroom(
                ["thumb"] + files + ["--max-pixel-size", "200", "--out", directory.file(name), "--json"] + extra)
            #expect(run.status == 0, "\(run.errors)")
            summaries[name] = try JSONSerialization.jsonObject(with: Data(run.output.utf8)) as? [String: Any]
        }

        // Then each run says how it decoded, the workers were measured, and the files are the same bytes
        #expect(summaries["workers"]?["decoding"] as? String == "workers")
        #expect(summaries["in-process"]?["decoding"] as? String == "in-process")
        #expect((summaries["workers"]?["worker_peak_rss_bytes"] as? Int ?? 0) > 0)
        let written = try FileManager.default.contentsOfDirectory(atPath: directory.file("workers")).sorted()
        #expect(written.count == files.count, "\(written)")
        #expect(written == (try FileManager.default.contentsOfDirectory(atPath: directory.file("in-process")).sorted()))
        for name in written {
            let isolated = try FileBytes.read(directory.file("workers/" + name))
            #expect(isolated == (try FileBytes.read(directory.file("in-process/" + name))), "\(name)")
        }
    }

    @Test("thumb --motion makes a video's and a Motion Photo's motion in workers, byte for byte as --in-process")
    func motionInWorkers() throws {
        // Given a video and a Motion Photo
        let directory = try TemporaryDirectory("thumb-motion-isolation")
        defer { directory.remove() }
        let files = [try MotionPhotoSamples.path("clip.mp4"), try MotionPhotoSamples.path("google.jpg")]
        // When thumb writes their motion in workers (the default) and in this process
        for (name, extra) in [("workers", [String]()), ("in-process", ["--in-process"])] {
            let run = try PageCommandTests.darkroom(
                ["thumb"] + files + ["--motion", "--max-pixel-size", "80", "--out", directory.file(name)] + extra)
            #expect(run.status == 0, "\(run.errors)")
        }
        // Then each is an animated WebP, and the two runs wrote the same bytes
        for name in ["clip.webp", "google.webp"] {
            let isolated = try FileBytes.read(directory.file("workers/" + name))
            #expect(try AnimatedImageDecoder(isolated, options: DecodeOptions()).frameCount > 1, "\(name)")
            #expect(isolated == (try FileBytes.read(directory.file("in-process/" + name))), "\(name)")
        }
    }
}
