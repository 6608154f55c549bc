import DarkroomImage
import DarkroomTestSupport
import Foundation
import Testing

@testable import Darkroom

/// What SDR screens are given of an Ultra HDR photo: through the pipeline (what `darkroom view` and the server's
/// gallery draw) and through the desktop thumbnailer (the freedesktop cache's PNGs), its SDR base exactly, as
/// when the gain map is cut off — never a mix with the map, never its bytes mistaken for the image.
@Suite struct UltraHDRShownAsSDRTests {
    static let sample = Result { try GainMapSamples.assembled(from: "jpeg/colorfulcups-2560x1600.jpg") }

    @Test func thePipelineDrawsTheBaseImage() async throws {
        // Given an Ultra HDR JPEG, and its primary image alone (the file cut where the gain map starts)
        let (bytes, primaryLength) = try Self.sample.get()
        let pipeline = makePipeline()
        // When both are loaded at 256 px, as a viewer cell or the gallery asks
        let hdr = try await pipeline.image(
            for: ImageRequest(source: .data(id: "ultrahdr", bytes: bytes), size: .maxPixelSize(256)))
        let base = try await pipeline.image(
            for: ImageRequest(
                source: .data(id: "primary", bytes: Array(bytes[..<primaryLength])), size: .maxPixelSize(256)))
        // Then the two are the same pixels
        let a = try #require(hdr.bitmap)
        let b = try #require(base.bitmap)
        #expect(a.width == 256 && a.pixelsEqual(b))
    }

    @Test func theDesktopThumbnailerWritesTheBaseImage() throws {
        // Given the same two files
        let (bytes, primaryLength) = try Self.sample.get()
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try TemporaryDirectory.write(bytes, to: directory.path + "/ultrahdr.jpg")
        try TemporaryDirectory.write(Array(bytes[..<primaryLength]), to: directory.path + "/primary.jpg")
        // When the desktop thumbnailer makes a 256 px PNG of each
        for name in ["ultrahdr", "primary"] {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: try SamplePhotos.darkroomBinary())
            process.arguments = [
                "thumbnailer", "-s", "256", directory.path + "/\(name).jpg", directory.path + "/\(name).png",
            ]
            try process.run()
            process.waitUntilExit()
            #expect(process.terminationStatus == 0)
        }
        // Then the PNGs hold the same pixels
        let decode = { (name: String) in
            try ImageDecoder().decode(
                SamplePhotos.bytes(directory.path + "/\(name).png"),
                options: DecodeOptions(pixelFormat: .exactly(.rgba8)))
        }
        let (hdr, base) = (try decode("ultrahdr"), try decode("primary"))
        #expect(hdr.bitmap.width == 256 && hdr.bitmap.pixelsEqual(base.bitmap))
    }
}
