import DarkroomSupport
import DarkroomTestSupport
import Foundation
import Testing

@testable import DarkroomImage

/// Thumbnails for HDR displays (`hdr=apply`, and `hdr=keep` of PQ and HLG sources): 10-bit BT.2100 PQ AVIFs, checked
/// by a decoder Darkroom does not use (imagecodecs' libavif 1.x, `scripts/check-hdr-display.py`) against libultrahdr's
/// own HDR decode of the same Ultra HDR files (``GainMapSamples``), Pillow's decode of their base images, and PQ and
/// HLG photos decoded by imagecodecs and pillow-heif and resized by Pillow in linear light.
@Suite(.serialized) struct HDRDisplayThumbnailTests {
    struct Check: Decodable {
        let cicp: [Int]
        let depth: Int
        let width: Int
        let height: Int
        let peakNits: Double
        let psnrPQ: Double
        let referencePeakNits: Double
    }

    /// Encodes `source`'s HDR-display thumbnail at `options` and checks it against `reference` (a `.f32` of linear
    /// light, or an sRGB PNG, in `source`'s primaries; or a PQ or HLG image, resized by the script).
    /// Makes the HDR-display thumbnail of `source` (hdr=apply; with `keep`, hdr=keep's) and checks it against
    /// `reference` with `check-hdr-display.py`.
    static func check(
        _ source: String, reference: String, options: DecodeOptions = DecodeOptions(), headroom: Double? = nil,
        keep: Bool = false
    ) throws -> Check {
        let bytes = try SamplePhotos.bytes(source)
        let encoded =
            keep
            ? try #require(try ImageEncoder.encodeHDRSignalThumbnail(bytes, options: options))
            : try ImageEncoder.encodeHDRDisplayThumbnail(bytes, options: options, displayHeadroom: headroom)
        let path = try TemporaryDirectory.make("hdr-display") + "/thumb.avif"
        try TemporaryDirectory.write(encoded, to: path)
        return try JSONDecoder().decode(
            Check.self, from: PythonReference.script("scripts/check-hdr-display.py", [path, reference, source]))
    }

    @Test func theTabulatedPQCurveIsTheFormula() {
        // Given light from 0 to 10,000 nits, densest near black where PQ is steepest
        let light = (0...20_000).map { 10_000 * pow(Double($0) / 20_000, 4) }
        // When each is coded by the encoder's table and by ST 2084's formula
        let worst = light.map { abs(Double(HDRTransfer.pqEncoder.encode(nits: Float($0))) - HDRTransfer.nitsToPQ($0)) }
            .max()!
        // Then they agree within a hundredth of a 10-bit step
        #expect(worst < 1e-5, "\(worst)")
    }

    @Test(arguments: ["iso", "xmp"])
    func theGainMapAppliedInFullIsLibultrahdrsHDRDecodeInPQ(_ writer: String) throws {
        // Given an Ultra HDR JPEG from either writer and libultrahdr's HDR decode of it (linear, full headroom)
        let source = try GainMapSamples.path(writer)
        // When its HDR-display thumbnail is made at full size with the map's full headroom
        let check = try Self.check(source, reference: GainMapSamples.path(writer, "-hdr.f32"))
        // Then it is a 10-bit BT.2020 PQ AVIF (CICP 9/16/9, full range) whose light is libultrahdr's, converted
        // to BT.2020 with SDR white at 203 nits, and brighter than SDR white where the map lifts it
        print("hdr apply \(writer): \(check)")
        #expect(check.cicp == [9, 16, 9, 1], "\(check.cicp)")
        #expect(check.depth == 10)
        #expect(check.width == 640 && check.height == 400)
        #expect(check.psnrPQ >= 40, "\(writer): \(check.psnrPQ) dB")
        #expect(check.peakNits > 2.5 * HDRTransfer.referenceWhiteNits, "\(check.peakNits) nits")
    }

    @Test(arguments: ["iso", "xmp"])
    func atNoHeadroomItIsTheBaseImageAtSDRWhite(_ writer: String) throws {
        // Given an Ultra HDR JPEG and its base image as Pillow decodes it
        let source = try GainMapSamples.path(writer)
        // When its HDR-display thumbnail is made for a display with no headroom
        let check = try Self.check(source, reference: GainMapSamples.path(writer, "-base.png"), headroom: 0)
        print("hdr apply \(writer) at headroom 0: \(check)")
        // Then its light is the base image's, nothing above SDR white (203 nits)
        #expect(check.psnrPQ >= 40, "\(writer): \(check.psnrPQ) dB")
        #expect(check.peakNits <= HDRTransfer.referenceWhiteNits * 1.05, "\(check.peakNits) nits")
    }

