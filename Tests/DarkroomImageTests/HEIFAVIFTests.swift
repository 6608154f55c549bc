import DarkroomSupport
import DarkroomTestSupport
import Foundation
import Testing

@testable import DarkroomImage

/// HEIC (libheif) and AVIF (libavif) on the shared samples: sizes, transformations, alpha, 10-bit, the thumbnail
/// item, damaged files, and AVIF output.
@Suite("HEIC and AVIF")
struct HEIFAVIFTests {
    let decoder = ImageDecoder()

    @Test("every HEIC and AVIF sample probes and decodes upright at its displayed size, like its JPEG original")
    func samplesDecode() throws {
        let files =
            SamplePhotos.files("heic").filter { $0.hasSuffix(".heic") }
            + SamplePhotos.files("avif").filter { $0.hasSuffix(".avif") }
        #expect(files.count == 11, "HEIC/AVIF samples missing at \(SamplePhotos.root)")
        for path in files {
            // Given a sample whose name gives its displayed size
            let name = (path as NSString).lastPathComponent
            let bytes = try SamplePhotos.bytes(path)
            let expected = name.contains("stored1600x2560") ? (2560, 1600) : Self.size(in: name)
            // When it is probed and thumbnailed
            let probe = try bytes.withUnsafeBytes { try ImageProber.probe($0) }
            let thumb = try decoder.decode(bytes, options: DecodeOptions(size: .maxPixelSize(256)))
            // Then the upright size is the displayed one and the thumbnail keeps its aspect
            #expect(probe.format == (name.hasSuffix(".heic") ? .heic : .avif), "\(name)")
            #expect(
                probe.orientedWidth == expected.0 && probe.orientedHeight == expected.1,
                "\(name): \(probe.orientedWidth)×\(probe.orientedHeight)")
            #expect(thumb.bitmap.width == 256 && thumb.bitmap.height == 256 * expected.1 / expected.0, "\(name)")
            #expect(probe.hasAlpha == name.contains("alpha"), "\(name)")
            #expect(probe.bitDepth == (name.contains("10bit") ? 10 : 8), "\(name)")
            #expect(thumb.bitmap.isOpaque == !name.contains("alpha"), "\(name)")
            #expect(!PixelCompare.isUniform(thumb.bitmap), "\(name)")
        }
    }

    @Test("the irot=1 files come out upright: equal to the JPEG they were made from", arguments: ["heic", "avif"])
    func rotation(format: String) throws {
        // Given the JPEG original and its copy stored turned, with irot=1 to turn it back
        let reference = try decoder.decode(
            SamplePhotos.bytes("jpeg/fallenleaf-2560x1600.jpg"), options: DecodeOptions(size: .maxPixelSize(320)))
        let rotated = try decoder.decode(
            SamplePhotos.bytes("\(format)/fallenleaf-irot1-stored1600x2560.\(format)"),
            options: DecodeOptions(size: .maxPixelSize(320)))
        // Then the decoded image is landscape and matches the original (lossy coding aside)
        #expect(rotated.bitmap.width == 320 && rotated.bitmap.height == 200)
        let psnr = PixelCompare.psnr(rotated.bitmap, reference.bitmap)
        #expect(psnr >= 30, "\(format): \(psnr) dB")
    }

    @Test("the 10-bit HEIC and AVIF, made from one 16-bit picture, come out as the same 8-bit image")
    func tenBit() throws {
        // Given two independent decoders (libheif + libde265, libavif + dav1d) of one 10-bit source
        let heic = try decoder.decode(
            SamplePhotos.bytes("heic/kite-10bit-2560x1600.heic"), options: DecodeOptions(size: .maxPixelSize(256)))
        let avif = try decoder.decode(
            SamplePhotos.bytes("avif/kite-10bit-2560x1600.avif"), options: DecodeOptions(size: .maxPixelSize(256)))
        // Then both give 8-bit BGRA that agree
        #expect(heic.bitmap.format == .bgra8Premultiplied && avif.bitmap.format == .bgra8Premultiplied)
        #expect(heic.probe.bitDepth == 10 && avif.probe.bitDepth == 10)
        let psnr = PixelCompare.psnr(heic.bitmap, avif.bitmap)
        #expect(psnr >= 35, "\(psnr) dB")
    }

    @Test("alpha is premultiplied: no colour channel exceeds its alpha", arguments: ["heic", "avif"])
    func alpha(format: String) throws {
        let decoded = try decoder.decode(
            SamplePhotos.bytes("\(format)/cups-alpha-1600x1000.\(format)"),
            options: DecodeOptions(size: .maxPixelSize(200)))
        let b = decoded.bitmap
        var transparent = 0
        for y in 0..<b.height {
            let row = b.row(y).assumingMemoryBound(to: UInt8.self)
            for x in 0..<b.width {
                let a = row[4 * x + 3]
                if a < 255 { transparent += 1 }
                #expect(row[4 * x] <= a && row[4 * x + 1] <= a && row[4 * x + 2] <= a)
            }
        }
        #expect(transparent > b.width * b.height / 20, "\(format): \(transparent) pixels with alpha < 255")
    }

    @Test("the HEIC thumbnail item is decoded when it covers the output, and skipped when it is too small")
    func thumbnailItem() throws {
        let bytes = try SamplePhotos.bytes("heic/eveningglow-4032x3024-thumb320.heic")
        let probe = try bytes.withUnsafeBytes { try ImageProber.probe($0) }
        #expect(probe.heif?.thumbnailSizes == [[320, 240]])
        // When asked for 256 px the 320×240 item covers it; for 512 px it does not
        let small = try decoder.decode(bytes, options: DecodeOptions(size: .maxPixelSize(256)))
        let (large, meter) = try PixelMemory.measure {
            try decoder.decode(bytes, options: DecodeOptions(size: .maxPixelSize(512)))
        }
        #expect(small.usedEmbeddedThumbnail)
        #expect(!large.usedEmbeddedThumbnail)
        #expect(small.bitmap.width == 256 && large.bitmap.width == 512)
        // And the two agree (the thumbnail item is the same picture)
        let largeDown = try decoder.decode(
            ImageEncoder.encode(large.bitmap, as: .png), options: DecodeOptions(size: .maxPixelSize(256)))
        // (a 320×240 item coded at q60 is soft: measured 22.7 dB; another photo scores 10–15)
        #expect(PixelCompare.psnr(small.bitmap, largeDown.bitmap) >= 20)
        // And the full decode's frames were counted against the pixel-memory meter
        #expect(meter.peakBytes >= 4032 * 3024 * 3)
        // The grid file decodes its 48 tiles into one picture
        let grid = try decoder.decode(
            SamplePhotos.bytes("heic/onestandsout-4032x3024-grid512.heic"),
            options: DecodeOptions(size: .maxPixelSize(1024)))
        #expect(!grid.usedEmbeddedThumbnail && grid.bitmap.width == 1024 && grid.bitmap.height == 768)
    }

    @Test("converting libheif's YCbCr planes row by row matches libheif's own RGB conversion on every HEIC sample")
    func planesMatchLibheif() throws {
        let files = SamplePhotos.files("heic").filter { $0.hasSuffix(".heic") }
        #expect(files.count == 6)
        for path in files {
            // Given each sample decoded to 384 px both ways
            let bytes = try SamplePhotos.bytes(path)
            let probe = try bytes.withUnsafeBytes { try ImageProber.probe($0) }
            let options = DecodeOptions(size: .maxPixelSize(384))
            let plan = try options.geometry.plan(for: probe)
            func decode(_ codec: HEIFDecoder) throws -> Bitmap {
                try bytes.withUnsafeBytes { raw in
                    try codec.decode(
                        raw, probe: probe, plan: plan, working: .bgra8Premultiplied, options: options,
                        allocate: Bitmap.allocateOnHeap
                    ).bitmap
                }
            }
            let planes = try decode(HEIFDecoder())
            let libheif = try decode(HEIFDecoder(convertsPlanes: false))
            // Then they agree closely (chroma upsampling and rounding differ), alpha included
            let psnr = PixelCompare.psnr(planes, libheif)
            #expect(psnr >= 40, "\((path as NSString).lastPathComponent): \(psnr) dB")
            #expect(planes.isOpaque == libheif.isOpaque)
        }
    }

    @Test(
        "truncated and corrupt HEIC/AVIF files fail with typed errors",
        arguments: ["heic/summer_1am-2560x1600.heic", "avif/bythewater-2560x1600.avif"])
    func damaged(path: String) throws {
        let bytes = try SamplePhotos.bytes(path)
        for cut in [40, 400, bytes.count / 2, bytes.count - 100] {
            #expect(throws: DarkroomImageError.self, "\(path) cut at \(cut)") {
                _ = try decoder.decode(Array(bytes.prefix(cut)), options: DecodeOptions(size: .maxPixelSize(256)))
            }
        }
        var rng = SplitMix64(state: 11)
        for _ in 0..<20 {
            var damaged = bytes
            for _ in 0..<8 {
                damaged[Int.random(in: 0..<min(2000, damaged.count), using: &rng)] = UInt8.random(
                    in: 0...255, using: &rng)
            }
            // Typed or decoded, never a crash.
            do { _ = try decoder.decode(damaged, options: DecodeOptions(size: .maxPixelSize(128))) } catch {}
        }
    }

    @Test("limits apply before decoding: a HEIC over maxDecodedBytes is refused")
    func limits() throws {
        let bytes = try SamplePhotos.bytes("heic/onestandsout-4032x3024-grid512.heic")
        let error = #expect(throws: DarkroomImageError.self) {
            _ = try decoder.decode(
                bytes,
                options: DecodeOptions(size: .maxPixelSize(1024), limits: DecodeLimits(maxDecodedBytes: 32 << 20)))
        }
        #expect(error?.code == .limitExceeded)
    }

    @Test("AVIF output decodes back (libavif) at the right size and close to the input", arguments: [true, false])
    func avifOutput(opaque: Bool) throws {
        let source = try decoder.decode(
            SamplePhotos.bytes(opaque ? "jpeg/kite-2560x1600.jpg" : "png/" + Self.alphaPNG()),
            options: DecodeOptions(size: .maxPixelSize(256)))
        let encoded = try ImageEncoder.encode(source.bitmap, as: .avif, options: EncodeOptions(quality: 80))
        let probe = try encoded.withUnsafeBytes { try ImageProber.probe($0) }
        let back = try decoder.decode(encoded)
        #expect(probe.format == .avif && probe.hasAlpha == !opaque)
        #expect(back.bitmap.width == source.bitmap.width && back.bitmap.height == source.bitmap.height)
        #expect(PixelCompare.psnr(back.bitmap, source.bitmap) >= 30)
        #expect(throws: DarkroomImageError.self) {
            _ = try ImageEncoder.encode(source.bitmap, as: .avif, options: EncodeOptions(speed: 11))
        }
    }

    static func alphaPNG() -> String {
        SamplePhotos.files("png").map { ($0 as NSString).lastPathComponent }.first {
            $0.contains("rgba") || $0.contains("alpha")
        } ?? "missing"
    }

    /// "…-2560x1600…" → (2560, 1600).
    static func size(in name: String) -> (Int, Int) {
        let match = name.split(separator: "-").compactMap { part -> (Int, Int)? in
            let dims = part.split(separator: ".")[0].split(separator: "x")
            guard dims.count == 2, let w = Int(dims[0]), let h = Int(dims[1].prefix(while: \.isNumber)) else {
                return nil
            }
            return (w, h)
        }
        return match.first ?? (0, 0)
    }
}
