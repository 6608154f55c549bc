import DarkroomTestSupport
import Testing

@testable import DarkroomImage

@Suite("Decoding the sample photos")
struct DecoderTests {
    let decoder = ImageDecoder()

    @Test("every sample decodes at full size and to a 256 px thumbnail")
    func everySample() throws {
        let files = SamplePhotos.all
        #expect(files.count >= 30, "sample photos missing at \(SamplePhotos.root)")
        for path in files {
            // Given a sample file
            let bytes = try SamplePhotos.bytes(path)
            // When it is decoded whole and as a thumbnail
            let full = try decoder.decode(bytes)
            let thumb = try decoder.decode(bytes, options: DecodeOptions(size: .maxPixelSize(256)))
            // Then the sizes follow the header (after orientation) and the pixels are an image, not a blank
            #expect(
                full.bitmap.width == full.probe.orientedWidth && full.bitmap.height == full.probe.orientedHeight,
                "\(path)")
            let longest = max(full.probe.width, full.probe.height)
            #expect(max(thumb.bitmap.width, thumb.bitmap.height) == min(256, longest), "\(path)")
            let aspect = Double(full.bitmap.width) / Double(full.bitmap.height)
            let thumbAspect = Double(thumb.bitmap.width) / Double(thumb.bitmap.height)
            #expect(abs(aspect - thumbAspect) < 0.02, "\(path): aspect \(aspect) vs \(thumbAspect)")
            #expect(!PixelCompare.isUniform(thumb.bitmap), "\(path) decoded blank")
            #expect(thumb.bitmap.bytesPerRow % 64 == 0)
        }
    }

    @Test("the eight EXIF orientations come out as the same upright pixels")
    func orientations() throws {
        let files = SamplePhotos.files("orientation")
        #expect(files.count == 8)
        // Given the upright reference (orientation 1)
        let reference = try decoder.decode(SamplePhotos.bytes(files[0])).bitmap
        #expect(reference.width == 600 && reference.height == 375)
        for (i, path) in files.enumerated() {
            // When each file is decoded with orientation applied
            let image = try decoder.decode(SamplePhotos.bytes(path))
            #expect(image.probe.orientation.rawValue == i + 1)
            // Then it matches the reference (within JPEG re-encoding noise)
            #expect(image.bitmap.width == 600 && image.bitmap.height == 375, "\(path)")
            let psnr = PixelCompare.psnr(image.bitmap, reference)
            #expect(psnr > 30, "\(path): PSNR \(psnr) dB against the upright reference")
            // And a thumbnail of it is upright too
            let thumb = try decoder.decode(SamplePhotos.bytes(path), options: DecodeOptions(size: .maxPixelSize(200)))
                .bitmap
            #expect(thumb.width == 200 && thumb.height == 125, "\(path)")
        }
        // And without applying it, a rotated file is stored transposed and differs from the reference
        let raw = try decoder.decode(SamplePhotos.bytes(files[5]), options: DecodeOptions(appliesOrientation: false))
            .bitmap
        #expect(raw.width == 375 && raw.height == 600)
    }

    @Test("a 12 MP JPEG thumbnail matches a full decode + resample and holds under 2.5 MB of pixels")
    func shrinkOnLoadQuality() throws {
        for path in SamplePhotos.files("jpeg-12mp") {
            let bytes = try SamplePhotos.bytes(path)
            // Given the DCT-scaled thumbnail, measured for pixel memory
            let (fast, meter) = try PixelMemory.measure {
                try decoder.decode(bytes, options: DecodeOptions(size: .maxPixelSize(256)))
            }
            #expect(fast.shrinkDenominator == 8)
            #expect(
                meter.peakBytes < 2_500_000, "\(path): \(meter.peakBytes) bytes of pixels held (full image: 48.8 MB)")
            // When compared with a full-size decode resampled the same way
            let slow = try decoder.decode(
                bytes, options: DecodeOptions(size: .maxPixelSize(256), shrinkOnLoadMargin: 1e9))
            #expect(slow.shrinkDenominator == 1)
            // Then the two agree closely
            let psnr = PixelCompare.psnr(fast.bitmap, slow.bitmap)
            #expect(psnr > 38, "\(path): PSNR \(psnr) dB")
        }
    }

    @Test("chroma from DC at ~1/16 costs a little colour fidelity; chromaFromDC false restores libjpeg's exactly")
    func chromaFromDCTradeoff() throws {
        for path in SamplePhotos.files("jpeg-12mp") {
            // Given a 12 MP photo, its 256 px thumbnail both ways, and a full decode resampled the same way
            let bytes = try SamplePhotos.bytes(path)
            let fast = try decoder.decode(bytes, options: DecodeOptions(size: .maxPixelSize(256)))
            let exact = try decoder.decode(bytes, options: DecodeOptions(size: .maxPixelSize(256), chromaFromDC: false))
            let full = try decoder.decode(
                bytes, options: DecodeOptions(size: .maxPixelSize(256), shrinkOnLoadMargin: 1e9))
            // Then both are close to the full decode, the exact one at least as close
            let pFast = PixelCompare.psnr(fast.bitmap, full.bitmap)
            let pExact = PixelCompare.psnr(exact.bitmap, full.bitmap)
            #expect(pFast > 40, "\(path): \(pFast) dB")
            #expect(pExact >= pFast - 0.01, "\(path): exact \(pExact) dB, from DC \(pFast) dB")
            // And luma, which the option never touches, is the same both ways
            let grayFast = try decoder.decode(
                bytes, options: DecodeOptions(size: .maxPixelSize(256), pixelFormat: .exactly(.gray8)))
            let grayExact = try decoder.decode(
                bytes,
                options: DecodeOptions(
                    size: .maxPixelSize(256), pixelFormat: .exactly(.gray8),
                    chromaFromDC: false))
            #expect(PixelCompare.psnr(grayFast.bitmap, grayExact.bitmap) == .infinity, "\(path)")
        }
    }

    @Test("a box downsample matches an independent block average")
    func boxMatchesBlockAverage() throws {
        // Given a 2560×1600 photo and its full decode
        let bytes = try SamplePhotos.bytes(SamplePhotos.files("jpeg")[0])
        let full = try decoder.decode(bytes).bitmap
        // When decoded to 160×100 with the box filter (exact 16×16 blocks)
        let small = try decoder.decode(
            bytes,
            options: DecodeOptions(
                size: .fit(width: 160, height: 100), filter: .box,
                shrinkOnLoadMargin: 1e9)
        ).bitmap
        #expect(small.width == 160 && small.height == 100)
        // Then every pixel is the average of its 16×16 block (±2)
        var worst = 0
        for by in 0..<100 {
            for bx in 0..<160 {
                for c in 0..<3 {
                    var sum = 0
                    for y in (by * 16)..<(by * 16 + 16) {
                        let r = full.row(y).assumingMemoryBound(to: UInt8.self)
                        for x in (bx * 16)..<(bx * 16 + 16) { sum += Int(r[4 * x + c]) }
                    }
                    let expected = (sum + 128) / 256
                    let got = Int(small.row(by).assumingMemoryBound(to: UInt8.self)[4 * bx + c])
                    worst = max(worst, abs(got - expected))
                }
            }
        }
        #expect(worst <= 2, "largest difference from the block average: \(worst)")
    }

    @Test("fill crops to the exact size; fit keeps the aspect")
    func fitAndFill() throws {
        let bytes = try SamplePhotos.bytes(SamplePhotos.files("jpeg-12mp")[0])
        let fill = try decoder.decode(bytes, options: DecodeOptions(size: .fill(width: 200, height: 200))).bitmap
        #expect(fill.width == 200 && fill.height == 200)
        let fit = try decoder.decode(bytes, options: DecodeOptions(size: .fit(width: 200, height: 200))).bitmap
        #expect(fit.width == 200 && fit.height == 150)
        // A rotated source fills in its upright frame
        let rotated = try SamplePhotos.bytes(SamplePhotos.files("orientation")[5])
        let r = try decoder.decode(rotated, options: DecodeOptions(size: .fill(width: 100, height: 50))).bitmap
        #expect(r.width == 100 && r.height == 50)
        let webp = try decoder.decode(
            SamplePhotos.bytes(SamplePhotos.files("webp")[2]),
            options: DecodeOptions(size: .fill(width: 64, height: 64))
        ).bitmap
        #expect(webp.width == 64 && webp.height == 64)
    }

    @Test("auto pixel format: grayscale JPEG decodes to Gray8, a quarter of BGRA")
    func grayIsOneByte() throws {
        // Given a grayscale JPEG
        let gray = try TestBitmaps.synthetic(width: 640, height: 480, gray: true)
        let jpeg = try ImageEncoder.encode(gray, as: .jpeg, options: EncodeOptions(quality: 90))
        // When decoded with the auto format
        let image = try decoder.decode(jpeg)
        // Then it is Gray8 and costs a quarter of the BGRA decode
        #expect(image.bitmap.format == .gray8)
        let bgra = try decoder.decode(jpeg, options: DecodeOptions(pixelFormat: .exactly(.bgra8Premultiplied)))
        #expect(image.bitmap.cost * 4 == bgra.bitmap.cost)
        #expect(PixelCompare.psnr(image.bitmap, gray) > 35)
        // And color sources asked for gray come out gray
        let colorToGray = try decoder.decode(
            SamplePhotos.bytes(SamplePhotos.files("jpeg")[0]),
            options: DecodeOptions(size: .maxPixelSize(64), pixelFormat: .exactly(.gray8)))
        #expect(colorToGray.bitmap.format == .gray8)
    }

    @Test("alpha survives: RGBA PNG and lossy-alpha WebP are premultiplied, not opaque")
    func alpha() throws {
        for path in [
            SamplePhotos.files("png").first { $0.contains("alpha") }!,
            SamplePhotos.files("webp").first { $0.contains("alpha") }!,
        ] {
            let image = try decoder.decode(SamplePhotos.bytes(path), options: DecodeOptions(size: .maxPixelSize(128)))
            #expect(!image.bitmap.isOpaque, "\(path)")
            var translucent = 0
            for y in 0..<image.bitmap.height {
                let r = image.bitmap.row(y).assumingMemoryBound(to: UInt8.self)
                for x in 0..<image.bitmap.width {
                    let a = r[4 * x + 3]
                    #expect(r[4 * x] <= a && r[4 * x + 1] <= a && r[4 * x + 2] <= a)
                    if a < 255 { translucent += 1 }
                }
            }
            #expect(translucent > 0, "\(path) has no transparent pixels after decode")
        }
    }

    @Test("every output pixel format converts")
    func pixelFormats() throws {
        let bytes = try SamplePhotos.bytes(SamplePhotos.files("png").first { $0.contains("alpha") }!)
        for format in PixelFormat.allCases {
            let b = try decoder.decode(
                bytes, options: DecodeOptions(size: .maxPixelSize(64), pixelFormat: .exactly(format))
            ).bitmap
            #expect(b.format == format)
            #expect(b.bytesPerRow == Bitmap.alignedBytesPerRow(width: b.width, format: format))
        }
    }
}
