import DarkroomSupport
import DarkroomTestSupport
import Foundation
import Testing

@testable import DarkroomImage

/// Colour management against ground truth: every file in `icc/` was made from an sRGB photo (named in its
/// manifest) by converting it into another colour space with its profile embedded, so converting back must give
/// the source's pixels, and ignoring the profile must not.
@Suite("Colour management")
struct ColorManagementTests {
    let decoder = ImageDecoder()

    struct Sample: Decodable {
        let file: String
        let source: String
        let sourceCrop: [Int]?
        let psnrColourManagedVsSource: Double

        /// The manifest's JSON keys.
        enum CodingKeys: String, CodingKey {
            case file, source
            case sourceCrop = "source_crop_left_top_right_bottom"
            case psnrColourManagedVsSource = "psnr_db_colour_managed_vs_source"
        }
    }

    static func manifest() throws -> [Sample] {
        let path = SamplePhotos.path("icc/manifest.json")
        let data = try #require(FileManager.default.contents(atPath: path), "missing \(path); set DARKROOM_PHOTOS")
        return try JSONDecoder().decode([Sample].self, from: data)
    }

    /// The source photo as a 256 px thumbnail from its full decode (no shrink-on-load: the best reference),
    /// cropped first where the sample is a crop of it.
    func referenceThumbnail(_ sample: Sample) throws -> Bitmap {
        var bytes = try SamplePhotos.bytes(sample.source)
        if let crop = sample.sourceCrop {
            let full = try decoder.decode(bytes).bitmap
            let cropped = try Bitmap(width: crop[2] - crop[0], height: crop[3] - crop[1], format: full.format)
            for y in 0..<cropped.height {
                cropped.row(y).copyMemory(from: full.row(y + crop[1]) + crop[0] * 4, byteCount: cropped.width * 4)
            }
            bytes = try ImageEncoder.encode(cropped, as: .png)
        }
        return try decoder.decode(bytes, options: DecodeOptions(size: .maxPixelSize(256), shrinkOnLoadMargin: 1e9))
            .bitmap
    }

    @Test("each wide-gamut and CMYK sample converts back to its sRGB source; ignoring the profile does not")
    func samplesMatchTheirSources() throws {
        let samples = try Self.manifest()
        #expect(samples.count == 6)
        for sample in samples {
            // Given a sample with an embedded profile and the sRGB photo it was made from
            let bytes = try SamplePhotos.bytes("icc/" + sample.file)
            let reference = try referenceThumbnail(sample)
            // When it is thumbnailed converting to sRGB, and again keeping the stored pixels
            let managed = try decoder.decode(bytes, options: DecodeOptions(size: .maxPixelSize(256)))
            let original = try decoder.decode(
                bytes, options: DecodeOptions(size: .maxPixelSize(256), colorSpace: .original))
            // (CMYK is always converted; with its profile ignored it goes through the plain device-CMYK formula)
            let ignored =
                managed.probe.isCMYK
                ? try decoder.decode(
                    bytes,
                    options: DecodeOptions(size: .maxPixelSize(256), limits: DecodeLimits(maxColorProfileBytes: 1000)))
                : original
            // Then the converted thumbnail matches the source (CMYK as far as its smaller gamut allows)
            let isCMYK = managed.probe.isCMYK
            let managedPSNR = PixelCompare.psnr(managed.bitmap, reference)
            let ignoredPSNR = PixelCompare.psnr(ignored.bitmap, reference)
            print("colour: \(sample.file): managed \(managedPSNR) dB, profile ignored \(ignoredPSNR) dB")
            #expect(managed.convertedToSRGB, "\(sample.file)")
            #expect(managed.colorProblem == nil, "\(sample.file): \(managed.colorProblem ?? "")")
            let bound: Double = isCMYK ? 30 : 40
            #expect(managedPSNR >= bound, "\(sample.file): \(managedPSNR) dB")
            // And ignoring the profile is clearly worse
            #expect(managedPSNR - ignoredPSNR >= 6, "\(sample.file): \(managedPSNR) vs \(ignoredPSNR) dB")
            // And .original carries the profile (RGB ones; CMYK pixels must still be converted)
            if isCMYK {
                #expect(original.colorProfile == nil && original.convertedToSRGB)
            } else {
                #expect(original.colorProfile?.summary.isUsable == true && !original.convertedToSRGB, "\(sample.file)")
            }
        }
    }

