import DarkroomSupport
import DarkroomTestSupport
import Foundation
import Testing

@testable import DarkroomImage

// MARK: - Sample photos and helpers

/// Probes in memory, as a Result so a test can look at either outcome.
private func probe(_ bytes: [UInt8], limits: DecodeLimits = .default) -> Result<ImageProbe, DarkroomImageError> {
    bytes.withUnsafeBytes { buffer in
        Result { () throws(DarkroomImageError) -> ImageProbe in try ImageProber.probe(buffer, limits: limits) }
    }
}

private func probeFile(_ path: String, limits: DecodeLimits = .default) -> Result<ImageProbe, DarkroomImageError> {
    Result { () throws(DarkroomImageError) -> ImageProbe in try ImageProber.probe(fileAt: path, limits: limits) }
}

extension Result {
    fileprivate var value: Success? { if case .success(let v) = self { v } else { nil } }
    fileprivate var error: Failure? { if case .failure(let e) = self { e } else { nil } }
}

private func errorCode(_ result: Result<ImageProbe, DarkroomImageError>) -> DarkroomImageError.Code? {
    result.error?.code
}

/// The "WxH" in a sample's file name.
private func sizeInName(_ name: String) -> (Int, Int)? {
    for part in name.split(whereSeparator: { $0 == "-" || $0 == "." || $0 == "_" }) {
        let sides = part.split(separator: "x")
        if sides.count == 2, let w = Int(sides[0]), let h = Int(sides[1]) { return (w, h) }
    }
    return nil
}

/// A temporary file holding `bytes`, removed by the caller.
private func temporaryFile(_ bytes: [UInt8], name: String = "probe") throws -> URL {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("darkroom-probe-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    let url = folder.appendingPathComponent(name)
    try Data(bytes).write(to: url)
    return url
}

private func removeTemporary(_ url: URL) { try? FileManager.default.removeItem(at: url.deletingLastPathComponent()) }

// MARK: - Synthetic inputs

private func be16(_ v: Int) -> [UInt8] { [UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }
private func be32(_ v: Int) -> [UInt8] { be16(v >> 16) + be16(v) }
private func le16(_ v: Int) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF)] }
private func le24(_ v: Int) -> [UInt8] { le16(v) + [UInt8(v >> 16 & 0xFF)] }
private func le32(_ v: Int) -> [UInt8] { le16(v) + le16(v >> 16) }
private func ascii(_ s: String) -> [UInt8] { Array(s.utf8) }

/// TIFF data with IFD0 holding a Make tag and an Orientation tag.
private func tiff(orientation: Int, bigEndian: Bool = false, type: Int = 3) -> [UInt8] {
    let u16 = bigEndian ? be16 : le16
    let u32 = bigEndian ? be32 : le32
    let value = type == 4 ? u32(orientation) : u16(orientation) + [0, 0]
    return (bigEndian ? ascii("MM") : ascii("II")) + u16(42) + u32(8) + u16(2)
        + u16(0x010F) + u16(2) + u32(4) + ascii("ABC") + [0]
        + u16(0x0112) + u16(type) + u32(1) + value + u32(0)
}

private func segment(_ marker: UInt8, _ payload: [UInt8]) -> [UInt8] {
    [0xFF, marker] + be16(payload.count + 2) + payload
}

private func exifSegment(_ tiff: [UInt8]) -> [UInt8] { segment(0xE1, ascii("Exif") + [0, 0] + tiff) }

private func jpeg(
    _ before: [[UInt8]] = [], sof: UInt8 = 0xC0, precision: UInt8 = 8, width: Int = 64,
    height: Int = 48, components: Int = 3
) -> [UInt8] {
    var frame = [precision] + be16(height) + be16(width) + [UInt8(components)]
    for c in 0..<components { frame += [UInt8(c + 1), 0x11, 0] }
    return [0xFF, 0xD8] + before.flatMap { $0 } + segment(sof, frame) + segment(0xDA, [1, 1, 0, 0, 63, 0])
        + [0x12, 0x34, 0xFF, 0xD9]
}

