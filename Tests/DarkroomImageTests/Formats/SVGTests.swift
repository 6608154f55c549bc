import DarkroomSupport
import DarkroomTestSupport
import Foundation
import Testing

@testable import DarkroomImage

/// SVG against librsvg's own `rsvg-convert` on icons others drew (Debian's Adwaita theme), and the safety promises:
/// drawn at the size asked for, nothing outside the document read, bounded in time.
@Suite("SVG", .serialized)
struct SVGTests {
    let decoder = ImageDecoder()

    static func options(_ size: TargetSize) -> DecodeOptions {
        var options = DecodeOptions(size: size)
        options.geometry.pixelFormat = .exactly(.bgra8Premultiplied)
        return options
    }

    @Test("Adwaita's icons agree with rsvg-convert at 128 px")
    func icons() throws {
        // Given 40 of the icons in Debian's adwaita-icon-theme (make test installs it)
        let root = "/usr/share/icons/Adwaita/scalable"
        let all = ReferenceSuites.files(in: root, extensions: ["svg"])
        #expect(all.count >= 100, "adwaita-icon-theme is missing at \(root)")
        let icons = stride(from: 0, to: all.count, by: max(1, all.count / 40)).map { all[$0] }
        let directory = try TemporaryDirectory("svg")
        defer { directory.remove() }
        var lowest = Double.infinity
        for icon in icons {
            // When Darkroom draws it at 128 px and rsvg-convert does the same
            let ours = try decoder.decode(SamplePhotos.bytes(icon), options: Self.options(.maxPixelSize(128))).bitmap
            let png = directory.file("icon.png")
            _ = try ReferenceTool.run(
                "rsvg-convert", ["-w", String(ours.width), "-h", String(ours.height), "-o", png, icon])
            let theirs = try decoder.decode(SamplePhotos.bytes(png), options: Self.options(.original)).bitmap
            // Then the pixels agree
            try #require(theirs.width == ours.width && theirs.height == ours.height, "\(icon)")
            let psnr = PixelCompare.psnr(ours, theirs)
            lowest = min(lowest, psnr)
            #expect(psnr >= 30, "\(icon): \(psnr) dB")
        }
        print("svg: \(icons.count) Adwaita icons, lowest \(String(format: "%.1f", lowest)) dB against rsvg-convert")
    }

    @Test("a document claiming a huge size is drawn at the size asked for, quickly")
    func hugeIntrinsicSize() throws {
        // Given an SVG that says it is 100,000 px square
        let svg = """
            <svg xmlns="http://www.w3.org/2000/svg" width="100000" height="100000" viewBox="0 0 10 10">
            <circle cx="5" cy="5" r="4" fill="#c33"/></svg>
            """
        // When a 256 px thumbnail is asked for (the full size would be 40 GB of pixels)
        let (decoded, meter) = try PixelMemory.measure {
            try decoder.decode(Array(svg.utf8), options: Self.options(.maxPixelSize(256)))
        }
        // Then it is drawn at 256 px, holding only that
        #expect(decoded.probe.width == 100_000)
        #expect(decoded.bitmap.width == 256 && decoded.bitmap.height == 256)
        #expect(meter.peakBytes <= 256 * 256 * 4 * 2)
        let centre = decoded.bitmap.row(128).load(fromByteOffset: 128 * 4 + 2, as: UInt8.self)
        #expect(centre == 0xCC || centre == 0xCB, "red channel at the centre: \(centre)")
    }

