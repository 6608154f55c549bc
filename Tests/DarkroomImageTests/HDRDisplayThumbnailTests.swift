import DarkroomSupport
import DarkroomTestSupport
import Foundation
import Testing

@testable import DarkroomImage

/// Thumbnails for HDR displays (`hdr=apply`): 10-bit BT.2100 PQ AVIFs, checked by a decoder Darkroom does not use
/// (imagecodecs' libavif 1.x, `scripts/check-hdr-display.py`) against libultrahdr's own HDR decode of the same
/// Ultra HDR files (``GainMapSamples``) and Pillow's decode of their base images.
@Suite(.serialized) struct HDRDisplayThumbnailTests {
    struct Check: Decodable {
        let cicp: [Int]
        let depth: Int
        let width: Int
        let height: Int
        let peakNits: Double
        let psnrPQ: Double
    }

    /// Encodes `source`'s HDR-display thumbnail at `options` and checks it against `reference` (a `.f32` of linear
    /// light, or an sRGB PNG) in `source`'s primaries.
    static func check(
        _ source: String, reference: String, options: DecodeOptions = DecodeOptions(), headroom: Double? = nil
    ) throws -> Check {
        let encoded = try ImageEncoder.encodeHDRDisplayThumbnail(
            SamplePhotos.bytes(source), options: options, displayHeadroom: headroom)
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

    @Test func whatItCannotMakeIsATypedError() throws {
        // Given an Ultra HDR JPEG, and a PQ AVIF (Darkroom's own HDR output)
        let bytes = try SamplePhotos.bytes(GainMapSamples.path("xmp"))
        let pq = try ImageEncoder.encodeHDRDisplayThumbnail(bytes, options: DecodeOptions(size: .maxPixelSize(64)))
        // When an HDR output is asked of the JPEG cropped or covered, or of the PQ image at all
        let failures: [DarkroomImageError] = [
            DecodeOptions(size: .cover(width: 64, height: 64)),
            DecodeOptions(
                geometry: OutputGeometry(
                    size: .maxPixelSize(64), crop: CropRegion.corners(left: 0, top: 0, right: 100, bottom: 100))),
        ].map { options in Self.error { try ImageEncoder.encodeHDRDisplayThumbnail(bytes, options: options) } }
        let fromPQ = Self.error { try ImageEncoder.encodeHDRDisplayThumbnail(pq, options: DecodeOptions()) }
        // Then each is refused as an unsupported feature that says why
        for failure in failures {
            #expect(failure.code == .unsupportedFeature && failure.message.contains("whole image"), "\(failure)")
        }
        #expect(fromPQ.code == .unsupportedFeature && fromPQ.message.contains("PQ"), "\(fromPQ)")
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
