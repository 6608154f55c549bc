import DarkroomTestSupport
import Foundation
import Testing

@testable import DarkroomImage

/// CMYK JPEGs with a press profile whose perceptual table is not its colorimetric one (as commercial FOGRA39 and
/// SWOP profiles are built), against lcms2's own conversion of the same file through Pillow's ImageCms, perceptual:
/// the rendering browsers (skcms reads only A2B0) and ImageCms's default show.
@Suite("CMYK press profiles")
struct CMYKPressProfileTests {
    @Test("a press profile's perceptual table is the one used, in full and at thumbnail size")
    func perceptualTable() throws {
        let directory = try TemporaryDirectory("cmyk")
        defer { directory.remove() }
        // Given the CMYK sample re-saved (Adobe-style, inverted) with a copy of its profile whose perceptual table
        // renders far from the colorimetric one
        let sample = try #require(
            SamplePhotos.files("icc").first { $0.lowercased().contains("cmyk") && $0.hasSuffix(".jpg") })
        let file = directory.file("press.jpg")
        let apart = try PythonReference.script("scripts/make-press-cmyk.py", [sample, file])
        let renderingsApart = try #require(
            Double(String(decoding: apart, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)))
        try #require(renderingsApart < 30, "the two renderings must differ for this test to mean anything")
        // When Darkroom converts it to sRGB at full size and as a 256 px thumbnail
        let full = try ReferenceSuites.psnrAgainstPillow(file, size: .original, in: directory.path)
        let thumbnail = try ReferenceSuites.psnrAgainstPillow(file, size: .maxPixelSize(256), in: directory.path)
        // Then both match ImageCms's perceptual conversion (the colorimetric one is \(renderingsApart) dB away)
        print("cmyk press profile: full \(full) dB, 256 px \(thumbnail) dB; renderings \(renderingsApart) dB apart")
        #expect(full >= 45, "\(full) dB")
        #expect(thumbnail >= 38, "\(thumbnail) dB")
    }

    @Test("the sample as delivered, whose tables agree, matches ImageCms's perceptual conversion too")
    func sampleAsDelivered() throws {
        let directory = try TemporaryDirectory("cmyk")
        defer { directory.remove() }
        // Given the Coated FOGRA39 sample
        let sample = try #require(
            SamplePhotos.files("icc").first { $0.lowercased().contains("cmyk") && $0.hasSuffix(".jpg") })
        // When Darkroom converts it to sRGB at full size
        let full = try ReferenceSuites.psnrAgainstPillow(sample, size: .original, in: directory.path)
        // Then it matches lcms2's perceptual conversion
        print("cmyk FOGRA39 sample: full \(full) dB")
        #expect(full >= 45, "\(full) dB")
    }
}