    @Test("the CMYK sample's 120 KB profile, split over two APP2 segments, is reassembled byte for byte")
    func multiChunkProfile() throws {
        let bytes = try SamplePhotos.bytes("icc/cmyk-fogra39-bythewater-2560x1600.jpg")
        let profile = try SamplePhotos.bytes("icc/profiles/FOGRA39L-coated-argyll.icc")
        let reading = bytes.withUnsafeBytes { EmbeddedColor.readJPEG($0, maxBytes: 4 << 20) }
        #expect(reading.color == .icc(profile))
        #expect(reading.adobeInverted)
        // A limit below its size ignores it, with the reason
        let limited = bytes.withUnsafeBytes { EmbeddedColor.readJPEG($0, maxBytes: 100_000) }
        #expect(limited.color == nil)
        #expect(limited.problem?.contains("maxColorProfileBytes") == true)
    }

    @Test("chunks out of order and after the frame header are reassembled; a missing chunk is a problem, not a failure")
    func chunkOrderAndPlacement() throws {
        // Given a JPEG with the Display P3 profile split in three APP2 segments, written 3, 1 after SOF, 2 before
        let profile = try SamplePhotos.bytes("icc/profiles/DisplayP3-v2.icc")
        let plain = try ImageEncoder.encode(TestBitmaps.synthetic(width: 64, height: 48), as: .jpeg)
        let parts = stride(from: 0, to: profile.count, by: 1000).map {
            Array(profile[$0..<min($0 + 1000, profile.count)])
        }
        #expect(parts.count == 3)
        func app2(_ index: Int) -> [UInt8] {
            let body = Array("ICC_PROFILE".utf8) + [0, UInt8(index + 1), UInt8(parts.count)] + parts[index]
            return [0xFF, 0xE2, UInt8((body.count + 2) >> 8), UInt8((body.count + 2) & 0xFF)] + body
        }
        let sof = try #require(Self.markerOffset(plain, 0xC0))
        let jpeg =
            Array(plain[0..<2]) + app2(1) + Array(plain[2..<sof]) + Self.segment(plain, at: sof) + app2(2) + app2(0)
            + Array(plain[(sof + Self.segment(plain, at: sof).count)...])
        // When its colour is read and it is decoded
        let reading = jpeg.withUnsafeBytes { EmbeddedColor.readJPEG($0, maxBytes: 4 << 20) }
        let decoded = try decoder.decode(jpeg)
        // Then the profile is whole and used
        #expect(reading.color == .icc(profile))
        #expect(decoded.convertedToSRGB)
        // And without the middle chunk the image decodes, treated as sRGB, with the reason
        let missing = Array(plain[0..<2]) + app2(0) + app2(2) + Array(plain[2...])
        let partial = try decoder.decode(missing)
        #expect(!partial.convertedToSRGB)
        #expect(partial.colorProblem?.contains("2 of its 3") == true)
    }

    @Test("a garbage profile never fails the decode: the pixels stay as they are and the probe and result say why")
    func garbageProfile() throws {
        // Given a JPEG whose APP2 profile is random bytes
        var rng = SplitMix64(state: 7)
        let garbage = (0..<600).map { _ in UInt8.random(in: 0...255, using: &rng) }
        let plain = try ImageEncoder.encode(TestBitmaps.synthetic(width: 64, height: 48), as: .jpeg)
        let withGarbage = try ImageEncoder.encode(
            TestBitmaps.synthetic(width: 64, height: 48), as: .jpeg,
            options: EncodeOptions(colorProfile: garbage))
        // When both are decoded
        let reference = try decoder.decode(plain)
        let decoded = try decoder.decode(withGarbage)
        // Then the garbage one decodes to the same pixels, unconverted, with the reason given
        #expect(decoded.bitmap.pixelsEqual(reference.bitmap))
        #expect(!decoded.convertedToSRGB)
        #expect(decoded.colorProblem?.contains("lcms2 could not parse") == true)
        let summary = try #require(withGarbage.withUnsafeBytes { ImageProber.colorProfile(of: $0) })
        #expect(!summary.isUsable && summary.problem != nil)
    }

