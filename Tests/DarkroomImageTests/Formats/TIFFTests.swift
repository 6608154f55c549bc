import DarkroomSupport
import DarkroomTestSupport
import Foundation
import Testing

@testable import DarkroomImage

/// TIFF against Pillow (and libvips for pyramids): every compression and sample layout Pillow writes, tiles from
/// libtiff's `tiffcp`, pages, the orientation tag, a CMYK file with a press profile, and the memory a thumbnail of a
/// large file holds.
@Suite("TIFF")
struct TIFFTests {
    let decoder = ImageDecoder()

    static func options(_ size: TargetSize, page: Int = 0) -> DecodeOptions {
        var options = DecodeOptions(size: size)
        options.geometry.pixelFormat = .exactly(.bgra8Premultiplied)
        options.geometry.page = page
        return options
    }

    /// Writes `source` (a sample) as TIFF with Pillow: `mode`, `compression`, extra `save` arguments as Python.
    static func pillowTIFF(_ source: String, _ output: String, mode: String, compression: String, extra: String = "")
        throws
    {
        _ = try PythonReference.run(
            """
            import sys
            from PIL import Image
            im = Image.open(sys.argv[1]).convert("RGBA" if "\(mode)" in ("RGBA",) else "RGB")
            im = im.resize((im.width // 4, im.height // 4))
            im = im.convert("\(mode)") if "\(mode)" != "I;16" else im.convert("L").point(lambda v: v * 257, "I").convert("I;16")
            im.save(sys.argv[2], compression="\(compression)"\(extra))
            """, [SamplePhotos.path(source), output])
    }

    /// Darkroom's and Pillow's decode of `file` at `size` (Pillow's through its reference PNG).
    func compareWithPillow(_ file: String, size: TargetSize, in directory: TemporaryDirectory) throws -> Double {
        try ReferenceSuites.psnrAgainstPillow(file, size: size, in: directory.path)
    }

    @Test(
        "every compression Pillow writes, in every sample layout, agrees with Pillow at 256 px",
        arguments: ["raw", "tiff_lzw", "tiff_adobe_deflate", "packbits", "jpeg"])
    func compressions(compression: String) throws {
        let directory = try TemporaryDirectory("tiff")
        defer { directory.remove() }
        let modes = compression == "jpeg" ? ["RGB", "L", "CMYK"] : ["RGB", "RGBA", "L", "1", "P", "CMYK", "I;16"]
        for mode in modes {
            // Given a photo written by Pillow in this layout and compression
            let file = directory.file("\(compression)-\(mode.replacingOccurrences(of: ";", with: "")).tif")
            try Self.pillowTIFF("jpeg/kite-2560x1600.jpg", file, mode: mode, compression: compression)
            // When both decode it to 256 px
            let psnr = try compareWithPillow(file, size: .maxPixelSize(256), in: directory)
            // Then they agree (bilevel images resample their dither: looser)
            print("tiff \(compression) \(mode): \(String(format: "%.1f", psnr)) dB")
            #expect(psnr >= (mode == "1" ? 25 : 35), "\(compression) \(mode): \(psnr) dB")
        }
    }

    @Test("a tiled copy (tiffcp) decodes like its striped original; a pyramid's reduced level serves a thumbnail")
    func tilesAndPyramids() throws {
        let directory = try TemporaryDirectory("tiff")
        defer { directory.remove() }
        // Given a 12 MP striped TIFF, its tiled copy, and a libvips pyramid of it
        let striped = directory.file("striped.tif")
        _ = try ReferenceTool.run(
            "vips", ["copy", SamplePhotos.path("jpeg-12mp/fallenleaf-4032x3024.jpg"), striped + "[compression=lzw]"])
        let tiled = directory.file("tiled.tif")
        _ = try ReferenceTool.run("tiffcp", ["-t", "-w", "256", "-l", "256", "-c", "zip", striped, tiled])
        let pyramid = directory.file("pyramid.tif")
        _ = try ReferenceTool.run(
            "vips", ["tiffsave", striped, pyramid, "--tile", "--pyramid", "--compression", "deflate"])
        // When each gives a 256 px thumbnail
        let fromStrips = try decoder.decode(SamplePhotos.bytes(striped), options: Self.options(.maxPixelSize(256)))
        let fromTiles = try decoder.decode(SamplePhotos.bytes(tiled), options: Self.options(.maxPixelSize(256)))
        let (fromPyramid, meter) = try PixelMemory.measure {
            try decoder.decode(SamplePhotos.bytes(pyramid), options: Self.options(.maxPixelSize(256)))
        }
        // Then tiles give the same pixels as strips
        #expect(PixelCompare.psnr(fromStrips.bitmap, fromTiles.bitmap) == .infinity)
        #expect(!fromStrips.usedEmbeddedThumbnail && !fromTiles.usedEmbeddedThumbnail)
        // And the pyramid's reduced level is read (a level resampled again: close, not equal)
        #expect(fromPyramid.usedEmbeddedThumbnail)
        #expect(fromPyramid.bitmap.width == 256 && fromPyramid.bitmap.height == 192)
        let psnr = PixelCompare.psnr(fromStrips.bitmap, fromPyramid.bitmap)
        #expect(psnr >= 30, "\(psnr) dB")
        #expect(meter.peakBytes < 4032 * 3024, "\(meter.peakBytes) bytes")
    }