private func pngChunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
    be32(data.count) + ascii(type) + data + [0, 0, 0, 0]
}

private let pngSignature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

private func png(colorType: UInt8 = 2, bitDepth: UInt8 = 8, interlace: UInt8 = 0, _ chunks: [[UInt8]] = []) -> [UInt8] {
    pngSignature + pngChunk("IHDR", be32(32) + be32(16) + [bitDepth, colorType, 0, 0, interlace])
        + chunks.flatMap { $0 } + pngChunk("IDAT", [0x78, 0x9C, 0, 0]) + pngChunk("IEND", [])
}

private func webpChunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
    ascii(type) + le32(data.count) + data + (data.count % 2 == 1 ? [0] : [])
}

private func riff(_ chunks: [[UInt8]]) -> [UInt8] {
    let body = ascii("WEBP") + chunks.flatMap { $0 }
    return ascii("RIFF") + le32(body.count) + body
}

private func vp8(width: Int, height: Int) -> [UInt8] {
    webpChunk("VP8 ", [0x10, 0x02, 0x00, 0x9D, 0x01, 0x2A] + le16(width) + le16(height) + [0, 0])
}

private func vp8l(width: Int, height: Int, alpha: Bool) -> [UInt8] {
    webpChunk("VP8L", [0x2F] + le32((width - 1) | (height - 1) << 14 | (alpha ? 1 << 28 : 0)) + [0, 0])
}

private func vp8x(flags: UInt8, width: Int, height: Int) -> [UInt8] {
    webpChunk("VP8X", [flags, 0, 0, 0] + le24(width - 1) + le24(height - 1))
}

private func gif(
    width: Int = 10, height: Int = 8, frames: Int, transparent: Bool = false,
    interlaced: Bool = false, trailer: Bool = true
) -> [UInt8] {
    var out = ascii("GIF89a") + le16(width) + le16(height) + [0x80, 0, 0] + [0, 0, 0, 255, 255, 255]
    out += [0x21, 0xFF, 11] + ascii("NETSCAPE2.0") + [3, 1, 0, 0, 0]
    for _ in 0..<frames {
        out += [0x21, 0xF9, 4, transparent ? 1 : 0, 10, 0, 0, 0]
        out += [0x2C] + le16(0) + le16(0) + le16(width) + le16(height) + [interlaced ? 0x40 : 0]
        out += [2, 2, 0x4C, 0x01, 0]  // LZW minimum code size, one 2-byte sub-block, terminator
    }
    return out + (trailer ? [0x3B] : [])
}

// MARK: - Tests

@Suite("ProbeTests")
struct ProbeTests {
    // MARK: Sample photos

    @Test func everySampleProbesWithItsFormatAndStoredSize() throws {
        // Given every file in the shared sample folder
        let files = try SamplePhotos.allRelative()
        for file in files {
            let name = String(file.split(separator: "/").last!)
            let expectedFormat: ImageFileFormat =
                switch name.split(separator: ".").last! {
                case "jpg": .jpeg
                case "png": .png
                case "webp": .webp
                default: .gif
                }
            var (width, height) = try #require(sizeInName(name), "no size in \(name)")
            if file.hasPrefix("orientation/") {  // named 600x400, stored 600x375 (transposed for 5–8)
                let n = Int(name.dropLast(4).split(separator: "-").last!)!
                (width, height) = n >= 5 ? (375, 600) : (600, 375)
            }
            // When it is probed from its file and from memory
            let fromFile = probeFile(SamplePhotos.path(file))
            let fromMemory = probe(try SamplePhotos.bytes(file))
            // Then both agree on the format and stored size
            let result = try #require(fromFile.value, "\(file): \(String(describing: fromFile.error))")
            #expect(result.format == expectedFormat, "\(file)")
            #expect(result.width == width && result.height == height, "\(file): \(result.width)x\(result.height)")
            #expect(fromMemory.value == result, "\(file)")
        }
    }