    @Test("files and network addresses referenced by the document are not read; embedded data is drawn")
    func externalReferences() throws {
        // Given a PNG on disk, referenced by absolute file URL, relative path and a loopback URL, and the same
        // PNG embedded as a data: URL
        let png = try ImageEncoder.encode(try TestBitmaps.synthetic(width: 16, height: 16), as: .png)
        let directory = try TemporaryDirectory("svg")
        defer { directory.remove() }
        try TemporaryDirectory.write(png, to: directory.file("secret.png"))
        func document(_ href: String) -> [UInt8] {
            Array(
                """
                <svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="16" height="16">
                <image width="16" height="16" xlink:href="\(href)"/></svg>
                """.utf8)
        }
        for href in ["file://\(directory.file("secret.png"))", "secret.png", "http://127.0.0.1:9/secret.png"] {
            // When each is drawn
            let decoded = try decoder.decode(document(href), options: Self.options(.original))
            // Then nothing was drawn: the image stayed fully transparent
            #expect(PixelCompare.isUniform(decoded.bitmap), "\(href) was read")
            #expect(decoded.bitmap.row(8).load(fromByteOffset: 8 * 4 + 3, as: UInt8.self) == 0)
        }
        let embedded = try decoder.decode(
            document("data:image/png;base64," + Data(png).base64EncodedString()), options: Self.options(.original))
        #expect(!PixelCompare.isUniform(embedded.bitmap))
    }

    @Test("limits: an over-long render and an oversized document are refused with typed errors")
    func limits() throws {
        // Given a document that is slow to draw (many large blurs) and limits that allow 50 ms
        var heavy = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"2000\" height=\"2000\"><defs>"
        heavy += "<filter id=\"b\"><feGaussianBlur stdDeviation=\"60\"/></filter></defs>"
        for i in 0..<300 {
            heavy += "<circle cx=\"\(i * 7 % 2000)\" cy=\"\(i * 13 % 2000)\" r=\"400\" filter=\"url(#b)\"/>"
        }
        heavy += "</svg>"
        var options = Self.options(.original)
        options.limits.maxSVGRenderSeconds = 0.05
        // When it is drawn at full size
        let started = MonotonicClock.seconds()
        #expect {
            try decoder.decode(Array(heavy.utf8), options: options)
        } throws: { ($0 as? DarkroomImageError)?.code == .limitExceeded }
        // Then the decode returned at the limit, not when the drawing finished
        #expect(MonotonicClock.seconds() - started < 2)
        // And a document over maxSVGBytes is refused before parsing
        options.limits.maxSVGBytes = 64
        #expect {
            try decoder.decode(Array(heavy.utf8), options: options)
        } throws: { ($0 as? DarkroomImageError)?.code == .limitExceeded }
        // And malformed XML is a typed error
        #expect(throws: DarkroomImageError.self) {
            try decoder.decode(
                Array("<svg xmlns=\"http://www.w3.org/2000/svg\"><circle".utf8), options: Self.options(.original))
        }
    }

    @Test("renders that overran their time limit count against maxSVGRendersRunning until they end")
    func overrunsAreBounded() async throws {
        // Given a document slow to draw, a 10 ms time limit and room for 2 renders
        var heavy = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"1500\" height=\"1500\"><defs>"
        heavy += "<filter id=\"b\"><feGaussianBlur stdDeviation=\"40\"/></filter></defs>"
        for i in 0..<120 {
            heavy += "<circle cx=\"\(i * 7 % 1500)\" cy=\"\(i * 13 % 1500)\" r=\"300\" filter=\"url(#b)\"/>"
        }
        heavy += "</svg>"
        var options = Self.options(.original)
        options.limits.maxSVGRenderSeconds = 0.01
        options.limits.maxSVGRendersRunning = 2 + SVGDecoder.rendersRunning  // other suites may be drawing too
        // When three are started one after the other, each abandoned at its limit
        var errors: [DarkroomImageError] = []
        for _ in 0..<6 {
            do {
                _ = try decoder.decode(Array(heavy.utf8), options: options)
            } catch {
                errors.append(error)
                if error.message.contains("still running") { break }
            }
        }
        // Then renders overran (their threads still draw) until the places were taken, and the next was refused
        // at once for that (another suite's quick SVG render may take a place for a moment: one overrun may do)
        #expect(errors.allSatisfy { $0.code == .limitExceeded }, "\(errors)")
        #expect(errors.last?.message.contains("still running") == true, "\(errors)")
        #expect(errors.count >= 2 && errors.dropLast().allSatisfy { $0.message.contains("took longer") }, "\(errors)")
        // And once the overrunning renders end, their places come back
        let freed = await eventually(120) { SVGDecoder.rendersRunning < options.limits.maxSVGRendersRunning }
        #expect(freed)
    }
}
