import ArgumentParser
import CTurboJPEG
import DarkroomImage
import DarkroomSupport
import Foundation

/// `darkroom bench decode`: Darkroom's decoders against libjpeg-turbo's own TurboJPEG API on the same bytes,
/// interleaved in one run, plus PNG/WebP thumbnails, peak decoded bytes and the shrink-on-load quality rule.
package struct DecodeBenchmark: ParsableArguments {
    /// The defaults below; `darkroom bench` parses the options into them.
    package init() {}

    @Option(help: "Folder of 12 MP JPEGs (default: ../shared/photos/jpeg-12mp).") package var photos: String?
    @Option(help: "Timed iterations per file and variant (the median is reported).") package var iterations: Int = 7
    @Option(help: "Thumbnail size for the shrink-on-load measurements.") package var size: Int = 256
    @Flag(help: "Print JSON.") package var json = false

    /// Runs the benchmark and prints its report (JSON with ``json``).
    package func run() throws {
        guard let root = BenchPhotos.root() else { throw BenchError("sample photos not found; set DARKROOM_PHOTOS") }
        let jpegDir = photos ?? root + "/jpeg-12mp"
        let jpegs = BenchPhotos.files(in: jpegDir)
        guard !jpegs.isEmpty else { throw BenchError("no files in \(jpegDir)") }
        let decoder = ImageDecoder()
        var perFile: [[String: Any]] = []
        var full = [Double]()
        var tjFull = [Double]()
        var thumb = [Double]()
        var tjEighth = [Double]()
        var peaks = [Int]()
        var psnrs = [Double]()
        var exactThumb = [Double]()
        var exactPSNRs = [Double]()
        let exact = DecodeOptions(size: .maxPixelSize(size), chromaFromDC: false)

        for path in jpegs {
            let bytes = try FileBytes.read(path)
            let turbo = try TurboJPEG(bytes)
            // Interleave ours and theirs so drift on this shared machine hits both alike.
            var ours = [Double]()
            var theirs = [Double]()
            var oursThumb = [Double]()
            var theirsEighth = [Double]()
            var oursExact = [Double]()
            for i in 0..<iterations {
                // Alternate which goes first, so neither always inherits the other's cache and page state.
                let pair: [() throws -> Void] = [
                    { theirs.append(try time { try turbo.decode(scaleDenominator: 1) }) },
                    { ours.append(try time { _ = try decoder.decode(bytes) }) },
                ]
                for step in (i % 2 == 0 ? pair : pair.reversed()) { try step() }
                let thumbs: [() throws -> Void] = [
                    { theirsEighth.append(try time { try turbo.decode(scaleDenominator: 8) }) },
                    {
                        oursThumb.append(
                            try time {
                                _ = try decoder.decode(bytes, options: DecodeOptions(size: .maxPixelSize(size)))
                            })
                    },
                    { oursExact.append(try time { _ = try decoder.decode(bytes, options: exact) }) },
                ]
                for step in (i % 2 == 0 ? thumbs : thumbs.reversed()) { try step() }
            }
            PixelMemory.resetPeak()
            let base = PixelMemory.currentBytes
            let small = try decoder.decode(bytes, options: DecodeOptions(size: .maxPixelSize(size)))
            let peak = PixelMemory.peakBytes - base
            // Quality of the shrink-on-load rule: DCT-scaled + Lanczos against full decode + Lanczos.
            let reference = try decoder.decode(
                bytes, options: DecodeOptions(size: .maxPixelSize(size), shrinkOnLoadMargin: 1e9))
            let psnr = PixelCompare.psnr(small.bitmap, reference.bitmap)
            let exactPSNR = PixelCompare.psnr(try decoder.decode(bytes, options: exact).bitmap, reference.bitmap)
            let m = (median(ours), median(theirs), median(oursThumb), median(theirsEighth))
            full.append(m.0)
            tjFull.append(m.1)
            thumb.append(m.2)
            tjEighth.append(m.3)
            peaks.append(peak)
            psnrs.append(psnr)
            exactThumb.append(median(oursExact))
            exactPSNRs.append(exactPSNR)
            perFile.append([
                "file": (path as NSString).lastPathComponent, "full_decode_ms": m.0, "turbojpeg_full_decode_ms": m.1,
                "thumb_ms": m.2, "turbojpeg_eighth_ms": m.3, "peak_decoded_bytes": peak,
                "shrink_denominator": small.shrinkDenominator,
                "psnr_db_vs_full_decode": psnr, "thumb_size": "\(small.bitmap.width)x\(small.bitmap.height)",
                "exact_chroma_thumb_ms": median(oursExact), "exact_chroma_psnr_db": exactPSNR,
            ])
        }

        var pngResults: [[String: Any]] = []
        var webpResults: [[String: Any]] = []
        for (dir, sink) in [("png", 0), ("webp", 1)] {
            for path in BenchPhotos.files(in: root + "/" + dir) {
                let bytes = try FileBytes.read(path)
                var t = [Double]()
                for _ in 0..<max(3, iterations / 2) {
                    t.append(
                        try time { _ = try decoder.decode(bytes, options: DecodeOptions(size: .maxPixelSize(size))) })
                }
                PixelMemory.resetPeak()
                let base = PixelMemory.currentBytes
                _ = try decoder.decode(bytes, options: DecodeOptions(size: .maxPixelSize(size)))
                let row: [String: Any] = [
                    "file": (path as NSString).lastPathComponent, "thumb_ms": median(t),
                    "peak_decoded_bytes": PixelMemory.peakBytes - base,
                ]
                if sink == 0 { pngResults.append(row) } else { webpResults.append(row) }
            }
        }

        let colorRows = try FormatBench.colorRows(root: root, size: size, iterations: iterations, decoder: decoder)
        let heifRows = try FormatBench.heifRows(root: root, size: size, iterations: iterations, decoder: decoder)
        let summary: [String: Any] = [
            "benchmark": "decode", "iterations": iterations, "thumb_size": size, "files": jpegs.count,
            "jpeg_full_decode_ms": mean(full), "turbojpeg_full_decode_ms": mean(tjFull),
            "full_decode_ratio": mean(full) / mean(tjFull),
            "jpeg_thumb_ms": mean(thumb), "turbojpeg_eighth_ms": mean(tjEighth),
            "thumb_ratio": mean(thumb) / mean(tjEighth),
            "peak_decoded_bytes_thumb_max": peaks.max() ?? 0, "full_image_bytes": 4032 * 3024 * 4,
            "psnr_db_min": psnrs.min() ?? 0, "psnr_db_max": psnrs.max() ?? 0,
            "exact_chroma_thumb_ms": mean(exactThumb), "exact_chroma_psnr_db_min": exactPSNRs.min() ?? 0,
            "exact_chroma_psnr_db_max": exactPSNRs.max() ?? 0,
            "jpeg": perFile, "png": pngResults, "webp": webpResults, "icc": colorRows, "heif": heifRows,
        ]
        if json {
            print(JSONLine.encode(summary))
        } else {
            print(
                String(
                    format: "12 MP JPEG full decode: darkroom %.2f ms, libjpeg-turbo %.2f ms (ratio %.3f)",
                    mean(full), mean(tjFull), mean(full) / mean(tjFull)))
            print(
                String(
                    format:
                        "12 MP JPEG → %d px:     darkroom %.2f ms, libjpeg-turbo 1/8 decode alone %.2f ms (ratio %.3f)",
                    size, mean(thumb), mean(tjEighth), mean(thumb) / mean(tjEighth)))
            print(
                String(
                    format: "peak decoded bytes (thumb): %d (full image: %d); PSNR vs full decode: %.1f–%.1f dB",
                    peaks.max() ?? 0, 4032 * 3024 * 4, psnrs.min() ?? 0, psnrs.max() ?? 0))
            print(
                String(
                    format: "  with exact chroma (chromaFromDC false): %.2f ms, PSNR %.1f–%.1f dB",
                    mean(exactThumb), exactPSNRs.min() ?? 0, exactPSNRs.max() ?? 0))
            for r in colorRows {
                print(
                    String(
                        format: "%@ → %d px: %.2f ms converted to sRGB, %.2f ms unconverted (%+.1f %%)",
                        r["file"] as! String,
                        size, r["thumb_srgb_ms"] as! Double, r["thumb_unconverted_ms"] as! Double,
                        r["overhead_percent"] as! Double))
            }
            for r in heifRows {
                print(
                    String(
                        format: "%@ → %d px: %.2f ms%@; encode AVIF %.2f ms (speed 8), %.2f ms (speed 6), WebP %.2f ms",
                        r["file"] as! String, size, r["thumb_ms"] as! Double,
                        (r["embedded_thumbnail"] as! Bool) ? " (thumbnail item)" : "",
                        r["avif_encode_speed8_ms"] as! Double,
                        r["avif_encode_speed6_ms"] as! Double, r["webp_encode_ms"] as! Double))
            }
            for r in pngResults + webpResults {
                print(
                    String(
                        format: "%@ → %d px: %.2f ms, peak decoded %d bytes", r["file"] as! String, size,
                        r["thumb_ms"] as! Double, r["peak_decoded_bytes"] as! Int))
            }
        }
    }
}