    @Test func jpegSamplesReportProgressiveAndEightBitColor() throws {
        // Given the JPEG samples
        let files = try SamplePhotos.allRelative().filter { $0.hasPrefix("jpeg") }
        #expect(files.count == 15)
        // When they are probed
        let results = try files.map { try #require(probeFile(SamplePhotos.path($0)).value) }
        // Then all are 8-bit color stills, and exactly the known ones are progressive
        for r in results {
            #expect(r.bitDepth == 8 && !r.isGrayscale && !r.hasAlpha && r.frameCount == 1)
        }
        let progressive = zip(files, results).filter { $0.1.isProgressive }.map(\.0).sorted()
        #expect(
            progressive == [
                "jpeg-12mp/kite-4032x3024-progressive.jpg",
                "jpeg/colorfulcups-2560x1600.jpg", "jpeg/summer_1am-2560x1600.jpg",
            ])
    }

    @Test(arguments: 1...8)
    func orientationSamplesReportTheirTag(_ n: Int) throws {
        // Given the sample with EXIF orientation n
        let path = SamplePhotos.path("orientation/fallenleaf-600x400-orientation-\(n).jpg")
        // When it is probed
        let result = try #require(probeFile(path).value)
        // Then the tag is read, and the oriented size is the upright 600x375
        #expect(result.orientation.rawValue == n)
        #expect(result.orientedWidth == 600 && result.orientedHeight == 375)
    }