    @Test("an sRGB profile is recognised as sRGB and costs no conversion")
    func srgbProfileIsIdentity() throws {
        // Given the sRGB profile lcms2 builds, embedded in a PNG
        let srgb = try #require(ColorTestProfiles.sRGB())
        let bitmap = try TestBitmaps.synthetic(width: 80, height: 60)
        let png = try ImageEncoder.encode(bitmap, as: .png, options: EncodeOptions(colorProfile: srgb))
        // When decoded
        let decoded = try decoder.decode(png)
        // Then nothing is converted and the pixels are the encoded ones
        #expect(!decoded.convertedToSRGB && decoded.colorProblem == nil)
        #expect(decoded.bitmap.pixelsEqual(bitmap))
        #expect(png.withUnsafeBytes { ImageProber.colorProfile(of: $0) }?.isSRGB == true)
    }

    @Test("a gray image with a gray profile stays Gray8 and is converted to the sRGB curve")
    func grayProfile() throws {
        // Given a gray PNG with a gray profile of gamma 1.0 (linear)
        let gray = try #require(ColorTestProfiles.linearGray())
        let bitmap = try TestBitmaps.synthetic(width: 64, height: 32, gray: true)
        let png = try ImageEncoder.encode(bitmap, as: .png, options: EncodeOptions(colorProfile: gray))
        // When decoded
        let decoded = try decoder.decode(png)
        // Then it is still gray, converted (a linear mid-gray 128 is sRGB ≈ 188)
        #expect(decoded.bitmap.format == .gray8)
        #expect(decoded.convertedToSRGB)
        let row = decoded.bitmap.row(0).assumingMemoryBound(to: UInt8.self)
        let source = bitmap.row(0).assumingMemoryBound(to: UInt8.self)
        let x = (0..<64).first { source[$0] >= 128 }!
        #expect(abs(Int(row[x]) - 188) <= 3, "linear \(source[x]) became \(row[x])")
    }

    @Test(
        ".original round-trips the profile bytes through each encoder",
        arguments: [ImageFileFormat.jpeg, .png, .webp, .avif])
    func profileRoundTrip(format: ImageFileFormat) throws {
        // Given a decode that keeps the Display P3 profile
        let source = try SamplePhotos.bytes("icc/displayp3-kite-1280x800.png")
        let decoded = try decoder.decode(
            source, options: DecodeOptions(size: .maxPixelSize(128), colorSpace: .original))
        let profile = try #require(decoded.colorProfile)
        #expect(profile.data == (try SamplePhotos.bytes("icc/profiles/DisplayP3-v2.icc")))
        // When it is encoded with that profile and read back
        let encoded = try ImageEncoder.encode(
            decoded.bitmap, as: format, options: EncodeOptions(colorProfile: profile.data))
        let back = try decoder.decode(encoded, options: DecodeOptions(colorSpace: .original))
        // Then the same bytes come back, and converting gives what the direct conversion gives
        #expect(back.colorProfile?.data == profile.data, "\(format)")
        let viaFile = try decoder.decode(encoded)
        let direct = try decoder.decode(source, options: DecodeOptions(size: .maxPixelSize(128)))
        #expect(viaFile.convertedToSRGB)
        #expect(PixelCompare.psnr(viaFile.bitmap, direct.bitmap) >= 30, "\(format)")
    }

    @Test("wide-gamut JPEGs (Adobe RGB, ProPhoto) shrink on load only to twice the output; Display P3 keeps 1/8")
    func wideGamutShrink() throws {
        // Given JPEGs in three RGB profiles, thumbnailed to 256 px
        func denominator(_ file: String, _ colorSpace: OutputColorSpace = .sRGB) throws -> Int {
            try decoder.decode(
                SamplePhotos.bytes("icc/" + file),
                options: DecodeOptions(size: .maxPixelSize(256), colorSpace: colorSpace)
            )
            .shrinkDenominator
        }
        // Then the ones whose conversion magnifies decoding errors decode at 1/4, the others at 1/8
        #expect(try denominator("adobergb-path-2560x1600.jpg") == 4)
        #expect(try denominator("prophoto-eveningglow-2560x1600.jpg") == 4)
        #expect(try denominator("displayp3-fallenleaf-4032x3024.jpg") == 8)
        // And without conversion nothing changes
        #expect(try denominator("prophoto-eveningglow-2560x1600.jpg", .original) == 8)
    }

