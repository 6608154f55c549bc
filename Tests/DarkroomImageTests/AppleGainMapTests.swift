import DarkroomSupport
import DarkroomTestSupport
import Foundation
import Testing

@testable import DarkroomImage

/// iPhone HEIC gain maps: the auxiliary image found, the headroom read from the maker note as ExifTool reads it, the
/// SDR decode left the base image, and the map applied as apple-hdr-heic applies it (``AppleGainMapSamples``: the
/// file laid out box by box as an iPhone writes it, the rendition made by that package from pillow-heif's and
/// ExifTool's reading of it).
@Suite(.serialized) struct AppleGainMapTests {
    struct Reference: Decodable {
        let maker33: Double
        let maker48: Double
        let headroom: Double
        let map: [Int]
    }

    static func reference() throws -> Reference {
        try JSONDecoder().decode(
            Reference.self, from: Data(contentsOf: URL(fileURLWithPath: AppleGainMapSamples.path(".json"))))
    }

    @Test func theAuxiliaryGainMapAndTheMakerNotesHeadroomAreRead() throws {
        // Given an iPhone-style HEIC and what ExifTool and apple-hdr-heic read of it
        let bytes = try SamplePhotos.bytes(AppleGainMapSamples.path())
        let reference = try Self.reference()
        // When it is probed for a gain map
        let details = try #require(ImageProber.gainMap(of: bytes))
        // Then the auxiliary image is the map, at its stored size, and the headroom is the one Apple's rule gives
        #expect(details.container == "heif-aux" && details.metadataFormat == "apple-makernote")
        #expect([details.width, details.height] == reference.map && details.channels == 1)
        #expect(details.warning == nil && details.isUsable)
        let metadata = try #require(details.metadata)
        #expect(abs(exp2(metadata.alternateHeadroom) - reference.headroom) < 1e-5, "\(metadata) \(reference)")
        let apple = AppleHDRHeadroom(maker33: reference.maker33, maker48: reference.maker48)
        #expect(abs(apple.headroom - reference.headroom) < 1e-9)
    }

    @Test func everyBranchOfApplesRuleGivesItsStops() {
        // Given maker-note values in each of the rule's four branches, and one whose stops fall below 0
        let cases: [(Double, Double, Double)] = [
            (0.5, 0.005, -20 * 0.005 + 1.8), (0.5, 0.5, -0.101 * 0.5 + 1.601),
            (1.2, 0.005, -70 * 0.005 + 3.0), (1.2, 1.1846, -0.303 * 1.1846 + 2.303), (1.2, 9, 0),
        ]
        for (m33, m48, stops) in cases {
            // When the headroom is computed
            let headroom = AppleHDRHeadroom(maker33: m33, maker48: m48).headroom
            // Then it is 2 to the branch's stops, never below 1
            #expect(abs(headroom - exp2(stops)) < 1e-12, "\(m33) \(m48)")
        }
    }