    @Test func pngSamplesReportTheirVariant() throws {
        // Given the PNG samples / When probed
        func p(_ name: String) throws -> ImageProbe { try #require(probeFile(SamplePhotos.path("png/" + name)).value) }
        let sixteen = try p("bythewater-16bit-960x600.png")
        let palette = try p("summer-palette-1280x800.png")
        let interlaced = try p("path-interlaced-1200x750.png")
        let rgba = try p("cups-alpha-1600x1000.png")
        let large = try p("altai-5120x2880.png")
        // Then each variant shows
        #expect(sixteen.bitDepth == 16 && !sixteen.hasAlpha && !sixteen.isProgressive)
        #expect(palette.bitDepth == 8 && !palette.hasAlpha && !palette.isGrayscale)
        #expect(interlaced.isProgressive && !interlaced.hasAlpha)
        #expect(rgba.hasAlpha && rgba.hasICCProfile && rgba.bitDepth == 8)
        #expect(large.width == 5120 && large.hasICCProfile && !large.hasAlpha && large.frameCount == 1)
    }

    @Test func webpSamplesReportTheirVariant() throws {
        // Given the WebP samples / When probed
        func p(_ name: String) throws -> ImageProbe { try #require(probeFile(SamplePhotos.path("webp/" + name)).value) }
        let lossy = try p("eveningglow-lossy-2560x1600.webp")
        let lossless = try p("cups-lossless-1024x640.webp")
        let alpha = try p("cups-alpha-lossy-1600x1000.webp")
        let large = try p("gnome-wood-4096x4096.webp")
        let animated = try p("slideshow-480x300-animated.webp")
        // Then
        #expect(lossy.width == 2560 && lossy.height == 1600 && !lossy.hasAlpha && lossy.frameCount == 1)
        #expect(lossless.width == 1024 && lossless.height == 640)
        #expect(alpha.hasAlpha && alpha.width == 1600 && alpha.height == 1000)
        #expect(large.width == 4096 && large.height == 4096)
        #expect(animated.frameCount == 4 && animated.width == 480 && animated.height == 300)
    }

    @Test func animatedGIFSampleCountsItsFrames() throws {
        // Given the animated GIF
        let path = SamplePhotos.path("gif/slideshow-480x300-animated.gif")
        // When probed from its file
        let (result, bytesRead) = try ImageProber.probeFile(atPath: path, limits: .default)
        // Then every frame is counted, which needs the whole file
        #expect(result.format == .gif && result.width == 480 && result.height == 300)
        #expect(result.frameCount == 13)
        #expect(bytesRead == (try SamplePhotos.bytes("gif/slideshow-480x300-animated.gif")).count)
    }

    @Test func largeJPEGIsProbedFromAPrefix() throws {
        // Given a 12 MP JPEG, and a file holding only its first 64 KiB
        let name = "jpeg-12mp/path-4032x3024.jpg"
        let bytes = try SamplePhotos.bytes(name)
        let head = try temporaryFile(Array(bytes.prefix(64 << 10)), name: "head.jpg")
        defer { removeTemporary(head) }
        // When both are probed
        let (full, bytesRead) = try ImageProber.probeFile(atPath: SamplePhotos.path(name), limits: .default)
        let fromHead = try #require(probeFile(head.path).value)
        // Then only the 64 KiB prefix was read, and it suffices
        #expect(bytesRead == ImageProber.initialPrefixBytes && bytesRead < bytes.count)
        #expect(full.width == 4032 && full.height == 3024)
        #expect(fromHead == full)
    }

    @Test func truncatedSamplesAreTruncatedOrStillAgree() throws {
        // Given every sample cut at many offsets (every byte of the first 2 KiB, then growing steps)
        for file in try SamplePhotos.allRelative() {
            let bytes = try SamplePhotos.bytes(file)
            let full = try #require(probe(bytes).value)
            var cuts = Array(0...min(2048, bytes.count - 1))
            var cut = 2048
            while cut < bytes.count {
                cuts.append(cut)
                cut = cut * 5 / 4
            }
            cuts.append(bytes.count - 1)
            for length in cuts {
                // When the prefix is probed
                let result = probe(Array(bytes.prefix(length)))
                // Then it is .empty, .truncated, or the same header (fewer GIF frames at most)
                switch result {
                case .failure(let error):
                    #expect(error.code == (length == 0 ? .empty : .truncated), "\(file) cut at \(length): \(error)")
                case .success(let partial):
                    #expect(
                        partial.format == full.format && partial.width == full.width
                            && partial.height == full.height && partial.orientation == full.orientation,
                        "\(file) cut at \(length)")
                    #expect(partial.frameCount <= full.frameCount && partial.frameCount >= 1)
                }
            }
        }
    }

    @Test func randomByteFlipsNeverCrash() throws {
        // Given every sample, mutated 150 times with 1–4 random bytes flipped in its first 8 KiB
        var random = SplitMix64(state: 0xDA2C_2004)
        var outcomes = 0
        for file in try SamplePhotos.allRelative() {
            let original = try SamplePhotos.bytes(file)
            for _ in 0..<150 {
                let bytes = ByteFlips.flipped(
                    original, count: Int.random(in: 1...4, using: &random), in: 0..<min(8192, original.count),
                    using: &random)
                // When probed
                let result = probe(bytes, limits: DecodeLimits(maxFrames: 64))
                // Then it answers a sane header or a DarkroomImageError (typed throws allow nothing else)
                if let r = result.value {
                    #expect(r.width > 0 && r.height > 0 && (1...64).contains(r.frameCount), "\(file)")
                }
                outcomes += 1
            }
        }
        #expect(outcomes > 0)
    }

    @Test func gifFrameLimitTrips() throws {
        // Given the 13-frame GIF and limits of 12 and 13 frames
        let path = SamplePhotos.path("gif/slideshow-480x300-animated.gif")
        // When probed
        let over = probeFile(path, limits: DecodeLimits(maxFrames: 12))
        let inMemory = probe(
            try SamplePhotos.bytes("gif/slideshow-480x300-animated.gif"), limits: DecodeLimits(maxFrames: 5))
        let exact = probeFile(path, limits: DecodeLimits(maxFrames: 13))
        // Then going over the limit is .limitExceeded, reaching it is fine
        #expect(errorCode(over) == .limitExceeded)
        #expect(errorCode(inMemory) == .limitExceeded)
        #expect(exact.value?.frameCount == 13)
    }

    @Test func formatComesFromBytesNotName() throws {
        // Given a PNG saved under a .jpg name
        let url = try temporaryFile(try SamplePhotos.bytes("png/summer-palette-1280x800.png"), name: "photo.jpg")
        defer { removeTemporary(url) }
        // When probed
        let result = probeFile(url.path)
        // Then it is a PNG
        #expect(result.value?.format == .png)
    }

    // MARK: Format sniffing and errors

    @Test func formatOfRecognizesMagicBytesOnly() {
        // Given magic bytes of each format and near misses / When sniffed / Then
        func f(_ b: [UInt8]) -> ImageFileFormat? { b.withUnsafeBytes { ImageProber.format(of: $0) } }
        #expect(f([0xFF, 0xD8, 0xFF, 0xE0]) == .jpeg && f([0xFF, 0xD8, 0xFF]) == .jpeg)
        #expect(f(pngSignature) == .png)
        #expect(f(ascii("RIFF") + le32(4) + ascii("WEBP")) == .webp)
        #expect(f(ascii("GIF87a")) == .gif && f(ascii("GIF89a")) == .gif)
        #expect(f(ascii("GIF88a")) == nil && f(ascii("RIFF") + le32(4) + ascii("WAVE")) == nil)
        #expect(f([0xFF, 0xD8]) == nil && f([]) == nil && f(ascii("BM")) == nil)
    }

    @Test func emptyUnsupportedAndShortInputsFail() throws {
        // Given empty, unknown and cut-in-the-magic inputs / When probed / Then
        #expect(errorCode(probe([])) == .empty)
        #expect(errorCode(probe(ascii("BM") + [UInt8](repeating: 0, count: 60))) == .unsupportedFormat)
        #expect(errorCode(probe([0xFF, 0xD8])) == .truncated)
        #expect(errorCode(probe([0xFF, 0xD8, 0xFF])) == .truncated)
        #expect(errorCode(probe(ascii("GIF8"))) == .truncated)
        #expect(errorCode(probe(ascii("RIFF") + le32(100))) == .truncated)
        let empty = try temporaryFile([])
        defer { removeTemporary(empty) }
        #expect(errorCode(probeFile(empty.path)) == .empty)
    }

    @Test func fileErrorsAreTypedWithTheSystemText() throws {
        // Given a missing file and a directory / When probed
        let missing = probeFile("/nonexistent/darkroom/photo.jpg")
        let directory = probeFile(FileManager.default.temporaryDirectory.path)
        // Then the first is .notFound naming the errno text, the second .io
        #expect(missing.error?.code == .notFound)
        #expect(missing.error?.message.contains("No such file or directory") == true)
        #expect(directory.error?.code == .io)
    }

    @Test func inputsOverMaxInputBytesAreRefused() throws {
        // Given a JPEG larger than a tiny input limit
        let bytes = jpeg()
        let limits = DecodeLimits(maxInputBytes: bytes.count - 1)
        let url = try temporaryFile(bytes)
        defer { removeTemporary(url) }
        // When probed / Then
        #expect(errorCode(probe(bytes, limits: limits)) == .limitExceeded)
        #expect(errorCode(probeFile(url.path, limits: limits)) == .limitExceeded)
    }

    // MARK: JPEG

    @Test func jpegMarkerWalkHandlesFillStandaloneAndAppSegments() throws {
        // Given fill bytes, TEM, RST, a repeated SOI, JFIF, EXIF (orientation 6) and an ICC profile before SOF
        let extras: [[UInt8]] = [
            segment(0xE0, ascii("JFIF") + [0, 1, 1, 0, 0, 1, 0, 1, 0, 0]),
            [0xFF, 0xFF, 0xFF, 0x01, 0xFF, 0xD3, 0xFF, 0xD8],
            exifSegment(tiff(orientation: 6)),
            segment(0xE2, ascii("ICC_PROFILE") + [0, 1, 1] + [UInt8](repeating: 7, count: 40)),
            segment(0xFE, ascii("comment")), [0xFF, 0xFF],
        ]
        // When probed
        let result = try #require(probe(jpeg(extras, width: 300, height: 200)).value)
        // Then
        #expect(result == ImageProbe(format: .jpeg, width: 300, height: 200, orientation: .right, hasICCProfile: true))
    }

    @Test func jpegFrameVariants() throws {
        // Given frames of various SOF types, precisions and component counts / When probed / Then
        #expect(probe(jpeg(sof: 0xC2)).value?.isProgressive == true)
        #expect(probe(jpeg(sof: 0xCA)).value?.isProgressive == true)
        #expect(probe(jpeg(sof: 0xC1, precision: 12)).value?.bitDepth == 12)
        #expect(probe(jpeg(sof: 0xC3, precision: 16)).value?.bitDepth == 16)
        #expect(probe(jpeg(sof: 0xC9)).value?.isProgressive == false)
        #expect(probe(jpeg(components: 1)).value?.isGrayscale == true)
        #expect(probe(jpeg(components: 4)).value?.isGrayscale == false)
        #expect(errorCode(probe(jpeg(height: 0))) == .unsupportedFeature)
        #expect(errorCode(probe(jpeg(components: 0))) == .corrupt)
    }

    @Test func malformedJPEGStructureIsCorrupt() {
        // Given a segment length below 2, SOS or EOI before SOF / When probed / Then .corrupt
        #expect(errorCode(probe([0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x01, 0, 0, 0, 0])) == .corrupt)
        #expect(errorCode(probe([0xFF, 0xD8] + segment(0xDA, [1, 1, 0, 0, 63, 0]))) == .corrupt)
        #expect(errorCode(probe([0xFF, 0xD8, 0xFF, 0xD9])) == .corrupt)
        #expect(errorCode(probe([0xFF, 0xD8, 0xFF, 0xE0, 0x40, 0x00, 1, 2])) == .truncated)
    }

    @Test func exifVariants() {
        // Given EXIF in both byte orders, as LONG, out of range, and damaged / When probed / Then
        func orientation(_ t: [UInt8]) -> ExifOrientation? { probe(jpeg([exifSegment(t)])).value?.orientation }
        #expect(orientation(tiff(orientation: 8, bigEndian: true)) == .left)
        #expect(orientation(tiff(orientation: 3, type: 4)) == .down)
        #expect(orientation(tiff(orientation: 9)) == .up)
        #expect(orientation(tiff(orientation: 0)) == .up)
        #expect(orientation(Array(tiff(orientation: 6).prefix(20))) == .up)
        #expect(orientation(ascii("XX") + [UInt8](repeating: 0, count: 30)) == .up)
        var badOffset = tiff(orientation: 6)
        badOffset[4..<8] = [0xFF, 0xFF, 0xFF, 0x7F]
        #expect(orientation(badOffset) == .up)
    }

    @Test func hugeSegmentsBeforeTheFrameMakeTheFileProbeReadMore() throws {
        // Given a JPEG with two ~64 KB APP segments (EXIF orientation 5, then ICC) before its frame header
        let exif = exifSegment(tiff(orientation: 5) + [UInt8](repeating: 0, count: 65_000))
        let icc = segment(0xE2, ascii("ICC_PROFILE") + [0, 1, 1] + [UInt8](repeating: 1, count: 65_000))
        let bytes = jpeg([exif, icc], width: 1234, height: 567) + [UInt8](repeating: 0x55, count: 300_000)
        let url = try temporaryFile(bytes)
        defer { removeTemporary(url) }
        // When probed from the file
        let (result, bytesRead) = try ImageProber.probeFile(atPath: url.path, limits: .default)
        // Then it read past 64 KiB but not the whole file, and found everything
        #expect(bytesRead > ImageProber.initialPrefixBytes && bytesRead < bytes.count)
        #expect(
            result
                == ImageProbe(
                    format: .jpeg, width: 1234, height: 567, orientation: .leftMirrored,
                    hasICCProfile: true))
        // And the same file cut before its frame header is .truncated
        let cut = try temporaryFile(Array(bytes.prefix(100_000)))
        defer { removeTemporary(cut) }
        #expect(errorCode(probeFile(cut.path)) == .truncated)
    }