    @Test("a 256 px thumbnail of a 40 MP striped or tiled TIFF holds under a quarter of the full image's pixels")
    func largeFileMemory() throws {
        let directory = try TemporaryDirectory("tiff")
        defer { directory.remove() }
        // Given a 7680×5200 (40 MP) photo as a striped and as a tiled TIFF
        let striped = directory.file("big-striped.tif")
        _ = try ReferenceTool.run(
            "vips",
            [
                "resize", SamplePhotos.path("jpeg-12mp/eveningglow-4032x3024.jpg"), striped + "[compression=lzw]",
                "1.905", "--vscale", "1.72",
            ])
        let tiled = directory.file("big-tiled.tif")
        _ = try ReferenceTool.run("tiffcp", ["-t", "-w", "512", "-l", "512", striped, tiled])
        for file in [striped, tiled] {
            // When a 256 px thumbnail is decoded with the pixel-memory meter on
            let bytes = try SamplePhotos.bytes(file)
            let probe = try bytes.withUnsafeBytes { try ImageProber.probe($0) }
            let (thumb, meter) = try PixelMemory.measure {
                try decoder.decode(bytes, options: Self.options(.maxPixelSize(256)))
            }
            // Then the peak is under a quarter of the full image's BGRA pixels
            let full = probe.width * probe.height * 4
            print(
                "tiff \((file as NSString).lastPathComponent) \(probe.width)×\(probe.height): peak \(meter.peakBytes) of \(full) bytes"
            )
            #expect(probe.width * probe.height >= 39_000_000)
            #expect(thumb.bitmap.width == 256)
            #expect(meter.peakBytes < full / 4, "\(file): \(meter.peakBytes) of \(full)")
        }
    }

