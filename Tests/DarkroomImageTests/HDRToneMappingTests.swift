import CLCMS2
import DarkroomSupport
import DarkroomTestSupport
import Foundation
import Testing

@testable import DarkroomImage

/// PQ and HLG to SDR: the transfer functions against colour-science, the BT.2390 roll-off's shape, and whole files
/// made by colour-science and avifenc from SDR photos (`scripts/make-hdr-samples.py`).
@Suite(.serialized) struct HDRToneMappingTests {
    /// The samples, made once for the suite: a 2560 × 1600 photo at 640 px, as PQ and HLG, without and with
    /// highlights above SDR white (and the PQ one with highlights stored turned and with a clean aperture), and the
    /// one without as a transparent HEIC and in gray.
    static let samples = PythonReference.folder(
        "hdr", madeBy: "scripts/make-hdr-samples.py",
        runs: [["--variants"], ["--highlights", "--transforms"]].map {
            [SamplePhotos.path("jpeg/colorfulcups-2560x1600.jpg"), "--max-side", "640", "--heif", "--png", "--jxl"] + $0
        })

    static func sample(_ name: String) throws -> String { try samples.get() + "/" + name }

    static func decode(_ path: String, side: Int = 256) throws -> DecodedImage {
        var options = DecodeOptions(size: .fit(width: side, height: side))
        options.geometry.pixelFormat = .exactly(.bgra8Premultiplied)
        return try ImageDecoder().decode(SamplePhotos.bytes(path), options: options)
    }

    @Test func transferFunctionsMatchColourScience() throws {
        // Given signals across the range and colour-science's ST 2084 and BT.2100 HLG functions
        let signals = (0...20).map { Double($0) / 20 }
        let script = """
            import sys, json, warnings
            warnings.filterwarnings("ignore")
            import colour, numpy as np
            s = np.array(json.loads(sys.argv[1]))
            print(json.dumps({
              "pq": colour.models.eotf_ST2084(s).tolist(),
              "hlg": colour.models.oetf_inverse_BT2100_HLG(s).tolist(),
              "pqInverse": colour.models.eotf_inverse_ST2084(s * 1000).tolist(),
            }))
            """
        let json = try PythonReference.run(script, [String(decoding: try JSONEncoder().encode(signals), as: UTF8.self)])
        let reference = try JSONDecoder().decode([String: [Double]].self, from: json)
        // When Darkroom computes the same values
        // Then they agree to a part in a million (PQ light) and a millionth (signals)
        for (i, s) in signals.enumerated() {
            let pq = HDRTransfer.pqToNits(s)
            #expect(abs(pq - reference["pq"]![i]) <= 1e-6 * max(1, reference["pq"]![i]), "PQ \(s)")
            #expect(abs(HDRTransfer.hlgToScene(s) - reference["hlg"]![i]) < 1e-6, "HLG \(s)")
            #expect(abs(HDRTransfer.nitsToPQ(s * 1000) - reference["pqInverse"]![i]) < 1e-6, "PQ⁻¹ \(s * 1000)")
            #expect(abs(HDRTransfer.sceneToHLG(HDRTransfer.hlgToScene(s)) - s) < 1e-7, "HLG round trip \(s)")
        }
        // and HLG's reference white, the 75 % signal, is 203 nits on a 1,000-nit display (BT.2408)
        let scene = HDRTransfer.hlgToScene(0.75)
        let nits = 1000 * pow(scene, HDRTransfer.hlgSystemGamma(peak: 1000) - 1) * scene
        #expect(abs(nits - HDRTransfer.referenceWhiteNits) < 0.5)
    }

    @Test func hlgLightIsBT2100sOOTF() throws {
        // Given HLG signals across the range, grays and colours, and a mapper reading BT.2020 HLG
        let mapper = try #require(HDRToneMapper(transfer: .hlg, primaries: 9, sourcePeak: 1000))
        let weights = (0.2627, 0.6780, 0.0593)
        var worst = 0.0
        for r in stride(from: 0.0, through: 1, by: 0.05) {
            for (g, b) in [(r, r), (r * 0.5, r * 0.2), (1 - r, r * r)] {
                // When its light is computed, and BT.2100's OOTF directly (1,000-nit display, γ 1.2)
                let light = mapper.light(Float(r), Float(g), Float(b))
                let scene = [r, g, b].map(HDRTransfer.hlgToScene)
                let ys = weights.0 * scene[0] + weights.1 * scene[1] + weights.2 * scene[2]
                let expected = scene.map { 1000 * pow(ys, 0.2) * $0 }
                // Then they agree to a part in ten thousand of the peak
                for c in 0..<3 { worst = max(worst, abs(Double(light[c]) - expected[c])) }
            }
        }
        #expect(worst < 0.1, "largest difference \(worst) nits")
    }

