import DarkroomImage
import Foundation

/// `darkroom bench decode`'s colour and HEIF/AVIF rows: what converting to sRGB adds to a thumbnail, and the
/// HEIC/AVIF thumbnail and AVIF encode times.
enum FormatBench {
    /// Each `icc/` sample to a thumbnail converting to sRGB against the same decode keeping the stored pixels
    /// (`.original`: no conversion), interleaved; the overhead is the difference of the medians.
    static func colorRows(root: String, size: Int, iterations: Int, decoder: ImageDecoder) throws -> [[String: Any]] {
        var rows: [[String: Any]] = []
        for path in images(in: root + "/icc") {
            let bytes = try FileBytes.read(path)
            let probe = try bytes.withUnsafeBytes { raw throws(DarkroomImageError) in try ImageProber.probe(raw) }
            let managed = DecodeOptions(size: .maxPixelSize(size))
            // CMYK is always converted: its baseline is the profile ignored (the plain device-CMYK formula).
            let baseline =
                probe.isCMYK
                ? DecodeOptions(size: .maxPixelSize(size), limits: DecodeLimits(maxColorProfileBytes: 0))
                : DecodeOptions(size: .maxPixelSize(size), colorSpace: .original)
            // Builds and caches the transform, as a server's first request does.
            _ = try decoder.decode(bytes, options: managed)
            var converted = [Double]()
            var plain = [Double]()
            for i in 0..<max(5, iterations) {
                let pair: [() throws -> Void] = [
                    { converted.append(try time { _ = try decoder.decode(bytes, options: managed) }) },
                    { plain.append(try time { _ = try decoder.decode(bytes, options: baseline) }) },
                ]
                for step in (i % 2 == 0 ? pair : pair.reversed()) { try step() }
            }
            let c = median(converted)
            let p = median(plain)
            rows.append([
                "file": (path as NSString).lastPathComponent, "size": "\(probe.width)x\(probe.height)",
                "thumb_srgb_ms": c, "thumb_unconverted_ms": p, "overhead_percent": (c - p) / p * 100,
            ])
        }
        return rows
    }

    /// The image files of a sample folder (not its scripts, manifest or sub-folders).
    static func images(in folder: String) -> [String] {
        BenchPhotos.files(in: folder).filter {
            ["jpg", "png", "webp", "heic", "avif"].contains(($0 as NSString).pathExtension)
        }
    }

    /// HEIC and AVIF samples to thumbnails, and each thumbnail encoded as AVIF (speed 8 and 6) and WebP.
    static func heifRows(root: String, size: Int, iterations: Int, decoder: ImageDecoder) throws -> [[String: Any]] {
        var rows: [[String: Any]] = []
        for path in images(in: root + "/heic") + images(in: root + "/avif") {
            let bytes = try FileBytes.read(path)
            var decodes = [Double]()
            var avif8 = [Double]()
            var avif6 = [Double]()
            var webp = [Double]()
            var thumb: DecodedImage?
            for _ in 0..<max(3, iterations / 2) {
                decodes.append(
                    try time { thumb = try decoder.decode(bytes, options: DecodeOptions(size: .maxPixelSize(size))) })
            }
            guard let thumb else { continue }
            var sizes = [String: Int]()
            for _ in 0..<max(3, iterations / 2) {
                avif8.append(
                    try time { sizes["avif_speed8_bytes"] = try ImageEncoder.encode(thumb.bitmap, as: .avif).count })
                avif6.append(
                    try time {
                        sizes["avif_speed6_bytes"] = try ImageEncoder.encode(
                            thumb.bitmap, as: .avif, options: EncodeOptions(speed: 6)
                        ).count
                    })
                webp.append(try time { sizes["webp_bytes"] = try ImageEncoder.encode(thumb.bitmap, as: .webp).count })
            }
            var row: [String: Any] = [
                "file": (path as NSString).lastPathComponent, "thumb_ms": median(decodes),
                "thumb_size": "\(thumb.bitmap.width)x\(thumb.bitmap.height)",
                "embedded_thumbnail": thumb.usedEmbeddedThumbnail,
                "avif_encode_speed8_ms": median(avif8), "avif_encode_speed6_ms": median(avif6),
                "webp_encode_ms": median(webp),
            ]
            for (k, v) in sizes { row[k] = v }
            rows.append(row)
        }
        return rows
    }
}