    @Test("pages: the first by default, page=N another, pageCount in the probe; a page past the end is refused")
    func pages() throws {
        let directory = try TemporaryDirectory("tiff")
        defer { directory.remove() }
        // Given a three-page TIFF of three different photos
        let file = directory.file("pages.tif")
        let sources = ["jpeg/kite-2560x1600.jpg", "jpeg/path-2560x1600.jpg", "jpeg/coldripple-2560x1600.jpg"]
        _ = try PythonReference.run(
            """
            import sys
            from PIL import Image
            ims = [Image.open(p).convert("RGB").resize((320, 200)) for p in sys.argv[2:]]
            ims[0].save(sys.argv[1], save_all=True, append_images=ims[1:], compression="tiff_lzw")
            """, [file] + sources.map(SamplePhotos.path))
        let bytes = try SamplePhotos.bytes(file)
        let probe = try bytes.withUnsafeBytes { try ImageProber.probe($0) }
        #expect(probe.pageCount == 3)
        for (page, source) in sources.enumerated() {
            // When page N is decoded
            let decoded = try decoder.decode(bytes, options: Self.options(.original, page: page)).bitmap
            let expected = try decoder.decode(
                SamplePhotos.bytes(source), options: Self.options(.fit(width: 320, height: 200))
            ).bitmap
            // Then it is that photo (Pillow's resize vs ours: close)
            let psnr = PixelCompare.psnr(decoded, expected)
            #expect(psnr >= 30, "page \(page): \(psnr) dB")
        }
        #expect(throws: DarkroomImageError.self) {
            try decoder.decode(bytes, options: Self.options(.original, page: 3))
        }
    }

    @Test("a file's probe and the decode after it read its directories once")
    func probeAndDecodeListPagesOnce() throws {
        let directory = try TemporaryDirectory("tiff")
        defer { directory.remove() }
        // Given a three-page TIFF opened by path, as `decode(fileAt:)` opens it
        let file = directory.file("pages.tif")
        try PageFiles.writeThreePages(to: file)
        let handle = try TIFFDecoder.Handle(path: file, limits: .default)
        // When it is probed for page 2
        let options = Self.options(.original, page: 2)
        let probe = try TIFFDecoder.probe(handle, page: 2, limits: options.limits)
        // Then each of the three directories is read once
        #expect(handle.directoryReads == 3)
        // When that page is decoded after the probe
        let decoded = try decoder.decode(.tiffFile(handle), probe: probe, options: options, into: Bitmap.allocateOnHeap)
        // Then only the page's directory is read again, twice (its profile, then its pixels), and it is page 2
        #expect(handle.directoryReads == 5)
        #expect(try PageFiles.page(shownBy: ImageEncoder.encode(decoded.bitmap, as: .png)) == 2)
    }

    @Test("the orientation tag is applied", arguments: [3, 6, 8])
    func orientation(tag: Int) throws {
        let directory = try TemporaryDirectory("tiff")
        defer { directory.remove() }
        // Given the upright sample stored as TIFF with its pixels turned and the tag saying how to turn them back
        let file = directory.file("o.tif")
        _ = try PythonReference.run(
            """
            import sys
            from PIL import Image
            im = Image.open(sys.argv[1]).convert("RGB")
            turn = {3: Image.Transpose.ROTATE_180, 6: Image.Transpose.ROTATE_90, 8: Image.Transpose.ROTATE_270}[int(sys.argv[3])]
            im.transpose(turn).save(sys.argv[2], compression="tiff_lzw", tiffinfo={274: int(sys.argv[3])})
            """, [SamplePhotos.path("orientation/fallenleaf-600x400-orientation-1.jpg"), file, String(tag)])
        // When it is decoded
        let decoded = try decoder.decode(SamplePhotos.bytes(file), options: Self.options(.original))
        let upright = try decoder.decode(
            SamplePhotos.bytes("orientation/fallenleaf-600x400-orientation-1.jpg"), options: Self.options(.original))
        // Then it is upright: the original's pixels exactly
        #expect(decoded.probe.orientation.rawValue == tag)
        #expect(PixelCompare.psnr(decoded.bitmap, upright.bitmap) == .infinity)
    }

    @Test("a CMYK TIFF with the FOGRA39 profile is converted like ImageCms converts it")
    func cmykWithProfile() throws {
        let directory = try TemporaryDirectory("tiff")
        defer { directory.remove() }
        // Given the CMYK sample's pixels and profile stored as an LZW TIFF by Pillow
        let file = directory.file("cmyk.tif")
        let cmyk = try #require(
            SamplePhotos.files("icc").first { $0.lowercased().contains("cmyk") && $0.hasSuffix(".jpg") })
        _ = try PythonReference.run(
            """
            import sys
            from PIL import Image
            im = Image.open(sys.argv[1])
            im.resize((im.width // 2, im.height // 2)).save(sys.argv[2], compression="tiff_lzw", icc_profile=im.info["icc_profile"])
            """, [cmyk, file])
        // When Darkroom and Pillow + ImageCms each convert it to sRGB
        let psnr = try compareWithPillow(file, size: .maxPixelSize(512), in: directory)
        // Then they agree
        print("tiff cmyk+FOGRA39: \(String(format: "%.1f", psnr)) dB")
        #expect(psnr >= 30, "\(psnr) dB")
    }

    @Test("a page's colour profile is read while its directory is current, however many pages follow")
    func profileOfFirstPage() throws {
        let directory = try TemporaryDirectory("tiff")
        defer { directory.remove() }
        // Given a three-page TIFF whose first page is Display P3 with its profile, the others plain
        let p3 = try #require(SamplePhotos.files("icc").first { $0.contains("p3") && $0.hasSuffix(".jpg") })
        let file = directory.file("p3-pages.tif")
        _ = try PythonReference.run(
            """
            import sys
            from PIL import Image
            im = Image.open(sys.argv[1]); icc = im.info["icc_profile"]; small = im.resize((400, 300))
            small.save(sys.argv[2], compression="tiff_lzw", icc_profile=icc, save_all=True,
                       append_images=[small.convert("L"), small.convert("L")])
            """, [p3, file])
        let bytes = try SamplePhotos.bytes(file)
        for _ in 0..<10 {
            // When its first page is decoded
            let decoded = try decoder.decode(bytes, options: Self.options(.maxPixelSize(128)))
            // Then the P3 profile was read and used every time
            #expect(decoded.convertedToSRGB && decoded.colorProblem == nil, "\(decoded.colorProblem ?? "")")
        }
    }

    @Test(
        "libtiff's other codecs (ZSTD, LZMA, LERC, WebP) decode like the uncompressed original",
        arguments: ["zstd", "lzma", "lerc", "webp"])
    func libtiffCodecs(codec: String) throws {
        let directory = try TemporaryDirectory("tiff")
        defer { directory.remove() }
        // Given an uncompressed TIFF and its copy recompressed by tiffcp
        let plain = directory.file("plain.tif")
        _ = try ReferenceTool.run(
            "vips", ["copy", SamplePhotos.path("orientation/fallenleaf-600x400-orientation-1.jpg"), plain])
        let packed = directory.file("\(codec).tif")
        _ = try ReferenceTool.run("tiffcp", ["-c", codec, plain, packed])
        // When both are decoded
        let a = try decoder.decode(SamplePhotos.bytes(plain), options: Self.options(.original)).bitmap
        let b = try decoder.decode(SamplePhotos.bytes(packed), options: Self.options(.original)).bitmap
        // Then the lossless codecs give the same pixels, WebP (lossy by default) nearly so
        let psnr = PixelCompare.psnr(a, b)
        #expect(codec == "webp" ? psnr >= 35 : psnr == .infinity, "\(codec): \(psnr) dB")
    }

    @Test(
        "a TIFF file is read by libtiff a strip or tile at a time: the same image as from its bytes; a cut file fails")
    func readFromTheFile() throws {
        let directory = try TemporaryDirectory("tiff")
        defer { directory.remove() }
        // Given striped LZW, tiled Deflate, a pyramid, a CMYK file with its profile and a three-page file
        let photo = SamplePhotos.path("orientation/fallenleaf-600x400-orientation-1.jpg")
        let striped = directory.file("striped.tif")
        _ = try ReferenceTool.run("vips", ["copy", photo, striped + "[compression=lzw]"])
        let tiled = directory.file("tiled.tif")
        _ = try ReferenceTool.run("tiffcp", ["-t", "-w", "64", "-l", "64", "-c", "zip", striped, tiled])
        let pyramid = directory.file("pyramid.tif")
        _ = try ReferenceTool.run(
            "vips",
            [
                "tiffsave", photo, pyramid, "--tile", "--pyramid", "--tile-width", "64",
                "--tile-height", "64",
            ])
        let cmyk = directory.file("cmyk.tif")
        let cmykSource = try #require(
            SamplePhotos.files("icc").first { $0.lowercased().contains("cmyk") && $0.hasSuffix(".jpg") })
        _ = try PythonReference.run(
            """
            import sys
            from PIL import Image
            im = Image.open(sys.argv[1])
            im.resize((im.width // 4, im.height // 4)).save(sys.argv[2], compression="tiff_lzw", icc_profile=im.info["icc_profile"])
            """, [cmykSource, cmyk])
        let pages = directory.file("pages.tif")
        _ = try PythonReference.run(
            """
            import sys
            from PIL import Image
            ims = [Image.open(sys.argv[2]).convert("RGB").rotate(90 * i, expand=True) for i in range(3)]
            ims[0].save(sys.argv[1], save_all=True, append_images=ims[1:], compression="tiff_deflate")
            """, [pages, photo])
        for (file, size, page) in [
            (striped, TargetSize.original, 0), (striped, .maxPixelSize(100), 0), (tiled, .maxPixelSize(100), 0),
            (pyramid, .maxPixelSize(100), 0), (cmyk, .maxPixelSize(200), 0), (pages, .maxPixelSize(100), 1),
        ] {
            // When it is decoded from the file and from its bytes
            let options = Self.options(size, page: page)
            let fromFile = try decoder.decode(fileAt: file, options: options)
            let fromBytes = try decoder.decode(SamplePhotos.bytes(file), options: options)
            // Then both give the same image, colour converted alike
            let name = (file as NSString).lastPathComponent
            #expect(PixelCompare.psnr(fromFile.bitmap, fromBytes.bitmap) == .infinity, "\(name) \(size)")
            #expect(fromFile.usedEmbeddedThumbnail == fromBytes.usedEmbeddedThumbnail, "\(name)")
            #expect(
                fromFile.convertedToSRGB == fromBytes.convertedToSRGB
                    && fromFile.probe.pageCount == fromBytes.probe.pageCount)
        }
        // And the pyramid's level and the CMYK conversion were really exercised
        #expect(try decoder.decode(fileAt: pyramid, options: Self.options(.maxPixelSize(100))).usedEmbeddedThumbnail)
        #expect(try decoder.decode(fileAt: cmyk, options: Self.options(.maxPixelSize(100))).convertedToSRGB)
        // When the file is cut in half, or a page it lacks is asked for, Then typed errors, from the file as from bytes
        let bytes = try SamplePhotos.bytes(striped)
        let cut = directory.file("cut.tif")
        try FileBytes.writeAtomically(Array(bytes.prefix(bytes.count / 2)), to: cut)
        #expect(throws: DarkroomImageError.self) { try decoder.decode(fileAt: cut, options: Self.options(.original)) }
        let missing = #expect(throws: DarkroomImageError.self) {
            try decoder.decode(fileAt: pages, options: Self.options(.original, page: 3))
        }
        #expect(missing?.code == .invalidArgument)
    }
}