    @Test func bt2390LeavesLightBelowTheKneeAndReachesTheTargetAtThePeak() {
        // Given content peaking at 1,000 nits shown on a 203-nit (SDR white) target
        let peak = 1000.0
        let target = 203.0
        // When light across the range is mapped
        let mapped = stride(from: 0.0, through: peak, by: 1).map {
            HDRTransfer.bt2390($0, sourcePeak: peak, targetPeak: target)
        }
        // Then dark and mid tones are unchanged, the curve never falls, and the peak lands on the target
        #expect(abs(HDRTransfer.bt2390(20, sourcePeak: peak, targetPeak: target) - 20) < 1e-9)
        #expect(zip(mapped, mapped.dropFirst()).allSatisfy { $0 <= $1 + 1e-9 })
        #expect(abs(mapped.last! - target) < 0.01)
        #expect(mapped.allSatisfy { $0 <= target })
        // and content that fits the target is left alone
        #expect(HDRTransfer.bt2390(150, sourcePeak: 180, targetPeak: target) == 150)
    }

    /// The HDR files `make-hdr-samples.py` writes of one signal, by the end of their names.
    static let hdrFiles = [
        ".avif", ".heic", ".png", ".jxl", ".lossless.jxl", "-icc.tif", "-icc.png", "-icc.avif", "-icc.heic",
    ]

    @Test(arguments: ["pq", "hlg"], hdrFiles)
    func sdrContentCarriedInHDRComesBackAsTheOriginal(_ transfer: String, _ file: String) throws {
        // Given an SDR photo carried in BT.2020 PQ or HLG, its white at 203 nits, as AVIF (avifenc), HEIC (libheif
        // through pillow-heif), 16-bit PNG with a cICP chunk, JPEG XL (cjxl: lossy, XYB-coded, and lossless), or
        // 16-bit TIFF and PNG, 10-bit AVIF and HEIC, whose only colour is the ICC profile libjxl made for the signal
        // (djxl, then vips; avifenc; pillow-heif)
        let path = try Self.sample("colorfulcups-2560x1600-\(transfer)\(file)")
        let hdr = try Self.decode(path)
        // When it is decoded to a 256 px thumbnail, and the SDR original too
        let original = try Self.decode(Self.sample("colorfulcups-2560x1600-sdr.png"))
        // Then the two agree (washed out and grey before: 17.8 dB for PQ)
        #expect(hdr.bitmap.width == original.bitmap.width && hdr.bitmap.height == original.bitmap.height)
        let psnr = PixelCompare.psnr(hdr.bitmap, original.bitmap)
        #expect(psnr >= 30, "\(transfer)\(file): \(psnr) dB")
        #expect(hdr.convertedToSRGB)
        #expect(hdr.colorProblem == nil)
        // and the probe says what the file is
        let probe = try ImageProber.probe(SamplePhotos.bytes(path))
        #expect(probe.hdr?.transfer == transfer)
        #expect(probe.hdr?.primaries == 9)
        #expect(probe.hdr?.toneMapped == true)
        // and a PNG's cLLi gives the content light level: SDR white at 203 nits the brightest
        if file == ".png" {
            let brightest = try #require(probe.hdr?.maxContentLightLevel)
            let average = try #require(probe.hdr?.maxFrameAverageLightLevel)
            #expect((190...203).contains(brightest) && average < brightest, "\(brightest), \(average)")
        }
    }

    @Test(arguments: [".png", ".avif", ".heic", ".jxl", ".lossless.jxl", "-icc.png", "-icc.tif"])
    func aGrayPQImageComesBackAsTheOriginal(_ file: String) throws {
        // Given the photo's luma carried in PQ at 203 nits as a 16-bit gray PNG with cICP, a 4:0:0 AVIF and HEIC,
        // lossy and lossless gray JPEG XLs, and a PNG and a TIFF described by libjxl's gray PQ profile; and the luma
        // as SDR
        let path = try Self.sample("colorfulcups-2560x1600-pq-gray" + file)
        // When both are decoded to 256 px
        let hdr = try Self.decode(path)
        let original = try Self.decode(Self.sample("colorfulcups-2560x1600-sdr-gray.png"))
        // Then they agree, and the probe says the gray image is tone-mapped
        let psnr = PixelCompare.psnr(hdr.bitmap, original.bitmap)
        print("gray PQ\(file): \(psnr) dB")
        #expect(psnr >= 30, "\(psnr) dB")
        #expect(hdr.probe.hdr?.toneMapped == true && hdr.convertedToSRGB)
        // (libheif 1.15 tells a handle's chroma format only once decoded: a HEIC's probe does not say gray)
        #expect(hdr.probe.isGrayscale || file == ".heic")
    }

