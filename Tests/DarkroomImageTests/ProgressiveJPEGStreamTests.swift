import DarkroomTestSupport
import Foundation
import Testing

@testable import DarkroomImage

@Suite("A progressive JPEG decoded while it arrives: each scan read once, each image an output pass")
struct ProgressiveJPEGStreamTests {
    /// Feeds `bytes` in `chunk`-byte pieces, asking for an image after each; returns the previews and the final image.
    static func feed(
        _ bytes: [UInt8], chunk: Int, options: DecodeOptions, share: Double = .infinity
    ) throws -> (previews: [Bitmap], final: DecodedImage, stream: ProgressiveJPEGStream) {
        let stream = try #require(ProgressiveJPEGStream(limits: options.limits, previewShare: share))
        var previews: [Bitmap] = []
        var end = 0
        while end < bytes.count {
            end = min(bytes.count, end + chunk)
            let body = Array(bytes[..<end])
            if end < bytes.count,
                let preview = try body.withUnsafeBytes({ try stream.image($0, isComplete: false, options: options) })
            {
                previews.append(preview.bitmap)
            }
        }
        let final = try bytes.withUnsafeBytes { try stream.image($0, isComplete: true, options: options) }
        return (previews, try #require(final), stream)
    }

    /// The orientation-6 sample (stored sideways, EXIF says turn it) re-encoded by Pillow as a progressive JPEG
    /// that keeps its EXIF.
    static func progressiveOriented() throws -> [UInt8] {
        let source = SamplePhotos.path("orientation/fallenleaf-600x400-orientation-6.jpg")
        let script = """
            import io, sys
            from PIL import Image
            im = Image.open(sys.argv[1])
            out = io.BytesIO()
            im.save(out, "JPEG", quality=90, progressive=True, exif=im.info["exif"])
            sys.stdout.buffer.write(out.getvalue())
            """
        return [UInt8](try PythonReference.run(script, [source]))
    }

    static func options(_ size: TargetSize) -> DecodeOptions {
        var options = DecodeOptions()
        options.geometry.size = size
        return options
    }

    @Test(
        "Fed in pieces, it shows one preview per whole scan, each closer to the end, and ends on a direct decode's pixels",
        arguments: [
            ("jpeg/summer_1am-2560x1600.jpg", TargetSize.maxPixelSize(1280), 4096),
            ("jpeg/colorfulcups-2560x1600.jpg", TargetSize.fill(width: 600, height: 600), 65536),
            ("jpeg-12mp/kite-4032x3024-progressive.jpg", TargetSize.maxPixelSize(1600), 100_000),
            ("oriented", TargetSize.maxPixelSize(200), 2048),
        ])
    func previewsThenExactImage(path: String, size: TargetSize, chunk: Int) throws {
        // Given a progressive photo (one in a colour profile, one turned by its EXIF orientation) and a geometry
        let bytes = path == "oriented" ? try Self.progressiveOriented() : try SamplePhotos.bytes(path)
        let scans = try JPEGLayout.scans(bytes).offsets.count
        let options = Self.options(size)

        // When its bytes arrive in pieces
        let (previews, final, stream) = try Self.feed(bytes, chunk: chunk, options: options)

        // Then the final image has a direct decode's pixels, size and orientation
        let direct = try ImageDecoder().decode(bytes, options: options)
        #expect(final.bitmap.width == direct.bitmap.width && final.bitmap.height == direct.bitmap.height)
        #expect(PixelCompare.psnr(final.bitmap, direct.bitmap) == .infinity)
        #expect(final.probe.width == direct.probe.width && final.probe.orientation == direct.probe.orientation)
        #expect(!stream.isAbandoned)
        // and before it, previews of the same size, never more than the scans before the last, PSNR rising
        #expect(previews.count >= 2 && previews.count < scans, "\(previews.count) previews of \(scans) scans")
        let psnrs = try previews.map { PixelCompare.psnr(try $0.converted(to: final.bitmap.format), final.bitmap) }
        for preview in previews {
            #expect(preview.width == final.bitmap.width && preview.height == final.bitmap.height)
        }
        for (earlier, later) in zip(psnrs, psnrs.dropFirst()) { #expect(later >= earlier - 0.05, "PSNR \(psnrs)") }
        #expect(psnrs.first! + 3 < psnrs.last!, "PSNR \(psnrs)")
    }

    @Test("With no share for previews beyond the first, one preview is made and the final image is still exact")
    func previewShareBoundsThePasses() throws {
        // Given a stream whose previews may add nothing beyond the first
        let bytes = try SamplePhotos.bytes("jpeg/summer_1am-2560x1600.jpg")
        let options = Self.options(.maxPixelSize(1280))

        // When the photo arrives in small pieces
        let (previews, final, _) = try Self.feed(bytes, chunk: 4096, options: options, share: 0)

        // Then only the first scan's preview was output, and the final image is a direct decode's
        #expect(previews.count == 1)
        let direct = try ImageDecoder().decode(bytes, options: options).bitmap
        #expect(PixelCompare.psnr(final.bitmap, direct) == .infinity)
    }

    @Test("A body cut short is the lenient decode's image when truncation is accepted, a truncated error when not")
    func truncatedBody() throws {
        // Given the first 40 % of a progressive photo, complete as far as the stream knows
        let whole = try SamplePhotos.bytes("jpeg/summer_1am-2560x1600.jpg")
        let cut = Array(whole[..<(whole.count * 2 / 5)])
        var lenient = Self.options(.maxPixelSize(800))
        lenient.acceptTruncated = true

        // When it is read as complete, accepting truncation or not
        let (_, padded, _) = try Self.feed(cut, chunk: 8192, options: lenient)
        let strict = try #require(ProgressiveJPEGStream(limits: DecodeLimits(), previewShare: 1))
        let error = #expect(throws: DarkroomImageError.self) {
            _ = try cut.withUnsafeBytes {
                try strict.image($0, isComplete: true, options: Self.options(.maxPixelSize(800)))
            }
        }

        // Then the lenient image equals a lenient direct decode's, and the strict one is `truncated`
        let direct = try ImageDecoder().decode(cut, options: lenient).bitmap
        #expect(PixelCompare.psnr(padded.bitmap, direct) == .infinity)
        #expect(error?.code == .truncated)
        #expect(strict.isAbandoned)
    }

    @Test(
        "Files it does not serve are refused with a typed error and the stream is abandoned",
        arguments: [
            (
                "a sequential JPEG", "jpeg/path-2560x1600.jpg", TargetSize.maxPixelSize(1280),
                DarkroomImageError.Code.unsupportedFeature
            ),
            ("1/8 scale", "jpeg/summer_1am-2560x1600.jpg", TargetSize.maxPixelSize(200), .unsupportedFeature),
            ("a PNG", "png/cups-alpha-1600x1000.png", TargetSize.maxPixelSize(100), .unsupportedFeature),
        ])
    func refused(what: String, path: String, size: TargetSize, code: DarkroomImageError.Code) throws {
        // Given a file the stream is not for
        let bytes = try SamplePhotos.bytes(path)
        let stream = try #require(ProgressiveJPEGStream(limits: DecodeLimits(), previewShare: 1))

        // When it is offered whole
        let error = #expect(throws: DarkroomImageError.self, "\(what)") {
            _ = try bytes.withUnsafeBytes { try stream.image($0, isComplete: true, options: Self.options(size)) }
        }

        // Then the error is typed and the stream gives up for good
        #expect(error?.code == code, "\(what): \(String(describing: error))")
        #expect(stream.isAbandoned)
    }

