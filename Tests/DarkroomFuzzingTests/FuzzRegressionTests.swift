import DarkroomImage
import DarkroomSupport
import DarkroomTestSupport
import DarkroomVideo
import Foundation
import Testing

@testable import DarkroomFuzzing

/// Every fuzz target on its seeds and on every input saved in `Fuzz/crashers/`: each must come back (a typed
/// error inside is fine) and quickly. A finding fixed once stays fixed; a crash here fails the whole test run.
@Suite("Fuzz targets on their seeds and saved crashers")
struct FuzzRegressionTests {
    static let crashers = SamplePhotos.packageRoot.appendingPathComponent("Fuzz/crashers").path

    @Test(arguments: FuzzTarget.all.map(\.name))
    func targetSurvivesItsSeedsAndCrashers(_ name: String) throws {
        // Given the target, its generated and photo seeds, and the crashers saved for it
        let target = try #require(FuzzTarget.named(name))
        let seeds = FuzzSeeds.seeds(for: name, photos: SamplePhotos.root)
        #expect(seeds.count >= 3, "\(name) has only \(seeds.count) seeds")
        let folder = Self.crashers + "/" + name
        let saved = ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).sorted().compactMap {
            file in FileManager.default.contents(atPath: folder + "/" + file).map { (file, Array($0)) }
        }
        // When each runs through the target
        for (file, bytes) in seeds + saved {
            let start = MonotonicClock.seconds()
            target(bytes)
            let seconds = MonotonicClock.seconds() - start
            // Then it returns, well inside the fuzzer's one-second budget (this build has no sanitizer)
            #expect(seconds < 5, "\(name)/\(file) took \(seconds) s")
        }
    }

    @Test func crashersFolderHoldsOnlyKnownTargets() throws {
        // Given the crashers folder
        let folders = try FileManager.default.contentsOfDirectory(atPath: Self.crashers).filter { !$0.hasPrefix(".") }
        // Then every subfolder names a target (a typo would silently skip its inputs)
        for folder in folders where folder != "README.md" {
            #expect(FuzzTarget.named(folder) != nil, "Fuzz/crashers/\(folder) is not a fuzz target")
        }
    }

    @Test func seedsDecodeOrParseAsTheyShould() throws {
        // Given the generated image seeds, Then each is a valid image (so the corpus starts from real files)
        for (name, bytes) in FuzzSeeds.images() + FuzzSeeds.animations() {
            #expect((try? ImageProber.probe(bytes)) != nil, "seed \(name) does not probe")
        }
        // And the Ultra HDR seeds carry gain maps Darkroom reads back whole, parameters and all
        let ultraHDR = FuzzSeeds.ultraHDR()
        #expect(ultraHDR.count == 2)
        for (name, bytes) in ultraHDR {
            let details = ImageProber.gainMap(of: bytes)
            #expect(details?.isUsable == true, "seed \(name): \(String(describing: details))")
        }
        let color = try #require(ultraHDR.last.flatMap { ImageProber.gainMap(of: $0.bytes)?.metadata })
        #expect(color.isMultichannel && color.gainMapMin == [-0.5, 0, 0.25] && color.gamma == [1, 2, 0.5])
        // And the manifest seed is a SQLite database
        let manifest = try #require(FuzzSeeds.manifests().first)
        #expect(manifest.bytes.starts(with: Array("SQLite format 3".utf8)))
    }

    @Test func videoSeedsAreVideosAndMotionPhotosHoldTheirClip() throws {
        // Given the committed clips and the Motion Photos built around one
        let clips = FuzzSeeds.videoClips()
        let motion = FuzzSeeds.motionPhotos()
        #expect(clips.count >= 7 && motion.count == 4)
        // Then every clip is a video FFmpeg decodes a frame of
        for (name, bytes) in clips {
            let frame = try bytes.withUnsafeBytes { raw in
                let probe = try #require(try VideoDecoder().probe(raw, limits: .default), "\(name)")
                return try VideoDecoder().decode(raw, probe: probe, options: DecodeOptions(size: .maxPixelSize(16)))
            }
            #expect(frame.width == 16, "\(name)")
        }
        // And every Motion Photo's clip is found, and is the clip it was built around
        let mp4 = try #require(clips.first { $0.name.hasSuffix(".mp4") }).bytes
        for (name, bytes) in motion {
            let found = bytes.withUnsafeBytes { ImageProber.embeddedVideo(in: $0) }
            let location = try #require(found, "\(name)")
            #expect(Array(bytes[location.offset..<(location.offset + location.length)]) == mp4, "\(name)")
        }
    }

    @Test func formatSeedsDecodeAsTheirFormats() throws {
        // Given the seeds for the formats Darkroom reads but does not write (and JPEG XL and ICO)
        let expected: [String: ImageFileFormat] = [
            "bmp": .bmp, "tiff": .tiff, "dng": .raw, "svg": .svg, "jxl": .jxl, "ico": .ico,
        ]
        let seeds = FuzzSeeds.formatSeeds()
        #expect(seeds.count == 9)
        for (name, bytes) in seeds {
            // When each is decoded, Then it is a whole image of the format its name says
            let format = try #require(expected[(name as NSString).pathExtension], "\(name)")
            let decoded = try ImageDecoder().decode(bytes, options: DecodeOptions(size: .maxPixelSize(32)))
            #expect(decoded.probe.format == format, "\(name)")
            #expect(decoded.bitmap.width > 0 && decoded.bitmap.height > 0, "\(name)")
        }
        // And the two-page TIFF reports both pages
        let pages = try #require(seeds.first { $0.name == "gray-2pages.tiff" })
        #expect(try ImageProber.probe(pages.bytes).pageCount == 2)
    }
}
