import DarkroomImage
import DarkroomTestSupport
import Foundation
import Testing

@testable import DarkroomWorkers

/// The small picture a file carries beside its image (a JPEG's EXIF thumbnail, a HEIC's thumbnail item) is decoded in
/// a decode worker when the decoder is isolated: the stand-in this process decodes, pixel for pixel, and none where
/// this process finds none.
@Suite struct IsolatedEmbeddedThumbnailTests {
    @Test func embeddedThumbnailsFromAWorkerAreTheLibrarys() throws {
        // Given a JPEG whose EXIF thumbnail fits it, a HEIC with a thumbnail item, one whose thumbnail is of another
        // shape, and a PNG (no thumbnail), and a decoder isolated by one worker
        let files = [
            ("orientation/fallenleaf-600x400-orientation-1.jpg", true),
            ("heic/eveningglow-4032x3024-thumb320.heic", true),
            ("orientation/fallenleaf-600x400-orientation-6.jpg", false),
            ("png/cups-alpha-1600x1000.png", false),
        ]
        let pool = try DecodeWorkerPoolTests.pool(workers: 1)
        let isolated = ImageDecoder(isolation: pool)
        let options = DecodeOptions(size: .maxPixelSize(200), pixelFormat: .exactly(.bgra8Premultiplied))
        for (name, hasOne) in files {
            // When each one's stand-in is decoded in the worker and here
            let bytes = try SamplePhotos.bytes(SamplePhotos.path(name))
            let there = try isolated.decodeEmbeddedThumbnail(bytes, options: options)
            let here = try ImageDecoder().decodeEmbeddedThumbnail(bytes, options: options)
            // Then both find one or neither does, and the worker's is this process's, pixel for pixel
            #expect((there != nil) == hasOne && (here != nil) == hasOne, "\(name)")
            guard let there, let here else { continue }
            #expect(there.usedEmbeddedThumbnail && there.probe == here.probe, "\(name)")
            #expect(PixelCompare.psnr(there.bitmap, here.bitmap) == .infinity, "\(name)")
        }
        // And the worker decoded every one
        #expect(pool.statistics.decodes == files.count && pool.statistics.workersStarted == 1)
    }
}