    // MARK: PNG

    @Test func pngChunksBeforeIDAT() throws {
        // Given PNGs with gray types, tRNS, acTL, eXIf and iCCP / When probed / Then
        #expect(
            probe(png(colorType: 0, bitDepth: 1)).value
                == ImageProbe(format: .png, width: 32, height: 16, isGrayscale: true, bitDepth: 1))
        #expect(probe(png(colorType: 4)).value.map { $0.isGrayscale && $0.hasAlpha } == true)
        #expect(
            probe(png(colorType: 3, [pngChunk("PLTE", [0, 0, 0]), pngChunk("tRNS", [0])])).value?.hasAlpha == true)
        #expect(probe(png(interlace: 1)).value?.isProgressive == true)
        let sevenFrames = AnimationFiles.apng(
            width: 2, height: 1,
            frames: Array(repeating: .init(width: 2, height: 1, rgba: [UInt8](repeating: 9, count: 8)), count: 7))
        #expect(probe(sevenFrames).value?.frameCount == 7)
        #expect(errorCode(probe(sevenFrames, limits: DecodeLimits(maxFrames: 6))) == .limitExceeded)
        // An acTL whose frames are not in the file breaks the APNG specification: the file is its default image
        #expect(probe(png([pngChunk("acTL", be32(7) + be32(0))])).value?.frameCount == 1)
        #expect(
            probe(png([pngChunk("eXIf", tiff(orientation: 7, bigEndian: true))])).value?.orientation
                == .rightMirrored)
        #expect(probe(png([pngChunk("iCCP", ascii("icc") + [0, 0, 1, 2])])).value?.hasICCProfile == true)
        #expect(probe(png()).value == ImageProbe(format: .png, width: 32, height: 16))
    }

    @Test func malformedPNGIsCorruptOrTruncated() {
        // Given broken structures / When probed / Then
        let ihdrLater = pngSignature + pngChunk("gAMA", be32(45455)) + Array(png().dropFirst(8))
        #expect(errorCode(probe(ihdrLater)) == .corrupt)
        #expect(errorCode(probe(png(colorType: 2, bitDepth: 4))) == .corrupt)
        #expect(errorCode(probe(png(colorType: 7))) == .corrupt)
        #expect(errorCode(probe(png([be32(0x8000_0000) + ascii("tEXt")]))) == .corrupt)
        #expect(errorCode(probe(png([be32(1000) + ascii("tEXt") + [1, 2, 3]]).prefix(80).map { $0 })) == .truncated)
        #expect(errorCode(probe(png([be32(4) + ascii("t3Xt") + [0, 0, 0, 0, 0, 0, 0, 0]]))) == .corrupt)
        let noIDAT = pngSignature + pngChunk("IHDR", be32(1) + be32(1) + [8, 2, 0, 0, 0]) + pngChunk("IEND", [])
        #expect(errorCode(probe(noIDAT)) == .corrupt)
        #expect(errorCode(probe(Array(noIDAT.prefix(33)))) == .truncated)
    }

    // MARK: WebP

    @Test func webpContainers() throws {
        // Given simple and extended WebP files / When probed / Then
        #expect(probe(riff([vp8(width: 300, height: 200)])).value == ImageProbe(format: .webp, width: 300, height: 200))
        #expect(
            probe(riff([vp8l(width: 5, height: 9, alpha: true)])).value
                == ImageProbe(format: .webp, width: 5, height: 9, hasAlpha: true))
        #expect(probe(riff([vp8l(width: 5, height: 9, alpha: false)])).value?.hasAlpha == false)
        let withAlpha = riff([
            vp8x(flags: 0, width: 70, height: 2000), webpChunk("ALPH", [0, 1, 2]),
            vp8(width: 70, height: 2000),
        ])
        #expect(probe(withAlpha).value == ImageProbe(format: .webp, width: 70, height: 2000, hasAlpha: true))
        for preamble in [[], ascii("Exif") + [0, 0]] {
            let exif = riff([
                vp8x(flags: 0x28, width: 4, height: 3), webpChunk("ICCP", [1, 2, 3]),
                vp8(width: 4, height: 3), webpChunk("EXIF", preamble + tiff(orientation: 6)),
            ])
            #expect(
                probe(exif).value
                    == ImageProbe(
                        format: .webp, width: 4, height: 3, orientation: .right,
                        hasICCProfile: true))
        }
        let frame = webpChunk("ANMF", [UInt8](repeating: 0, count: 16) + vp8(width: 4, height: 3))
        let animated = riff([
            vp8x(flags: 0x02, width: 4, height: 3), webpChunk("ANIM", [0, 0, 0, 0, 0, 0]),
            frame, frame, frame,
        ])
        #expect(probe(animated).value?.frameCount == 3)
        #expect(errorCode(probe(animated, limits: DecodeLimits(maxFrames: 2))) == .limitExceeded)
    }

    @Test func malformedWebPIsCorrupt() {
        // Given broken WebP structures / When probed / Then
        var badStart = riff([vp8(width: 4, height: 3)])
        badStart[23] = 0x00
        #expect(errorCode(probe(badStart)) == .corrupt)
        var shortRIFF = riff([vp8(width: 4, height: 3)])
        shortRIFF[4] = 10
        #expect(errorCode(probe(shortRIFF)) == .corrupt)
        #expect(errorCode(probe(riff([webpChunk("JUNK", [1, 2])]))) == .corrupt)
        #expect(errorCode(probe(riff([vp8x(flags: 0x02, width: 4, height: 3)]))) == .corrupt)
        #expect(errorCode(probe(riff([vp8x(flags: 0, width: 4, height: 3)]))) == .corrupt)
    }

    // MARK: GIF

    @Test func gifBlocks() {
        // Given synthetic GIFs / When probed / Then
        #expect(probe(gif(frames: 3)).value == ImageProbe(format: .gif, width: 10, height: 8, frameCount: 3))
        #expect(probe(gif(frames: 2, transparent: true)).value?.hasAlpha == true)
        #expect(probe(gif(frames: 1, interlaced: true)).value?.isProgressive == true)
        #expect(probe(gif(frames: 2, trailer: false)).value?.frameCount == 2)
        #expect(probe(Array(gif(frames: 2).dropLast(3))).value?.frameCount == 1)
        #expect(errorCode(probe(gif(frames: 0))) == .corrupt)
        #expect(errorCode(probe(gif(frames: 0, trailer: false))) == .truncated)
        #expect(errorCode(probe(Array(gif(frames: 1).dropLast(3)))) == .truncated)
        #expect(errorCode(probe(gif(frames: 4), limits: DecodeLimits(maxFrames: 3))) == .limitExceeded)
        #expect(errorCode(probe(Array(gif(frames: 1).dropLast()) + [0x99])) == .corrupt)
        var zeroScreen = gif(width: 6, height: 5, frames: 1)
        zeroScreen[6..<10] = [0, 0, 0, 0]
        #expect(probe(zeroScreen).value.map { [$0.width, $0.height] } == [6, 5])
    }
}