func time(_ body: () throws -> Void) throws -> Double {
    let t0 = MonotonicClock.seconds()
    try body()
    return (MonotonicClock.seconds() - t0) * 1000
}

func median(_ values: [Double]) -> Double {
    let s = values.sorted()
    return s.isEmpty ? 0 : s[s.count / 2]
}

func mean(_ values: [Double]) -> Double { values.isEmpty ? 0 : values.reduce(0, +) / Double(values.count) }

/// libjpeg-turbo's TurboJPEG API: the floor Darkroom's JPEG path is compared against.
final class TurboJPEG {
    let bytes: [UInt8]
    let handle: tjhandle
    let width: Int32, height: Int32

    init(_ bytes: [UInt8]) throws {
        guard let h = tjInitDecompress() else { throw BenchError("tjInitDecompress failed") }
        handle = h
        self.bytes = bytes
        var w: Int32 = 0
        var hh: Int32 = 0
        var sub: Int32 = 0
        var cs: Int32 = 0
        guard tjDecompressHeader3(h, bytes, UInt(bytes.count), &w, &hh, &sub, &cs) == 0 else {
            tjDestroy(h)
            throw BenchError("tjDecompressHeader3 failed")
        }
        width = w
        height = hh
    }

    deinit { tjDestroy(handle) }

    /// Decodes to BGRA at 1/denominator into a fresh buffer, as a caller of TurboJPEG would.
    func decode(scaleDenominator: Int32) throws {
        let w = (width + scaleDenominator - 1) / scaleDenominator
        let h = (height + scaleDenominator - 1) / scaleDenominator
        let pitch = Int(w) * 4
        let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: pitch * Int(h))
        defer { buffer.deallocate() }
        guard
            tjDecompress2(handle, bytes, UInt(bytes.count), buffer, w, Int32(pitch), h, Int32(TJPF_BGRA.rawValue), 0)
                == 0
        else {
            throw BenchError("tjDecompress2 failed: \(String(cString: tjGetErrorStr2(handle)))")
        }
    }
}