    @Test("Corrupt scan data and too many scans are typed errors, never a crash")
    func corruptAndOverLimit() throws {
        // Given a progressive photo with its middle overwritten, and a scan limit below its scan count
        var damaged = try SamplePhotos.bytes("jpeg/summer_1am-2560x1600.jpg")
        let scans = try JPEGLayout.scans(damaged).offsets
        for i in scans[1]..<(scans[1] + 2000) { damaged[i] = UInt8(truncatingIfNeeded: i &* 7919) }
        var limited = DecodeLimits()
        limited.maxProgressiveScans = 3
        var options = Self.options(.maxPixelSize(1280))
        options.limits = limited

        // When each arrives in pieces
        let overLimit = #expect(throws: DarkroomImageError.self) {
            _ = try Self.feed(try SamplePhotos.bytes("jpeg/summer_1am-2560x1600.jpg"), chunk: 16384, options: options)
        }
        let damagedResult = Result { try Self.feed(damaged, chunk: 16384, options: Self.options(.maxPixelSize(1280))) }

        // Then the scan limit is `limit_exceeded`, and the damage is either recovered from (as libjpeg does,
        // counting warnings) or a typed error
        #expect(overLimit?.code == .limitExceeded)
        switch damagedResult {
        case .success(let result): #expect(result.final.bitmap.width == 1280)
        case .failure(let error): #expect(error is DarkroomImageError, "\(error)")
        }
    }
}