    @Test(
        "lcms2 converting in place gives the same bytes as converting into a separate buffer", arguments: [true, false])
    func inPlace(opaque: Bool) throws {
        // Given random pixels (premultiplied when not opaque) and the ProPhoto transform
        var rng = SplitMix64(state: 3)
        let bitmap = try Bitmap(width: 97, height: 13, format: .bgra8Premultiplied, isOpaque: opaque)
        for y in 0..<13 {
            let row = bitmap.row(y).assumingMemoryBound(to: UInt8.self)
            for x in 0..<97 {
                let a = opaque ? 255 : UInt8.random(in: 0...255, using: &rng)
                for c in 0..<3 { row[4 * x + c] = UInt8.random(in: 0...a, using: &rng) }
                row[4 * x + 3] = a
            }
        }
        let profile = try SamplePhotos.bytes("icc/profiles/ProPhotoRGB-ROMM-v2.icc")
        guard
            case .transform(let transform) = ColorTransformCache.shared.conversion(
                for: .icc(profile), layout: opaque ? .bgra : .bgraPremultiplied)
        else {
            Issue.record("no transform")
            return
        }
        // When it is converted row by row into a separate buffer, and in place
        var separate = [[UInt8]]()
        for y in 0..<13 {
            var out = [UInt8](repeating: 0, count: 97 * 4)
            transform.convert(bitmap.row(y), &out, count: 97)
            separate.append(out)
        }
        transform.convertWithLCMS(bitmap)
        // Then the bytes agree exactly, alpha included
        for y in 0..<13 {
            #expect(
                Array(UnsafeBufferPointer(start: bitmap.row(y).assumingMemoryBound(to: UInt8.self), count: 97 * 4))
                    == separate[y])
        }
    }

    @Test(
        "the matrix/TRC kernel agrees with lcms2 within one level on every level of every channel",
        arguments: ["DisplayP3-v2.icc", "AdobeRGB1998-compatible-v2.icc", "ProPhotoRGB-ROMM-v2.icc"])
    func kernelMatchesLCMS(profile: String) throws {
        // Given an opaque bitmap holding all 256 levels per channel, crossed with a coarse grid of the others
        let levels = Array(0...255)
        let bitmap = try Bitmap(width: 256, height: 3 * 9 * 9, format: .bgra8Premultiplied, isOpaque: true)
        var y = 0
        for channel in 0..<3 {
            for a in stride(from: 0, through: 256, by: 32) {
                for b in stride(from: 0, through: 256, by: 32) {
                    let row = bitmap.row(y).assumingMemoryBound(to: UInt8.self)
                    for x in levels {
                        row[4 * x + channel] = UInt8(x)
                        row[4 * x + (channel + 1) % 3] = UInt8(min(a, 255))
                        row[4 * x + (channel + 2) % 3] = UInt8(min(b, 255))
                        row[4 * x + 3] = 255
                    }
                    y += 1
                }
            }
        }
        let copy = try bitmap.converted(to: .bgra8Premultiplied)
        guard
            case .transform(let transform) = ColorTransformCache.shared.conversion(
                for: .icc(try SamplePhotos.bytes("icc/profiles/" + profile)), layout: .bgra)
        else {
            Issue.record("no transform")
            return
        }
        #expect(transform.kernel != nil)
        // When one copy goes through the kernel and the other through lcms2
        transform.convertInPlace(bitmap)
        transform.convertWithLCMS(copy)
        // Then no byte differs by more than one
        var worst = 0
        for y in 0..<bitmap.height {
            let a = bitmap.row(y).assumingMemoryBound(to: UInt8.self)
            let b = copy.row(y).assumingMemoryBound(to: UInt8.self)
            for i in 0..<(256 * 4) { worst = max(worst, abs(Int(a[i]) - Int(b[i]))) }
        }
        #expect(worst <= 1, "\(profile): \(worst) levels")
    }

    @Test("decodes on many threads at once share the transform cache and give the serial result")
    func concurrentDecodes() throws {
        // Given three samples decoded once serially with a cold cache for their profiles
        let files = [
            "icc/displayp3-kite-1280x800.png", "icc/prophoto-eveningglow-2560x1600.jpg",
            "icc/cmyk-fogra39-bythewater-2560x1600.jpg",
        ]
        let inputs = try files.map { try SamplePhotos.bytes($0) }
        let serial = try inputs.map { try decoder.decode($0, options: DecodeOptions(size: .maxPixelSize(96))).bitmap }
        // When 24 decodes run on concurrent threads
        let results = Locked([Int: Bitmap]())
        DispatchQueue.concurrentPerform(iterations: 24) { i in
            if let b = try? ImageDecoder().decode(inputs[i % 3], options: DecodeOptions(size: .maxPixelSize(96))).bitmap
            {
                results.withLock { $0[i] = b }
            }
        }
        // Then every one equals its serial decode
        let all = results.withLock { $0 }
        #expect(all.count == 24)
        for (i, b) in all {
            #expect(b.pixelsEqual(serial[i % 3]), "\(files[i % 3]) \(PixelCompare.psnr(b, serial[i % 3])) dB")
        }
    }

    @Test("PNG gAMA/cHRM without a profile are converted; an sRGB chunk or gAMA 1/2.2 alone are left as they are")
    func pngChunks() throws {
        // Given one PNG written three ways: with gAMA 1.0 (linear), with sRGB, with gAMA 45455 only
        let bitmap = try TestBitmaps.synthetic(width: 64, height: 16)
        let png = try ImageEncoder.encode(bitmap, as: .png)
        let linear = Self.inserting(chunk: "gAMA", payload: [0, 1, 0x86, 0xA0], into: png)  // 100000
        let srgb = Self.inserting(chunk: "sRGB", payload: [0], into: png)
        let gamma22 = Self.inserting(chunk: "gAMA", payload: [0, 0, 0xB1, 0x8F], into: png)  // 45455
        // When each is decoded
        let l = try decoder.decode(linear)
        let s = try decoder.decode(srgb)
        let g = try decoder.decode(gamma22)
        // Then only the linear one is converted (brighter: linear mid-tones are lighter in sRGB)
        #expect(l.convertedToSRGB && !s.convertedToSRGB && !g.convertedToSRGB)
        #expect(s.bitmap.pixelsEqual(bitmap) && g.bitmap.pixelsEqual(bitmap))
        let x = 20
        let before = bitmap.row(8).load(fromByteOffset: 4 * x + 1, as: UInt8.self)
        let after = l.bitmap.row(8).load(fromByteOffset: 4 * x + 1, as: UInt8.self)
        #expect(after > before, "\(before) → \(after)")
        #expect(linear.withUnsafeBytes { ImageProber.colorProfile(of: $0) }?.source == .pngChunks)
        #expect(srgb.withUnsafeBytes { ImageProber.colorProfile(of: $0) }?.isSRGB == true)
    }

    /// `png` with a chunk inserted right after IHDR (with its CRC).
    static func inserting(chunk type: String, payload: [UInt8], into png: [UInt8]) -> [UInt8] {
        let body = Array(type.utf8) + payload
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in body {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        crc = ~crc
        let length = UInt32(payload.count)
        let bigEndian: (UInt32) -> [UInt8] = { v in
            [UInt8(v >> 24), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)]
        }
        let ihdrEnd = 8 + 8 + 13 + 4
        return Array(png[0..<ihdrEnd]) + bigEndian(length) + body + bigEndian(crc) + Array(png[ihdrEnd...])
    }

    @Test("transforms are built once per profile and layout")
    func transformCache() throws {
        let cache = ColorTransformCache(capacity: 2)
        let profile = try SamplePhotos.bytes("icc/profiles/AdobeRGB1998-compatible-v2.icc")
        for _ in 0..<5 { _ = cache.conversion(for: .icc(profile), layout: .bgra) }
        #expect(cache.buildCount == 1)
        _ = cache.conversion(for: .icc(profile), layout: .bgraPremultiplied)
        _ = cache.conversion(for: .icc(try SamplePhotos.bytes("icc/profiles/DisplayP3-v2.icc")), layout: .bgra)
        _ = cache.conversion(for: .icc(profile), layout: .bgra)  // evicted by the bound of 2: built again
        #expect(cache.buildCount == 4)
    }

    static func markerOffset(_ jpeg: [UInt8], _ marker: UInt8) -> Int? {
        var i = 2
        while i + 4 <= jpeg.count {
            if jpeg[i] == 0xFF && jpeg[i + 1] == marker { return i }
            i += 2 + (Int(jpeg[i + 2]) << 8 | Int(jpeg[i + 3]))
        }
        return nil
    }

    static func segment(_ jpeg: [UInt8], at offset: Int) -> [UInt8] {
        Array(jpeg[offset..<(offset + 2 + (Int(jpeg[offset + 2]) << 8 | Int(jpeg[offset + 3])))])
    }
}

/// Profiles built with lcms2 for tests.
enum ColorTestProfiles {
    static func sRGB() -> [UInt8]? {
        let data = ColorProfile.sRGB.data
        return data.isEmpty ? nil : data
    }

    static func linearGray() -> [UInt8]? {
        let data = ColorProfile.gray(gamma: 1.0).data
        return data.isEmpty ? nil : data
    }
}