    @Test func theSDRDecodeIsTheBaseImage() throws {
        // Given the HEIC, and the same file with its maker note's signature broken (the map then cannot apply)
        let bytes = try SamplePhotos.bytes(AppleGainMapSamples.path())
        var damaged = bytes
        let signature = Array("Apple iOS".utf8)
        let at = try #require(
            (0...(bytes.count - signature.count)).first { bytes[$0..<($0 + signature.count)].elementsEqual(signature) })
        damaged[at + 8] = UInt8(ascii: "X")
        // When both are decoded to SDR, and the damaged one probed
        let options = DecodeOptions(size: .maxPixelSize(320), pixelFormat: .exactly(.rgba8))
        let sdr = try ImageDecoder().decode(bytes, options: options)
        let base = try ImageDecoder().decode(damaged, options: options)
        let details = try #require(ImageProber.gainMap(of: damaged))
        // Then the SDR decode is the base image either way, and the damaged file's map is reported with a warning
        #expect(PixelCompare.psnr(sdr.bitmap, base.bitmap) == .infinity)
        #expect(!details.isUsable && details.warning?.contains("0x21") == true, "\(details)")
        // and an HDR output of it is the base image's light (no map applied)
        let check = try HDRDisplayThumbnailTests.check(
            AppleGainMapSamples.path(), reference: AppleGainMapSamples.path("-hdr.f32"))
        let path = try TemporaryDirectory.make("apple-damaged") + "/damaged.heic"
        try TemporaryDirectory.write(damaged, to: path)
        let flat = try HDRDisplayThumbnailTests.check(path, reference: AppleGainMapSamples.path("-hdr.f32"))
        #expect(flat.peakNits <= HDRTransfer.referenceWhiteNits * 1.05 && check.peakNits > 2 * flat.peakNits)
    }

    @Test func theGainMapAppliedInFullIsAppleHDRHEICsRendition() throws {
        // Given the HEIC and apple-hdr-heic's rendition of it at full headroom (linear Display P3)
        let source = try AppleGainMapSamples.path()
        // When its HDR-display thumbnail is made at full size with the map's full headroom
        let check = try HDRDisplayThumbnailTests.check(source, reference: AppleGainMapSamples.path("-hdr.f32"))
        print("hdr apply apple: \(check)")
        // Then it is a 10-bit BT.2020 PQ AVIF whose light is the reference's, as bright at its peak
        #expect(check.cicp == [9, 16, 9, 1] && check.depth == 10 && check.width == 640 && check.height == 400)
        #expect(check.psnrPQ >= 40, "\(check.psnrPQ) dB")
        #expect(abs(check.peakNits - check.referencePeakNits) <= 0.05 * check.referencePeakNits, "\(check)")
        #expect(check.peakNits > 2 * HDRTransfer.referenceWhiteNits, "\(check)")
    }

    @Test func aDisplayWithLessHeadroomGetsLessGain() throws {
        // Given the HEIC
        let source = try AppleGainMapSamples.path()
        // When its HDR-display thumbnail is made for a display with one stop of headroom
        let check = try HDRDisplayThumbnailTests.check(
            source, reference: AppleGainMapSamples.path("-hdr-1stop.f32"), headroom: 1)
        print("hdr apply apple at headroom 1: \(check)")
        // Then its light is the reference's with each pixel's gain taken to the weight 1 / log2 headroom (ISO
        // 21496-1's weighting), no brighter than the display's peak (406 nits)
        #expect(check.psnrPQ >= 40, "\(check.psnrPQ) dB")
        #expect(abs(check.peakNits - check.referencePeakNits) <= 0.05 * check.referencePeakNits, "\(check)")
        #expect(check.peakNits <= 1.03 * HDRTransfer.referenceWhiteNits * 2, "\(check)")
    }
}

extension AppleGainMapTests {
    @Test func aKeptThumbnailIsUltraHDRThatLibultrahdrReads() throws {
        // Given the HEIC and apple-hdr-heic's rendition of it
        let source = try AppleGainMapSamples.path()
        let bytes = try SamplePhotos.bytes(source)
        // When a 256 px JPEG thumbnail keeps its HDR
        let thumbnail = try #require(
            try ImageEncoder.encodeUltraHDRThumbnail(bytes, options: DecodeOptions(size: .maxPixelSize(256))))
        // Then it is an Ultra HDR JPEG: its map at the source's proportion (half), ISO 21496-1 gains up to the
        // headroom
        let details = try #require(ImageProber.gainMap(of: thumbnail))
        #expect(details.isUsable && details.container == "jpeg-mpf" && details.metadataFormat == "iso21496-1")
        #expect(details.width == 128 && details.height == 80 && details.channels == 1, "\(details)")
        let metadata = try #require(details.metadata)
        #expect(abs(exp2(metadata.alternateHeadroom) - (try Self.reference().headroom)) < 1e-3, "\(metadata)")
        // and libultrahdr's HDR rendition of it is apple-hdr-heic's reduced, as closely as the SDR ones agree
        let path = try TemporaryDirectory.make("apple-keep") + "/thumb.jpg"
        try TemporaryDirectory.write(thumbnail, to: path)
        let check = try JSONDecoder().decode(
            GainMapTests.ThumbnailCheck.self,
            from: PythonReference.script(
                "scripts/check-ultrahdr-thumbnail.py", [path, source, AppleGainMapSamples.path("-hdr.f32")]))
        print("apple keep: \(check)")
        #expect(check.width == 256 && check.height == 160 && check.gainMapWidth == 128)
        #expect(check.sdrPSNR >= 30, "SDR \(check.sdrPSNR) dB")
        #expect(check.hdrPSNR >= 30 && check.hdrPSNR >= check.sdrPSNR - 4, "HDR \(check.hdrPSNR), SDR \(check.sdrPSNR)")
    }
}