    @Test func thePeakClimbsWithTheDisplaysHeadroom() throws {
        // Given the XMP file (its map applies fully from log2(1000 / 203) ≈ 2.3 stops)
        let source = try GainMapSamples.path("xmp")
        let reference = try GainMapSamples.path("xmp", "-base.png")
        // When thumbnails are made for displays with 0, 1 and 2 stops of headroom
        let peaks = try [0.0, 1, 2].map {
            try Self.check(source, reference: reference, options: DecodeOptions(size: .maxPixelSize(640)), headroom: $0)
                .peakNits
        }
        print("hdr apply peaks at 0, 1, 2 stops: \(peaks)")
        // Then each is brighter than the last, none past the display's own peak
        #expect(peaks[0] < peaks[1] && peaks[1] < peaks[2], "\(peaks)")
        for (i, peak) in peaks.enumerated() {
            #expect(peak <= HDRTransfer.referenceWhiteNits * exp2(Double(i)) * 1.05, "\(i) stops: \(peak) nits")
        }
    }

    @Test func anSDRImageKeepsItsLightAtSDRWhite() throws {
        // Given an SDR PNG (no gain map)
        let source = try GainMapSamples.path("xmp", "-base.png")
        // When its HDR-display thumbnail is made
        let check = try Self.check(source, reference: source)
        print("hdr apply SDR PNG: \(check)")
        // Then its light is the PNG's, SDR white at 203 nits
        #expect(check.cicp == [9, 16, 9, 1] && check.depth == 10)
        #expect(check.psnrPQ >= 40, "\(check.psnrPQ) dB")
        #expect(check.peakNits <= HDRTransfer.referenceWhiteNits * 1.05, "\(check.peakNits) nits")
    }

    @Test func darkroomReadsItsOwnOutputAsPQAndToneMapsItBack() throws {
        // Given the XMP file's base image made into an HDR-display thumbnail (SDR light carried in PQ)
        let base = try SamplePhotos.bytes(GainMapSamples.path("xmp", "-base.png"))
        let pq = try ImageEncoder.encodeHDRDisplayThumbnail(base, options: DecodeOptions(size: .maxPixelSize(320)))
        // When Darkroom probes it and decodes it to SDR
        let probe = try ImageProber.probe(pq)
        let sdr = try ImageDecoder().decode(
            pq, options: DecodeOptions(size: .maxPixelSize(320), pixelFormat: .exactly(.rgba8)))
        let original = try ImageDecoder().decode(
            base, options: DecodeOptions(size: .maxPixelSize(320), pixelFormat: .exactly(.rgba8)))
        // Then the probe says PQ in BT.2020, and the tone map gives the image back
        #expect(probe.hdr?.transfer == "pq" && probe.hdr?.primaries == 9, "\(String(describing: probe.hdr))")
        let psnr = PixelCompare.psnr(sdr.bitmap, original.bitmap)
        print("hdr apply round trip: \(psnr) dB")
        #expect(psnr >= 33, "\(psnr) dB")
    }