    @Test(arguments: ["pq", "hlg"])
    func a444HEICWrittenThroughLibheifComesBackAsTheOriginal(_ transfer: String) throws {
        // Given the photo in PQ or HLG as a 10-bit 4:4:4 full-range HEIC written through libheif (pillow-heif), its
        // colr box naming BT.2020's matrix (9/16/9, 9/18/9) while libheif coded its samples as its own conversion
        // reads them
        let path = try Self.sample("colorfulcups-2560x1600-\(transfer)-444.heic")
        // When it is decoded at its own size (no resampling to blur a colour error), and the SDR original too
        let hdr = try Self.decode(path, side: 640)
        let original = try Self.decode(Self.sample("colorfulcups-2560x1600-sdr.png"), side: 640)
        // Then the two agree as closely as libheif's own RGB decode of the file tone-mapped the same way (43.9 dB for
        // PQ); read as 4:2:0 with BT.2020's weights, green and blue came out one to two levels off (34.2 and 33.7 dB)
        #expect(hdr.bitmap.width == 640 && original.bitmap.width == 640)
        let psnr = PixelCompare.psnr(hdr.bitmap, original.bitmap)
        print("\(transfer) 4:4:4 HEIC: \(psnr) dB")
        #expect(psnr >= 40, "\(transfer): \(psnr) dB")
        #expect(hdr.probe.hdr?.toneMapped == true && hdr.convertedToSRGB)
    }

    @Test func aTransparentPQHEICKeepsItsAlpha() throws {
        // Given the photo in PQ as a HEIC with an alpha plane falling from opaque to transparent across it, and the SDR
        // original with the same alpha
        let path = try Self.sample("colorfulcups-2560x1600-pq-alpha.heic")
        // When both are decoded to 256 px, premultiplied
        let hdr = try Self.decode(path)
        let original = try Self.decode(Self.sample("colorfulcups-2560x1600-sdr-alpha.png"))
        // Then they agree, colour and alpha, and the probe says the HEIC is tone-mapped
        let psnr = PixelCompare.psnr(hdr.bitmap, original.bitmap)
        print("transparent PQ HEIC: \(psnr) dB")
        #expect(!hdr.bitmap.isOpaque && hdr.bitmap.width == original.bitmap.width)
        #expect(psnr >= 30, "\(psnr) dB")
        #expect(hdr.probe.hasAlpha && hdr.probe.hdr?.toneMapped == true && hdr.convertedToSRGB)
    }

    @Test func anICCProfileNamesItsSignalByACICPTagOrByItsCurves() throws {
        // Given sRGB profiles made by lcms2, one with a cicp tag (ICC.1:2022) saying BT.2020 PQ and one without,
        // and the profile libjxl made for an HLG image (in the TIFF vips wrote)
        func saved(_ tag: cmsVideoSignalType?) -> [UInt8] {
            let profile = cmsCreate_sRGBProfile()
            defer { cmsCloseProfile(profile) }
            if var tag { _ = cmsWriteTag(profile, cmsSigcicpTag, &tag) }
            var size: UInt32 = 0
            _ = cmsSaveProfileToMem(profile, nil, &size)
            var bytes = [UInt8](repeating: 0, count: Int(size))
            _ = cmsSaveProfileToMem(profile, &bytes, &size)
            return bytes
        }
        let tagged = saved(
            cmsVideoSignalType(
                ColourPrimaries: 9, TransferCharacteristics: 16, MatrixCoefficients: 0, VideoFullRangeFlag: 1))
        let plain = saved(nil)
        let tiff = try SamplePhotos.bytes(Self.sample("colorfulcups-2560x1600-hlg-icc.tif"))
        guard case .icc(let hlg) = tiff.withUnsafeBytes({ TIFFDecoder.readColor($0, limits: .default) }).color else {
            Issue.record("the HLG TIFF has no ICC profile")
            return
        }
        // When each is read for an HDR signal
        let signals = [tagged, plain, hlg].map { profile in profile.withUnsafeBytes { ICCHDRSignal.cicp($0) } }
        // Then the tag is taken as it is, the plain sRGB profile has none, and libjxl's curves and colorants are HLG
        // in BT.2020
        #expect(signals[0] == EmbeddedColor.CICP(primaries: 9, transfer: 16, matrix: 0, fullRange: true))
        #expect(signals[1] == nil)
        #expect(signals[2] == EmbeddedColor.CICP(primaries: 9, transfer: 18, matrix: 0, fullRange: true))
    }

