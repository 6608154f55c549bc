import ArgumentParser
import Darkroom
import DarkroomImage
import DarkroomSupport
import Foundation

/// `darkroom bench smartcrop`: where the smart crop lands on each photo, and what it costs.
///
/// For each photo the decode is `cover(width, height)` (the thumbnail's own size) and ``Saliency`` picks the
/// crop on it; the crop is reported in source pixels, so `bench/smartcrop-overlap.py` can compare it with
/// `vips smartcrop --interesting attention` on the original. Then, on the 12 MP photos, `rounds` interleaved
/// rounds of the full thumbnail (decode + crop + nothing else) with the centre crop and with the smart crop give
/// both rates and their ratio.
package struct SmartCropBenchmark: ParsableArguments {
    /// The defaults below; `darkroom bench` parses the options into them.
    package init() {}

    @Option(
        name: .customLong("folder"),
        help: "A folder of photos (repeatable; default: the jpeg, jpeg-12mp, png and webp folders of the sample set).")
    package var folders: [String] = []
    @Option(help: "Box width.") package var width = 256
    @Option(help: "Box height.") package var height = 256
    @Option(help: "Rounds of the rate comparison (each decodes every 12 MP photo twice).") package var rounds = 5
    @Flag(help: "Print JSON.") package var json = false

    /// Checks the settings before a run.
    package func validate() throws {
        guard width > 0, height > 0, rounds >= 0 else { throw ValidationError("sizes must be positive") }
    }

    struct Placement: Encodable {
        let file: String
        let sourceWidth: Int, sourceHeight: Int
        let x: Int, y: Int, width: Int, height: Int
        let ms: Double
    }

    struct Report: Encodable {
        let box: [Int]
        let placements: [Placement]
        let centreRate: Double
        let smartRate: Double
        let smartToCentre: Double
    }

    /// Runs the benchmark and prints its report.
    package func run() throws {
        guard let root = BenchPhotos.root() else { throw BenchError("sample photos not found; set DARKROOM_PHOTOS") }
        let dirs = folders.isEmpty ? ["jpeg", "jpeg-12mp", "png", "webp"].map { root + "/" + $0 } : folders
        let files = dirs.flatMap { BenchPhotos.files(in: $0) }
        guard !files.isEmpty else { throw BenchError("no photos found") }
        let decoder = ImageDecoder()
        var placements: [Placement] = []
        for file in files {
            let bytes = try FileBytes.read(file)
            let image = try decoder.decode(bytes, options: DecodeOptions(size: .cover(width: width, height: height)))
            let t0 = MonotonicClock.seconds()
            let w = min(width, image.bitmap.width)
            let h = min(height, image.bitmap.height)
            let origin = try Saliency.cropOrigin(image.bitmap, cropWidth: w, cropHeight: h)
            let ms = (MonotonicClock.seconds() - t0) * 1000
            let scale = Double(image.probe.orientedWidth) / Double(image.bitmap.width)
            placements.append(
                Placement(
                    file: file, sourceWidth: image.probe.orientedWidth, sourceHeight: image.probe.orientedHeight,
                    x: Int((Double(origin.x) * scale).rounded()), y: Int((Double(origin.y) * scale).rounded()),
                    width: Int((Double(w) * scale).rounded()), height: Int((Double(h) * scale).rounded()), ms: ms))
        }
        // The rate: whole thumbnails of the 12 MP photos, centre and smart interleaved so drift hits both alike
        let large = try files.filter { $0.contains("12mp") }.map { try FileBytes.read($0) }
        var centreSeconds = 0.0
        var smartSeconds = 0.0
        let smartCrop = ImageProcessors.CropToFill(width: width, height: height, gravity: .smart)
        for _ in 0..<(large.isEmpty ? 0 : rounds) {
            for bytes in large {
                let t0 = MonotonicClock.seconds()
                _ = try decoder.decode(bytes, options: DecodeOptions(size: .fill(width: width, height: height)))
                let t1 = MonotonicClock.seconds()
                let cover = try decoder.decode(
                    bytes, options: DecodeOptions(size: .cover(width: width, height: height)))
                _ = try smartCrop.process(cover.bitmap)
                let t2 = MonotonicClock.seconds()
                centreSeconds += t1 - t0
                smartSeconds += t2 - t1
            }
        }
        let n = Double(large.count * rounds)
        let report = Report(
            box: [width, height], placements: placements,
            centreRate: n > 0 ? n / centreSeconds : 0, smartRate: n > 0 ? n / smartSeconds : 0,
            smartToCentre: n > 0 ? centreSeconds / smartSeconds : 0)
        if json {
            print(JSONLine.encode(["smartcrop": JSONLine.object(report)]))
        } else {
            for p in placements {
                print(
                    "\((p.file as NSString).lastPathComponent): crop \(p.width)×\(p.height) at (\(p.x), \(p.y)) "
                        + "of \(p.sourceWidth)×\(p.sourceHeight), saliency \(String(format: "%.2f", p.ms)) ms")
            }
            print(
                String(
                    format: "12 MP → %d×%d: centre %.1f/s, smart %.1f/s (%.0f%%)", width, height, report.centreRate,
                    report.smartRate, report.smartToCentre * 100))
        }
    }
}
