import DarkroomImage
import DarkroomTestSupport
import Foundation
import Testing

@testable import DarkroomWorkers

/// The HDR outputs made from a source's bytes (an Ultra HDR JPEG, a PQ AVIF, an SDR AVIF for HDR displays) come out
/// of a decode worker as the library writes them here, byte for byte; what an output declines it declines there too,
/// and what it refuses is the same typed error.
@Suite struct IsolatedHDRTests {
    @Test func everyHDROutputFromAWorkerIsTheLibrarys() throws {
        // Given an Ultra HDR JPEG, a PQ AVIF (the library's HDR-display output of an SDR photo) and a plain JPEG,
        // and a decoder isolated by a pool of one worker
        let ultraHDR = try GainMapSamples.assembled(from: "jpeg/colorfulcups-2560x1600.jpg").bytes
        let plain = try SamplePhotos.bytes(SamplePhotos.path("jpeg/kite-2560x1600.jpg"))
        let options = DecodeOptions(size: .maxPixelSize(160))
        let pq = try ImageEncoder.encodeHDRDisplayThumbnail(plain, options: DecodeOptions(size: .maxPixelSize(320)))
        let pool = try DecodeWorkerPoolTests.pool(workers: 1)
        let isolated = ImageDecoder(isolation: pool)
        let encode = EncodeOptions(quality: 80, speed: 8)
        let cases: [(String, [UInt8], HDRThumbnailRequest.Output, declined: Bool)] = [
            ("Ultra HDR kept", ultraHDR, .ultraHDR, false),
            ("Ultra HDR applied in full", ultraHDR, .display(headroom: nil), false),
            ("Ultra HDR applied for 1 stop", ultraHDR, .display(headroom: 1), false),
            ("PQ kept", pq, .signal, false),
            ("SDR applied", plain, .display(headroom: nil), false),
            ("a plain JPEG has no gain map to keep", plain, .ultraHDR, true),
            ("an SDR photo has no PQ to keep", plain, .signal, true),
        ]
        for (name, bytes, output, declined) in cases {
            // When each output is made in the worker and here
            let request = HDRThumbnailRequest(output, options: options, encode: encode)
            let there = try isolated.encodeHDRThumbnail(bytes, request)
            let here = try ImageDecoder().encodeHDRThumbnail(bytes, request)
            // Then both decline, or both write the same file
            #expect((there == nil) == declined && (here == nil) == declined, "\(name)")
            #expect(there == here, "\(name): \(there?.count ?? 0) and \(here?.count ?? 0) bytes")
        }
        // And a refusal is the same typed error: an HDR output is the whole image, never a crop
        var cropped = options
        cropped.geometry.crop = CropRegion(width: .pixels(100), height: .pixels(100))
        let request = HDRThumbnailRequest(.display(headroom: nil), options: cropped, encode: encode)
        let refusal = #expect(throws: DarkroomImageError.self) { try isolated.encodeHDRThumbnail(ultraHDR, request) }
        #expect(refusal?.code == .unsupportedFeature, "\(String(describing: refusal))")
        // And one worker did all of it and is idle again
        let statistics = pool.statistics
        #expect(statistics.workersStarted == 1 && statistics.crashes == 0 && statistics.decodesRunning == 0)
        #expect(statistics.decodes == cases.count + 1, "\(statistics)")
    }
}