    @Test(arguments: ["pq", "hlg"], ["avif", "heic", "png"])
    func pqAndHLGSourcesKeepTheirLight(_ transfer: String, _ format: String) throws {
        // Given a photo whose highlights reach past SDR white, in BT.2020 PQ or HLG (colour-science; avifenc,
        // libheif, or a 16-bit PNG with cICP), 640 × 400
        let source = try HDRToneMappingTests.sample("colorfulcups-2560x1600-highlights-\(transfer).\(format)")
        // When its HDR-display thumbnail is made at 128 px with no headroom given, reduced in blocks as usual and
        // reduced in full (a shrink-on-load margin past the source's size)
        let check = try Self.check(source, reference: source, options: DecodeOptions(size: .maxPixelSize(128)))
        let whole = try Self.check(
            source, reference: source, options: DecodeOptions(size: .maxPixelSize(128), shrinkOnLoadMargin: 8))
        print(
            "hdr keep \(transfer) \(format): \(check.psnrPQ) dB, whole \(whole.psnrPQ) dB, peak \(check.peakNits) of \(check.referencePeakNits) nits"
        )
        // Then each is a 10-bit PQ AVIF of the source's display light resized by Pillow's Lanczos filter in linear
        // light (HLG as a 1,000-nit display shows it), its highlights as bright as the reference's
        #expect(check.cicp == [9, 16, 9, 1] && check.depth == 10 && check.width == 128 && check.height == 80)
        // (the rest: AV1 at quality 85, and for HEIC libheif's 4:2:0 chroma, which Darkroom does not interpolate)
        #expect(check.psnrPQ >= 35, "\(check.psnrPQ) dB")
        #expect(whole.psnrPQ >= 39, "\(whole.psnrPQ) dB")
        // (HEIC within 6 %: its 4:2:0 chroma taken by nearest sample, where the reference's libheif interpolates it,
        // leaves the most saturated highlights' brightest channel a little higher; 5.3 % for PQ, 3.1 % while the
        // planes were converted with BT.2020's weights instead of the BT.601 libheif coded them with)
        let peakTolerance = format == "heic" ? 0.06 : 0.05
        #expect(
            abs(check.peakNits - check.referencePeakNits) <= peakTolerance * check.referencePeakNits, "\(check)")
        #expect(check.referencePeakNits > 1.5 * HDRTransfer.referenceWhiteNits, "\(check)")
    }

    @Test(arguments: ["pq", "hlg"], [".jxl", ".lossless.jxl", "-icc.tif", "-icc.png", "-icc.avif", "-icc.heic"])
    func jpegXLAndICCDescribedSourcesKeepTheirLight(_ transfer: String, _ file: String) throws {
        // Given the highlights photo's PQ or HLG signal as JPEG XL (cjxl, lossy and lossless) and as 16-bit TIFF
        // and PNG and 10-bit AVIF and HEIC described by libjxl's ICC profile alone, and the 16-bit PNG with cICP of
        // the same signal
        let name = "colorfulcups-2560x1600-highlights-\(transfer)"
        let source = try HDRToneMappingTests.sample(name + file)
        let reference = try HDRToneMappingTests.sample(name + ".png")
        // When its HDR-display thumbnail is made at 128 px
        let check = try Self.check(source, reference: reference, options: DecodeOptions(size: .maxPixelSize(128)))
        print(
            "hdr keep \(transfer)\(file): \(check.psnrPQ) dB, peak \(check.peakNits) of \(check.referencePeakNits) nits"
        )
        // Then it is a 10-bit PQ AVIF of the PNG's display light resized by Pillow, as bright at its peak
        #expect(check.cicp == [9, 16, 9, 1] && check.depth == 10 && check.width == 128 && check.height == 80)
        #expect(check.psnrPQ >= 35, "\(check.psnrPQ) dB")
        // (the HEIC is 4:2:0, the reference the PNG's full chroma: its brightest channel moves by up to 6 %)
        let tolerance = file.hasSuffix(".heic") ? 0.07 : 0.05
        #expect(abs(check.peakNits - check.referencePeakNits) <= tolerance * check.referencePeakNits, "\(check)")
    }

    @Test(arguments: [".avif", ".heic", ".lossless.jxl", "-icc.tif", "-icc.png"])
    func grayPQSourcesKeepTheirLightAsGray(_ file: String) throws {
        // Given the photo's luma in PQ as a 4:0:0 AVIF and HEIC, a lossless gray JPEG XL and a 16-bit gray TIFF and
        // PNG described by libjxl's gray PQ profile, and the gray 16-bit PNG with cICP of the same signal
        let name = "colorfulcups-2560x1600-pq-gray"
        let source = try HDRToneMappingTests.sample(name + file)
        let reference = try HDRToneMappingTests.sample(name + ".png")
        // When its HDR-display thumbnail is made at 128 px
        let check = try Self.check(source, reference: reference, options: DecodeOptions(size: .maxPixelSize(128)))
        print("hdr keep gray\(file): \(check.psnrPQ) dB, peak \(check.peakNits) of \(check.referencePeakNits) nits")
        // Then it is a 10-bit PQ AVIF of the gray PNG's light resized by Pillow, as bright at its peak
        #expect(check.cicp == [9, 16, 9, 1] && check.depth == 10 && check.width == 128 && check.height == 80)
        #expect(check.psnrPQ >= 35, "\(check.psnrPQ) dB")
        #expect(abs(check.peakNits - check.referencePeakNits) <= 0.05 * check.referencePeakNits, "\(check)")
    }

    @Test func theChosenPageOfAnHDRTIFFIsTheOneKeptAndToneMapped() throws {
        // Given a two-page TIFF (tiffcp): an SDR photo's HLG signal, then its PQ signal, each 16-bit RGB described
        // by libjxl's ICC profile alone
        let name = "colorfulcups-2560x1600-"
        let path = try TemporaryDirectory.make("hdr-pages") + "/hlg-then-pq.tif"
        let pages = try ["hlg-icc.tif", "pq-icc.tif"].map { try HDRToneMappingTests.sample(name + $0) }
        _ = try ReferenceTool.run("tiffcp", pages + [path])
        var options = DecodeOptions(size: .maxPixelSize(128))
        options.geometry.page = 1
        // When page 1 is kept in its light, and decoded to SDR
        let kept = try Self.check(
            path, reference: HDRToneMappingTests.sample(name + "pq.png"), options: options, keep: true)
        var sdr = options
        sdr.geometry.pixelFormat = .exactly(.rgba8)
        let decoded = try ImageDecoder().decode(try SamplePhotos.bytes(path), options: sdr)
        let original = try ImageDecoder().decode(
            try SamplePhotos.bytes(HDRToneMappingTests.sample(name + "sdr.png")),
            options: DecodeOptions(size: .maxPixelSize(128), pixelFormat: .exactly(.rgba8)))
        // Then the kept thumbnail is the PQ page's light in PQ (page 0 would have made HLG), and the SDR one is the
        // photo
        let psnr = PixelCompare.psnr(decoded.bitmap, original.bitmap)
        print("TIFF page 1 kept: \(kept); SDR \(psnr) dB")
        #expect(decoded.probe.pageCount == 2 && decoded.probe.hdr?.transfer == "pq")
        #expect(kept.cicp == [9, 16, 9, 1] && kept.width == 128, "\(kept)")
        #expect(kept.psnrPQ >= 35, "\(kept.psnrPQ) dB")
        #expect(psnr >= 30, "\(psnr) dB")
    }

    @Test func aTurnedOrCroppedPQPhotoIsTheSamePictureUpright() throws {
        // Given the PQ photo stored turned (irot), with a clean aperture, and its aperture's region coded alone
        let name = "colorfulcups-2560x1600-highlights-pq"
        let files = try ["", "-irot", "-clap", "-cropped"].map {
            try SamplePhotos.bytes(HDRToneMappingTests.sample(name + $0 + ".avif"))
        }
        // When each is kept in PQ at 128 px (AV1 at quality 100: the geometry is the question, not the coding) and
        // decoded back (Darkroom's tone map to SDR)
        let options = DecodeOptions(size: .maxPixelSize(128))
        let decoded = try files.map { bytes in
            try ImageDecoder().decode(
                try #require(
                    try ImageEncoder.encodeHDRSignalThumbnail(
                        bytes, options: options, encode: EncodeOptions(quality: 100))),
                options: DecodeOptions(pixelFormat: .exactly(.rgba8)))
        }
        // Then the turned one is the upright one, and the aperture the region coded alone
        #expect(decoded[1].bitmap.width == 128 && decoded[1].bitmap.height == 80)
        let turned = PixelCompare.psnr(decoded[1].bitmap, decoded[0].bitmap)
        let cropped = PixelCompare.psnr(decoded[2].bitmap, decoded[3].bitmap)
        #expect(turned >= 45 && cropped >= 45, "turned \(turned) dB, cropped \(cropped) dB")
    }

    @Test func aDisplayHeadroomRollsTheHighlightsOff() throws {
        // Given the PQ photo with highlights
        let source = try HDRToneMappingTests.sample("colorfulcups-2560x1600-highlights-pq.avif")
        // When its thumbnail is made for a display with half a stop of headroom (287 nits), and with its whole range
        let options = DecodeOptions(size: .maxPixelSize(128))
        let full = try Self.check(source, reference: source, options: options)
        let halfStop = try Self.check(source, reference: source, options: options, headroom: 0.5)
        // Then the highlights end at the display's peak instead of the content's, and the rest keeps its light
        let peak = HDRTransfer.referenceWhiteNits * exp2(0.5)
        #expect(halfStop.peakNits <= peak * 1.03 && halfStop.peakNits >= peak * 0.85, "\(halfStop)")
        #expect(full.peakNits > peak * 1.2, "\(full)")
        #expect(halfStop.psnrPQ >= 30 && halfStop.psnrPQ < full.psnrPQ, "\(halfStop.psnrPQ) of \(full.psnrPQ) dB")
    }

    @Test(arguments: [".avif", ".heic", ".png", ".jxl", "-icc.tif"])
    func keepMakesHLGOfHLG(_ file: String) throws {
        // Given the highlights photo in HLG, as AVIF, HEIC, PNG with cICP, JPEG XL and TIFF with libjxl's profile
        let name = "colorfulcups-2560x1600-highlights-hlg"
        let source = try HDRToneMappingTests.sample(name + file)
        // (the JPEG XL and the TIFF are checked against the PNG, which holds the same signal)
        let reference = try HDRToneMappingTests.sample(
            [".jxl", "-icc.tif"].contains(file) ? name + ".png" : name + file)
        // When hdr=keep's AVIF is made at 128 px
        let check = try Self.check(
            source, reference: reference, options: DecodeOptions(size: .maxPixelSize(128)), keep: true)
        print(
            "hdr keep hlg\(file) as HLG: \(check.psnrPQ) dB, peak \(check.peakNits) of \(check.referencePeakNits) nits")
        // Then it is a 10-bit BT.2100 HLG AVIF whose light on a 1,000-nit display is the source's scene light
        // resized by Pillow and then shown (resized as scene light, as a smaller HLG capture of the scene would be:
        // 33 dB from resizing the displayed light instead, on this photo)
        #expect(check.cicp == [9, 18, 9, 1] && check.depth == 10 && check.width == 128 && check.height == 80)
        #expect(check.psnrPQ >= 35, "\(check.psnrPQ) dB")
        #expect(abs(check.peakNits - check.referencePeakNits) <= 0.05 * check.referencePeakNits, "\(check)")
    }

    @Test func keepMakesPQOfPQAndDeclinesTheRest() throws {
        // Given a PQ AVIF, an SDR JPEG and options that crop
        let pq = try SamplePhotos.bytes(HDRToneMappingTests.sample("colorfulcups-2560x1600-highlights-pq.avif"))
        let jpeg = try SamplePhotos.bytes("jpeg/colorfulcups-2560x1600.jpg")
        let options = DecodeOptions(size: .maxPixelSize(96))
        // When hdr=keep's encoder is asked for each
        let kept = try #require(try ImageEncoder.encodeHDRSignalThumbnail(pq, options: options))
        let sdr = try ImageEncoder.encodeHDRSignalThumbnail(jpeg, options: options)
        let cropped = try ImageEncoder.encodeHDRSignalThumbnail(
            pq, options: DecodeOptions(size: .cover(width: 64, height: 64)))
        // Then the PQ source gives what hdr=apply gives with no headroom (an HLG source stays HLG: above), and the
        // others fall back to SDR (nil)
        #expect(kept == (try ImageEncoder.encodeHDRDisplayThumbnail(pq, options: options)))
        #expect(try ImageProber.probe(kept).hdr?.transfer == "pq")
        #expect(sdr == nil && cropped == nil)
    }

    @Test func whatItCannotMakeIsATypedError() throws {
        // Given an Ultra HDR JPEG and a PQ AVIF
        let bytes = try SamplePhotos.bytes(GainMapSamples.path("xmp"))
        let pq = try SamplePhotos.bytes(HDRToneMappingTests.sample("colorfulcups-2560x1600-pq.avif"))
        // When an HDR output is asked of either cropped or covered
        let failures: [DarkroomImageError] = [bytes, pq].flatMap { bytes in
            [
                DecodeOptions(size: .cover(width: 64, height: 64)),
                DecodeOptions(
                    geometry: OutputGeometry(
                        size: .maxPixelSize(64), crop: CropRegion.corners(left: 0, top: 0, right: 100, bottom: 100))),
            ].map { options in Self.error { try ImageEncoder.encodeHDRDisplayThumbnail(bytes, options: options) } }
        }
        // Then each is refused as an unsupported feature that says why
        #expect(failures.count == 4)
        for failure in failures {
            #expect(failure.code == .unsupportedFeature && failure.message.contains("whole image"), "\(failure)")
        }
    }

    /// What `body` throws, as Darkroom's error; one with code `.empty` when it throws nothing or something else.
    static func error(_ body: () throws -> [UInt8]) -> DarkroomImageError {
        do {
            _ = try body()
            return DarkroomImageError(.empty, "no error")
        } catch {
            return error as? DarkroomImageError ?? DarkroomImageError(.empty, "\(error)")
        }
    }
}
