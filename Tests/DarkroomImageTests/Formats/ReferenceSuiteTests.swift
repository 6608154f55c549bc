import DarkroomSupport
import DarkroomTestSupport
import Foundation
import Testing

@testable import DarkroomImage

/// Darkroom against Pillow on Pillow's own TIFF, BMP (with the bmpsuite) and ICO/CUR test images: files nobody on
/// this project made. Each file Pillow decodes must decode here (typed errors allowed for ≤ 5 %), and agree with
/// Pillow's pixels at full size.
@Suite("Other projects' test images")
struct ReferenceSuiteTests {
    /// One file's outcome.
    struct Outcome {
        let name: String
        let mode: String
        var psnr: Double?
        var error: String?
    }

    static let pixelFormat = PixelFormatPreference.exactly(.bgra8Premultiplied)

    /// Decodes every file Pillow decodes, at full size, and compares with Pillow's pixels where its mode has an
    /// agreed display mapping.
    static func compare(_ files: [String], root: String) throws -> [Outcome] {
        let scratch = try TemporaryDirectory("pillow-reference")
        defer { scratch.remove() }
        let readings = try ReferenceSuites.pillow(files, into: scratch.path)
        #expect(readings.count == files.count)
        let decoder = ImageDecoder()
        var options = DecodeOptions(size: .original)
        options.geometry.pixelFormat = pixelFormat
        var outcomes: [Outcome] = []
        for reading in readings where reading.ok {
            var outcome = Outcome(
                name: String(reading.file.dropFirst(root.count + 1)), mode: reading.mode ?? "?")
            do {
                let ours = try decoder.decode(SamplePhotos.bytes(reading.file), options: options)
                if let png = reading.png {
                    let theirs = try decoder.decode(SamplePhotos.bytes(png), options: options)
                    if ours.bitmap.width == theirs.bitmap.width && ours.bitmap.height == theirs.bitmap.height {
                        outcome.psnr = PixelCompare.psnr(ours.bitmap, theirs.bitmap)
                    } else {
                        outcome.error =
                            "size \(ours.bitmap.width)×\(ours.bitmap.height), Pillow \(theirs.bitmap.width)×\(theirs.bitmap.height)"
                        outcome.psnr = 0
                    }
                }
            } catch {
                outcome.error = "\(error)"
            }
            outcomes.append(outcome)
        }
        return outcomes
    }

    static func report(_ label: String, _ outcomes: [Outcome]) -> (decoded: Double, matching: Int, compared: Int) {
        let decoded = outcomes.filter { $0.error == nil || $0.psnr != nil }.count
        let compared = outcomes.compactMap(\.psnr)
        let matching = compared.filter { $0 >= 30 }.count
        let lowest = compared.min().map { String(format: "%.1f", $0) } ?? "-"
        print(
            "\(label): Pillow decodes \(outcomes.count); Darkroom decodes \(decoded); \(matching) of \(compared.count) compared at ≥ 30 dB (lowest \(lowest) dB)"
        )
        for o in outcomes where o.error != nil || (o.psnr ?? 99) < 30 {
            print("  \(o.name) [\(o.mode)]: \(o.psnr.map { String(format: "%.1f dB", $0) } ?? "-") \(o.error ?? "")")
        }
        return (Double(decoded) / Double(max(outcomes.count, 1)), matching, compared.count)
    }

    @Test(
        "Pillow's test images of one format decode and agree with Pillow",
        arguments: [["tif", "tiff"], ["bmp", "dib"], ["ico", "cur"]])
    func pillowImages(extensions: [String]) throws {
        // Given Pillow's test images of one format (bmp/b holds files meant to be refused)
        let root = try ReferenceSuites.folder("pillow")
        let files = ReferenceSuites.files(in: root, extensions: Set(extensions)).filter { !$0.contains("/bmp/b/") }
        #expect(files.count >= 10, "\(extensions) in \(root)")
        // When each file Pillow decodes is decoded here at full size
        let outcomes = try Self.compare(files, root: root)
        // Then at least 95 % decode, and every compared one agrees with Pillow to ≥ 30 dB
        let (decoded, matching, compared) = Self.report(extensions[0], outcomes)
        #expect(decoded >= 0.95)
        #expect(matching == compared)
    }

    @Test("the bmpsuite's bad files (bmp/b) are refused with typed errors or decoded, never a crash")
    func badBMPs() throws {
        // Given the files the bmpsuite made to be refused
        let root = try ReferenceSuites.folder("pillow")
        let files = ReferenceSuites.files(in: root + "/bmp/b", extensions: ["bmp"])
        #expect(files.count >= 10, "bmp/b in \(root)")
        // When each is probed and decoded
        var refused = 0
        for path in files {
            let bytes = try SamplePhotos.bytes(path)
            do {
                let decoded = try ImageDecoder().decode(bytes, options: DecodeOptions(size: .maxPixelSize(64)))
                #expect(decoded.bitmap.width > 0)
            } catch {
                // Then a refusal is a DarkroomImageError with a message; the 6 GP one is refused by the limits
                #expect(!error.message.isEmpty)
                if path.hasSuffix("reallybig.bmp") { #expect(error.code == .limitExceeded) }
                refused += 1
            }
        }
        print("bmp/b: \(refused) of \(files.count) refused with typed errors")
        #expect(refused >= 4)
    }

    @Test("ICO output at favicon sizes: Pillow reads back the same pixels", arguments: [16, 32, 48, 256])
    func icoOutput(size: Int) throws {
        // Given a square thumbnail with alpha
        var options = DecodeOptions(size: .stretch(width: size, height: size))
        options.geometry.pixelFormat = Self.pixelFormat
        let thumb = try ImageDecoder().decode(SamplePhotos.bytes("png/cups-alpha-1600x1000.png"), options: options)
        // When it is written as ICO and Pillow reads the file
        let scratch = try TemporaryDirectory("ico")
        defer { scratch.remove() }
        let file = scratch.file("favicon.ico")
        try TemporaryDirectory.write(try ImageEncoder.encode(thumb.bitmap, as: .ico), to: file)
        let reading = try #require(try ReferenceSuites.pillow([file], into: scratch.path).first)
        // Then Pillow sees one icon of that size with the same pixels
        #expect(reading.ok && reading.width == size && reading.height == size, "\(reading)")
        var original = DecodeOptions(size: .original)
        original.geometry.pixelFormat = Self.pixelFormat
        let back = try ImageDecoder().decode(SamplePhotos.bytes(try #require(reading.png)), options: original)
        #expect(PixelCompare.psnr(back.bitmap, thumb.bitmap) >= 50)
    }
}
