import DarkroomImage
import Testing

@testable import DarkroomServer

@Suite("RenderCost")
struct RenderCostTests {
    @Test("a baseline JPEG's estimate covers its file, the DC reader's planes, a strip and the output twice")
    func baselineJPEG() throws {
        // Given a 4032×3024 baseline JPEG's header, asked for at 256 px
        let probe = try ImageProber.probe(fileAt: ServerHarness.photos + "/jpeg-12mp/path-4032x3024.jpg")
        #expect(probe.width == 4032 && probe.height == 3024 && !probe.isProgressive)
        let parameters = try ThumbnailParameters(
            query: [("src", "a.jpg"), ("w", "256"), ("h", "256")],
            limits: ServerConfiguration.Limits())
        // When its render cost is estimated
        let cost = RenderCost.estimate(probe: probe, fileBytes: 3_000_000, parameters: parameters)
        // Then it counts the file, the reader's 504×378 luma and 2 × 504×378 chroma samples, and 2 × 256×192 × 4
        #expect(RenderCost.dcReaderBytes(width: 4032, height: 3024) == 504 * 378 * 3)
        #expect(cost >= 3_000_000 + 504 * 378 * 3 + 256 * 192 * 4 * 2)
        #expect(cost < 3_000_000 + 2_000_000, "an estimate, not a full-image allocation: \(cost)")
    }

    @Test("HEIC and AVIF estimates count the full-size decode the codecs need, measured against PixelMemory")
    func heifFormats() throws {
        let parameters = try ThumbnailParameters(
            query: [("src", "a"), ("w", "512"), ("h", "512")], limits: ServerConfiguration.Limits())
        for sample in ["heic/onestandsout-4032x3024-grid512.heic", "avif/path-4032x3024.avif"] {
            // Given a 12 MP HEIC / AVIF header
            let path = ServerHarness.photos + "/" + sample
            let probe = try ImageProber.probe(fileAt: path)
            let bytes = try FileBytes.read(path)
            // When it is estimated and then decoded to 512 px (too large for the HEIC's thumbnail item)
            let cost = RenderCost.estimate(probe: probe, fileBytes: bytes.count, parameters: parameters)
            let (_, meter) = try PixelMemory.measure {
                try ImageDecoder().decode(bytes, options: DecodeOptions(size: .fit(width: 512, height: 512)))
            }
            // Then the estimate covers what the decode counted, and is of the full image's order
            #expect(cost >= meter.peakBytes, "\(sample): estimate \(cost) < measured \(meter.peakBytes)")
            #expect(cost >= 4032 * 3024 * 3 / 2, "\(sample): \(cost)")
        }
    }
}