    @Test(arguments: ["pq", "hlg"])
    func highlightsRollOffWithoutChangingTheRest(_ transfer: String) throws {
        // Given the same photo with its brightest tenth pushed up to 1,000 nits
        let hdr = try Self.decode(Self.sample("colorfulcups-2560x1600-highlights-\(transfer).avif"))
        let original = try Self.decode(Self.sample("colorfulcups-2560x1600-sdr.png"))
        // When both are compared pixel by pixel
        let a = Self.packed(hdr.bitmap)
        let b = Self.packed(original.bitmap)
        var darkError = 0.0
        var darkCount = 0.0
        var brightHueShift = 0.0
        var brightCount = 0.0
        var clipped = 0
        for i in stride(from: 0, to: a.count, by: 4) {
            let o = (Double(b[i + 2]), Double(b[i + 1]), Double(b[i]))
            let h = (Double(a[i + 2]), Double(a[i + 1]), Double(a[i]))
            let luma = 0.2126 * o.0 + 0.7152 * o.1 + 0.0722 * o.2
            if luma < 100 {
                // Then tones well below SDR white (below BT.2390's knee) are what the original had
                darkError += pow(h.0 - o.0, 2) + pow(h.1 - o.1, 2) + pow(h.2 - o.2, 2)
                darkCount += 3
            } else if max(o.0, o.1, o.2) - min(o.0, o.1, o.2) > 60, max(o.0, o.1, o.2) < 250 {
                // and saturated bright colours keep their hue (the roll-off scales a pixel's components together)
                brightHueShift += abs(Self.hueDifference(Self.hue(o), Self.hue(h)))
                brightCount += 1
            }
            if h.0 == 255 && h.1 == 255 && h.2 == 255 && !(o.0 == 255 && o.1 == 255 && o.2 == 255) { clipped += 1 }
        }
        let darkPSNR = 10 * log10(255 * 255 / (darkError / max(darkCount, 1)))
        #expect(darkPSNR >= 35, "\(transfer): \(darkPSNR) dB below the knee")
        #expect(brightCount > 20)
        #expect(
            brightHueShift / max(brightCount, 1) < 3, "\(transfer): mean hue shift \(brightHueShift / brightCount)°")
        // and highlights are compressed, not clipped to white
        #expect(clipped < a.count / 4 / 200, "\(transfer): \(clipped) pixels clipped to white")
    }

    @Test func outOfGamutColoursKeepTheirHue() throws {
        // Given BT.2020's green, red and blue primaries at SDR white, all outside BT.709
        let mapper = try #require(HDRToneMapper(transfer: .pq, primaries: 9, sourcePeak: 203))
        let white = (0.3127, 0.3290)
        let primaries = [
            ((0.170, 0.797), SIMD3<Float>(0, 203, 0)), ((0.708, 0.292), SIMD3<Float>(203, 0, 0)),
            ((0.131, 0.046), SIMD3<Float>(0, 0, 203)),
        ]
        for (xy, light) in primaries {
            // When each is mapped to sRGB
            let (r, g, b) = mapper.encode(light)
            // Then its chromaticity stays on the line from white through the original (it was desaturated towards
            // white just enough to fit, not clipped channel by channel, which turns hues)
            let linear = [r, g, b].map { v -> Double in
                let c = Double(v) / 255
                return c <= 0.04045 ? c / 12.92 : pow((c + 0.055) / 1.055, 2.4)
            }
            let x = 0.4124 * linear[0] + 0.3576 * linear[1] + 0.1805 * linear[2]
            let y = 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]
            let z = 0.0193 * linear[0] + 0.1192 * linear[1] + 0.9505 * linear[2]
            let mapped = (x / (x + y + z), y / (x + y + z))
            let expected = atan2(xy.1 - white.1, xy.0 - white.0) * 180 / .pi
            let got = atan2(mapped.1 - white.1, mapped.0 - white.0) * 180 / .pi
            #expect(
                abs(Self.hueDifference(got, expected)) < 2, "\(light) → \(r),\(g),\(b): \(got)° against \(expected)°")
        }
    }

    static func packed(_ bitmap: Bitmap) -> [UInt8] {
        (0..<bitmap.height).flatMap { y in
            Array(
                UnsafeBufferPointer(start: bitmap.row(y).assumingMemoryBound(to: UInt8.self), count: bitmap.width * 4))
        }
    }

    static func hue(_ c: (Double, Double, Double)) -> Double {
        let (r, g, b) = c
        let h = atan2(sqrt(3) * (g - b), 2 * r - g - b) * 180 / .pi
        return h < 0 ? h + 360 : h
    }

    static func hueDifference(_ a: Double, _ b: Double) -> Double {
        var d = a - b
        while d > 180 { d -= 360 }
        while d < -180 { d += 360 }
        return d
    }
}
