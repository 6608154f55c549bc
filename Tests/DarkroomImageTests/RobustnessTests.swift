import DarkroomSupport
import DarkroomTestSupport
import Testing

@testable import DarkroomImage

@Suite("Hostile and broken input")
struct RobustnessTests {
    let decoder = ImageDecoder()
    let small = DecodeOptions(size: .maxPixelSize(64))

    /// Decodes and reports only whether it threw a typed error; a crash fails the whole run.
    func outcome(_ bytes: [UInt8], _ options: DecodeOptions) -> DarkroomImageError? {
        do {
            _ = try decoder.decode(bytes, options: options)
            return nil
        } catch { return error }
    }

    @Test("truncations at many offsets give errors, never crashes", arguments: SamplePhotos.all)
    func truncations(path: String) throws {
        // Given a sample and 24 cut points spread over the file, plus the first bytes
        let bytes = try SamplePhotos.bytes(path)
        var cuts = Set((1...24).map { bytes.count * $0 / 25 })
        cuts.formUnion([0, 1, 2, 3, 7, 12, 30, 100, bytes.count - 1])
        for cut in cuts.sorted() where cut < bytes.count {
            // When decoded cut short
            let error = outcome(Array(bytes[..<cut]), small)
            // Then strict decoding refuses the headerless ones with a typed error. (A cut inside trailing
            // metadata or an animation's later frames may still decode the first image completely.)
            if cut < 30 { #expect(error != nil, "\(path) cut at \(cut) decoded") }
            if let error { #expect(!error.message.isEmpty) }
        }
    }

    @Test("flipped bytes give an error or an image, never a crash", arguments: SamplePhotos.all)
    func flips(path: String) throws {
        let bytes = try SamplePhotos.bytes(path)
        var rng = SplitMix64(state: UInt64(bytes.count))
        for _ in 0..<24 {
            // Flip 1–8 bytes, biased to the header where parsers are most fragile.
            let damaged = ByteFlips.headerBiased(bytes, headerBytes: 2048, using: &rng)
            if let error = outcome(damaged, small) { #expect(!error.message.isEmpty) }
        }
    }

    @Test("empty, garbage and text inputs are refused with the right code")
    func garbage() {
        #expect(outcome([], small)?.code == .empty)
        #expect(outcome(Array("hello, this is not an image".utf8), small)?.code == .unsupportedFormat)
        #expect(outcome([0xFF, 0xD8, 0xFF], small) != nil)
        #expect(outcome([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A], small) != nil)
    }

    @Test("a truncated JPEG is refused by default and returned gray-padded on request")
    func truncatedJPEGPolicy() throws {
        // Given a baseline JPEG cut at 60 %
        let bytes = try SamplePhotos.bytes(SamplePhotos.files("jpeg-12mp")[0])
        let cut = Array(bytes[..<(bytes.count * 6 / 10)])
        // Then the default refuses it as truncated
        #expect(outcome(cut, DecodeOptions()).map(\.code) == .truncated)
        #expect(outcome(cut, small).map(\.code) == .truncated)
        // And acceptTruncated returns the image
        var lenient = small
        lenient.acceptTruncated = true
        let image = try decoder.decode(cut, options: lenient)
        #expect(image.bitmap.width == 64)
    }

    @Test("each limit trips with limit_exceeded")
    func limits() throws {
        let jpeg = try SamplePhotos.bytes(SamplePhotos.files("jpeg-12mp")[0])
        func code(_ bytes: [UInt8], _ change: (inout DecodeLimits) -> Void, size: TargetSize = .original)
            -> DarkroomImageError.Code?
        {
            var options = DecodeOptions(size: size)
            change(&options.limits)
            return outcome(bytes, options)?.code
        }
        #expect(code(jpeg, { $0.maxInputBytes = 1000 }) == .limitExceeded)
        #expect(code(jpeg, { $0.maxSourcePixels = 10_000_000 }) == .limitExceeded)
        #expect(code(jpeg, { $0.maxDimension = 4000 }) == .limitExceeded)
        // maxDecodedBytes refuses the 48 MB full decode but accepts the thumbnail shrink-on-load makes small
        #expect(code(jpeg, { $0.maxDecodedBytes = 8 << 20 }) == .limitExceeded)
        #expect(code(jpeg, { $0.maxDecodedBytes = 8 << 20 }, size: .maxPixelSize(256)) == nil)
        // A progressive JPEG with more scans than allowed
        let progressive = try SamplePhotos.bytes(SamplePhotos.files("jpeg-12mp").first { $0.contains("progressive") }!)
        #expect(code(progressive, { $0.maxProgressiveScans = 2 }, size: .maxPixelSize(64)) == .limitExceeded)
        #expect(code(progressive, { _ in }, size: .maxPixelSize(64)) == nil)
        // An animation with more frames than allowed
        let gif = try SamplePhotos.bytes(SamplePhotos.files("gif")[0])
        #expect(code(gif, { $0.maxFrames = 5 }) == .limitExceeded)
        let webp = try SamplePhotos.bytes(SamplePhotos.files("webp").first { $0.contains("animated") }!)
        #expect(code(webp, { $0.maxFrames = 2 }) == .limitExceeded)
        // Interlaced PNGs and GIF canvases need a full frame; it counts against maxDecodedBytes
        let interlaced = try SamplePhotos.bytes(SamplePhotos.files("png").first { $0.contains("interlaced") }!)
        #expect(code(interlaced, { $0.maxDecodedBytes = 1 << 20 }, size: .maxPixelSize(64)) == .limitExceeded)
    }

    @Test("a 200 MP header is accepted for a thumbnail only while memory stays bounded")
    func hugeHeader() throws {
        // Given a JPEG whose header claims 16000×12500 (200 MP) but whose data is short
        let tiny = try ImageEncoder.encode(TestBitmaps.synthetic(width: 64, height: 64), as: .jpeg)
        var forged = tiny
        // Patch SOF0's height/width fields.
        if let sof = (0..<(forged.count - 9)).first(where: { forged[$0] == 0xFF && forged[$0 + 1] == 0xC0 }) {
            forged[sof + 5] = UInt8(12500 >> 8)
            forged[sof + 6] = UInt8(12500 & 255)
            forged[sof + 7] = UInt8(16000 >> 8)
            forged[sof + 8] = UInt8(16000 & 255)
        }
        // When decoded in full it is refused before allocating 800 MB
        #expect(outcome(forged, DecodeOptions())?.code == .limitExceeded)
        // And as a thumbnail it is attempted (and fails only because the data is short)
        #expect(outcome(forged, small)?.code == .truncated)
    }
}
