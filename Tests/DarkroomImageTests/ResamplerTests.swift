import Foundation
import Testing

@testable import DarkroomImage

/// An in-memory test image: `width × height` pixels of `channels` bytes, rows packed.
private struct TestImage {
    var width: Int
    var height: Int
    var channels: Int
    var pixels: [UInt8]

    init(width: Int, height: Int, channels: Int, pixel: (Int, Int, Int) -> UInt8) {
        self.width = width
        self.height = height
        self.channels = channels
        pixels = [UInt8](repeating: 0, count: width * height * channels)
        for y in 0..<height {
            for x in 0..<width {
                for c in 0..<channels { pixels[(y * width + x) * channels + c] = pixel(x, y, c) }
            }
        }
    }

    subscript(x: Int, y: Int, c: Int) -> UInt8 { pixels[(y * width + x) * channels + c] }

    func cropped(x: Int, y: Int, width w: Int, height h: Int) -> TestImage {
        TestImage(width: w, height: h, channels: channels) { px, py, c in self[px + x, py + y, c] }
    }
}

/// Runs the resampler on `image`, feeding only `requiredSourceRows` unless `feedAllRows`.
private func resample(
    _ image: TestImage, rect: SourceRect? = nil, width: Int, height: Int,
    filter: ResamplingFilter = .lanczos3, alpha: Int? = nil,
    feedAllRows: Bool = false
) throws -> TestImage {
    var output = TestImage(width: width, height: height, channels: image.channels) { _, _, _ in 0 }
    let rect = rect ?? SourceRect(x: 0, y: 0, width: Double(image.width), height: Double(image.height))
    let rowBytes = image.width * image.channels
    try output.pixels.withUnsafeMutableBytes { out in
        let resampler = try RowResampler(
            sourceWidth: image.width, sourceHeight: image.height, channels: image.channels, sourceRect: rect,
            destination: PixelRows(
                base: out.baseAddress!, width: width, height: height,
                bytesPerRow: width * image.channels),
            filter: filter, alphaChannel: alpha)
        image.pixels.withUnsafeBytes { source in
            let rows = feedAllRows ? 0..<image.height : resampler.requiredSourceRows
            for y in rows { resampler.consume(row: source.baseAddress! + y * rowBytes, y: y) }
        }
        resampler.finish()
    }
    return output
}

/// A deterministic pseudo-random byte for pixel (x, y, c).
private func noise(_ x: Int, _ y: Int, _ c: Int) -> UInt8 {
    var h = UInt32(truncatingIfNeeded: x &* 73_856_093 ^ y &* 19_349_663 ^ c &* 83_492_791)
    h ^= h >> 13
    h = h &* 0x5bd1_e995
    h ^= h >> 15
    return UInt8(truncatingIfNeeded: h)
}

@Suite(.serialized) struct ResamplerTests {
    static let sizes: [(Int, Int, Int, Int)] = [
        (100, 80, 100, 80), (100, 80, 50, 40), (100, 80, 13, 7), (97, 61, 200, 130),
        (640, 480, 20, 15), (30, 20, 1, 1), (1, 1, 5, 3), (300, 7, 41, 7),
    ]

    @Test(arguments: ResamplingFilter.allCases)
    func constantColorStaysExactlyThatColor(filter: ResamplingFilter) throws {
        let colors: [(channels: Int, alpha: Int?, value: [UInt8])] = [
            (1, nil, [137]), (1, nil, [255]), (4, nil, [10, 200, 77, 255]), (4, 3, [40, 90, 120, 128]),
            (4, 3, [255, 255, 255, 255]),
        ]
        for (sw, sh, dw, dh) in Self.sizes {
            for color in colors {
                // Given a constant image
                let image = TestImage(width: sw, height: sh, channels: color.channels) { _, _, c in color.value[c] }
                // When it is resampled to any size
                let out = try resample(image, width: dw, height: dh, filter: filter, alpha: color.alpha)
                // Then every output pixel is exactly that color
                let wrong = (0..<(dw * dh * color.channels)).filter {
                    out.pixels[$0] != color.value[$0 % color.channels]
                }
                #expect(wrong.isEmpty, "\(filter) \(sw)×\(sh)→\(dw)×\(dh) \(color.value): \(wrong.count) wrong")
            }
        }
    }

    @Test(arguments: ResamplingFilter.allCases)
    func identitySizeReturnsTheInput(filter: ResamplingFilter) throws {
        for channels in [1, 4] {
            // Given a noisy image
            let image = TestImage(width: 67, height: 45, channels: channels, pixel: noise)
            // When it is resampled to its own size over the whole rect
            let out = try resample(image, width: 67, height: 45, filter: filter)
            // Then nothing changes
            #expect(out.pixels == image.pixels, "\(filter), \(channels) channels")
        }
    }

    @Test func boxHalvingIsTheExact2x2Average() throws {
        // Given a noisy BGRA image
        let image = TestImage(width: 64, height: 48, channels: 4, pixel: noise)
        // When a box filter halves it
        let out = try resample(image, width: 32, height: 24, filter: .box)
        // Then each pixel is the average of its 2×2 block (±1)
        var worst = 0
        for y in 0..<24 {
            for x in 0..<32 {
                for c in 0..<4 {
                    let sum = [(0, 0), (1, 0), (0, 1), (1, 1)].reduce(0) {
                        $0 + Int(image[2 * x + $1.0, 2 * y + $1.1, c])
                    }
                    worst = max(worst, abs(Int(out[x, y, c]) - sum / 4))
                }
            }
        }
        #expect(worst <= 1)
    }

    /// A smooth function whose slope vanishes at the image edges, and a 1200×900 image of it.
    private static func smooth(_ x: Double, _ y: Double, _ c: Int) -> Double {
        128 - 60 * cos(Double.pi * x / 1200) - 50 * cos(Double.pi * y / 900) * (c == 1 ? -1 : 1)
    }
    private static let smoothImage = TestImage(width: 1200, height: 900, channels: 4) { x, y, c in
        c == 3 ? 255 : UInt8(smooth(Double(x) + 0.5, Double(y) + 0.5, c).rounded())
    }

    @Test(arguments: [(120, 90), (300, 225), (37, 29), (1200, 20)])
    func smoothGradientStaysCloseToTheAnalyticValue(width: Int, height: Int) throws {
        // Given a smooth image whose slope vanishes at the edges
        let image = Self.smoothImage
        let sw = image.width
        let sh = image.height
        let f = Self.smooth
        for filter in ResamplingFilter.allCases {
            // When it is downscaled (including ratios that use the box pre-reduction)
            let out = try resample(image, width: width, height: height, filter: filter)
            // Then every pixel is within ±2 of the function at the output pixel's center
            var worst = 0.0
            for y in 0..<height {
                for x in 0..<width {
                    let sx = (Double(x) + 0.5) * Double(sw) / Double(width)
                    let sy = (Double(y) + 0.5) * Double(sh) / Double(height)
                    for c in 0..<3 { worst = max(worst, abs(Double(out[x, y, c]) - f(sx, sy, c))) }
                }
            }
            #expect(worst <= 2, "\(filter) → \(width)×\(height): off by \(worst)")
        }
    }

    @Test(arguments: ResamplingFilter.allCases)
    func linearRampsKeepTheirOrder(filter: ResamplingFilter) throws {
        for (dw, dh) in [(77, 31), (23, 9), (500, 40)] {
            // Given a horizontal and a vertical ramp
            let horizontal = TestImage(width: 300, height: 40, channels: 1) { x, _, _ in UInt8(x * 255 / 299) }
            let vertical = TestImage(width: 40, height: 300, channels: 1) { _, y, _ in UInt8(y * 255 / 299) }
            // When they are resampled
            let h = try resample(horizontal, width: dw, height: dh, filter: filter)
            let v = try resample(vertical, width: dh, height: dw, filter: filter)
            // Then values never decrease along the ramp, and the ramp spans most of the range
            for y in 0..<dh {
                for x in 1..<dw { #expect(h[x, y, 0] >= h[x - 1, y, 0], "\(filter) row \(y) at \(x)") }
            }
            for x in 0..<dh {
                for y in 1..<dw { #expect(v[x, y, 0] >= v[x, y - 1, 0], "\(filter) column \(x) at \(y)") }
            }
            #expect(h[0, 0, 0] < 10 && h[dw - 1, 0, 0] > 245)
        }
    }

    @Test func premultipliedColorNeverExceedsAlpha() throws {
        // Given a hard-edged premultiplied image: opaque white, opaque black and transparent blocks, and a
        // semi-transparent stripe
        let image = TestImage(width: 120, height: 90, channels: 4) { x, y, c in
            if x % 30 == 7 { return c == 3 ? 90 : 60 }
            switch (x / 10 + y / 10) % 3 {
            case 0: return 255
            case 1: return c == 3 ? 255 : 0
            default: return 0
            }
        }
        for (dw, dh) in [(43, 33), (240, 180), (120, 90), (7, 5)] {
            // When Lanczos resamples it with alpha at index 3
            let out = try resample(image, width: dw, height: dh, filter: .lanczos3, alpha: 3)
            // Then no color exceeds its alpha
            var violations = 0
            for i in stride(from: 0, to: out.pixels.count, by: 4)
            where out.pixels[i..<i + 3].contains(where: { $0 > out.pixels[i + 3] }) {
                violations += 1
            }
            #expect(violations == 0, "\(dw)×\(dh)")
        }
        // And with alpha first (ARGB) the same holds
        let argb = TestImage(width: 120, height: 90, channels: 4) { x, y, c in image[x, y, (c + 3) % 4] }
        let out = try resample(argb, width: 43, height: 33, filter: .lanczos3, alpha: 0)
        #expect(
            stride(from: 0, to: out.pixels.count, by: 4).allSatisfy { i in
                out.pixels[i + 1..<i + 4].allSatisfy { $0 <= out.pixels[i] }
            })
        // And without alpha semantics the same resample does ring past alpha (so the clamp is what holds it)
        let free = try resample(image, width: 43, height: 33, filter: .lanczos3, alpha: nil)
        let ringing = stride(from: 0, to: free.pixels.count, by: 4).contains { i in
            free.pixels[i..<i + 3].contains { $0 > free.pixels[i + 3] }
        }
        #expect(ringing)
    }

    @Test func croppingWithSourceRectMatchesAPreCroppedImage() throws {
        // Given a noisy image and its center crop
        let image = TestImage(width: 200, height: 150, channels: 4, pixel: noise)
        // When a box halving uses a source rect vs. the pre-cropped image
        let rect = SourceRect(x: 40, y: 30, width: 80, height: 60)
        let viaRect = try resample(image, rect: rect, width: 40, height: 30, filter: .box)
        let viaCrop = try resample(
            image.cropped(x: 40, y: 30, width: 80, height: 60), width: 40, height: 30,
            filter: .box)
        // Then every pixel matches (±1)
        #expect(zip(viaRect.pixels, viaCrop.pixels).allSatisfy { abs(Int($0) - Int($1)) <= 1 })

        // And with Lanczos at 2.5× every pixel whose window stays inside the crop matches (±1)
        let lanczosRect = SourceRect(x: 50, y: 40, width: 100, height: 70)
        let a = try resample(image, rect: lanczosRect, width: 40, height: 28)
        let b = try resample(image.cropped(x: 50, y: 40, width: 100, height: 70), width: 40, height: 28)
        var worst = 0
        for y in 3..<25 {
            for x in 3..<37 {
                for c in 0..<4 { worst = max(worst, abs(Int(a[x, y, c]) - Int(b[x, y, c]))) }
            }
        }
        #expect(worst <= 1)
        // And the crop's border pixels do differ somewhere (the full image's neighbors count)
        #expect(a.pixels != b.pixels)
    }

    @Test func hugeRatioStreamsInBoundedMemory() throws {
        // Given a 5000×3000 BGRA image (60 MB if held) produced one row at a time: a horizontal ramp
        let sw = 5000
        let sh = 3000
        let dw = 50
        let dh = 30
        let row = (0..<(sw * 4)).map { i in i % 4 == 3 ? UInt8(255) : UInt8((i / 4) * 255 / (sw - 1)) }
        var output = [UInt8](repeating: 0, count: dw * dh * 4)
        // When it is reduced 100× with streaming rows, measured by a meter that sees only this test's memory
        let (_, meter) = try PixelMemory.measure {
            try output.withUnsafeMutableBytes { out in
                let resampler = try RowResampler(
                    sourceWidth: sw, sourceHeight: sh, channels: 4,
                    sourceRect: SourceRect(x: 0, y: 0, width: Double(sw), height: Double(sh)),
                    destination: PixelRows(base: out.baseAddress!, width: dw, height: dh, bytesPerRow: dw * 4),
                    filter: .lanczos3, alphaChannel: 3)
                row.withUnsafeBytes { source in
                    for y in resampler.requiredSourceRows { resampler.consume(row: source.baseAddress!, y: y) }
                }
                resampler.finish()
            }
        }
        // Then the resampler's peak pixel memory proves streaming (far below the 60 MB image)
        let peak = meter.peakBytes
        #expect(peak < 2_000_000, "peak \(peak) bytes")
        // And the ramp comes out right (±2 of the analytic value away from the clamped edges)
        for y in 0..<dh {
            for x in 2..<(dw - 2) {
                let expected = ((Double(x) + 0.5) * Double(sw) / Double(dw)) * 255 / Double(sw - 1)
                #expect(abs(Double(output[(y * dw + x) * 4]) - expected) <= 2, "x \(x)")
                #expect(output[(y * dw + x) * 4 + 3] == 255)
            }
        }
    }

    @Test func rowsOutsideRequiredSourceRowsCanBeSkipped() throws {
        // Given a noisy image and a crop of its middle band
        let image = TestImage(width: 400, height: 300, channels: 4, pixel: noise)
        let rect = SourceRect(x: 20, y: 100.5, width: 360, height: 99.25)
        for filter in ResamplingFilter.allCases {
            // When only the required rows are fed, vs. all rows
            let skipping = try resample(image, rect: rect, width: 40, height: 11, filter: filter)
            let everything = try resample(image, rect: rect, width: 40, height: 11, filter: filter, feedAllRows: true)
            // Then the results are identical, and rows were actually skipped
            #expect(skipping.pixels == everything.pixels, "\(filter)")
        }
        var scratch = [UInt8](repeating: 0, count: 40 * 11 * 4)
        let probe = try scratch.withUnsafeMutableBytes { out in
            try RowResampler(
                sourceWidth: 400, sourceHeight: 300, channels: 4, sourceRect: rect,
                destination: PixelRows(base: out.baseAddress!, width: 40, height: 11, bytesPerRow: 160),
                filter: .lanczos3, alphaChannel: nil
            ).requiredSourceRows
        }
        #expect(probe.lowerBound > 60 && probe.upperBound < 240, "\(probe)")
    }

    @Test(arguments: [(400, 300, 37, 29), (400, 300, 200, 150), (40, 30, 80, 60)])
    func missingRowsAreFilledFromTheirNeighbors(sw: Int, sh: Int, dw: Int, dh: Int) throws {
        // Given a constant image
        let image = TestImage(width: sw, height: sh, channels: 4) { _, _, c in [30, 60, 90, 200][c] }
        let rowBytes = sw * 4
        for pattern in ["even rows only", "first half only", "nothing"] {
            // When the decoder skips required rows (a broken or truncated stream)
            var output = [UInt8](repeating: 7, count: dw * dh * 4)
            try output.withUnsafeMutableBytes { out in
                let resampler = try RowResampler(
                    sourceWidth: sw, sourceHeight: sh, channels: 4,
                    sourceRect: SourceRect(x: 0, y: 0, width: Double(sw), height: Double(sh)),
                    destination: PixelRows(base: out.baseAddress!, width: dw, height: dh, bytesPerRow: dw * 4),
                    filter: .lanczos3, alphaChannel: 3)
                image.pixels.withUnsafeBytes { source in
                    for y in resampler.requiredSourceRows {
                        let fed =
                            pattern == "even rows only" ? y % 2 == 0 : pattern == "first half only" ? y < sh / 2 : false
                        if fed { resampler.consume(row: source.baseAddress! + y * rowBytes, y: y) }
                    }
                }
                resampler.finish()
                resampler.finish()  // a second finish changes nothing
            }
            // Then every output pixel is written: the color where rows arrived, zero when none did
            let expected: [UInt8] = pattern == "nothing" ? [0, 0, 0, 0] : [30, 60, 90, 200]
            #expect((0..<output.count).allSatisfy { output[$0] == expected[$0 % 4] }, "\(pattern)")
        }
    }

    @Test func upscaleTwiceWorks() throws {
        // Given a small gray image
        let image = TestImage(width: 20, height: 15, channels: 1, pixel: noise)
        // When a box filter doubles it
        let box = try resample(image, width: 40, height: 30, filter: .box)
        // Then each source pixel becomes an exact 2×2 block
        #expect((0..<30).allSatisfy { y in (0..<40).allSatisfy { x in box[x, y, 0] == image[x / 2, y / 2, 0] } })

        // And Lanczos doubling a smooth image stays close to it
        let smooth = TestImage(width: 20, height: 15, channels: 4) { x, y, c in UInt8(40 + 6 * x + 5 * y + c) }
        let big = try resample(smooth, width: 40, height: 30)
        var worst = 0.0
        for y in 6..<24 {
            for x in 6..<34 {
                let sx = (Double(x) + 0.5) / 2 - 0.5
                let sy = (Double(y) + 0.5) / 2 - 0.5
                worst = max(worst, abs(Double(big[x, y, 0]) - (40 + 6 * sx + 5 * sy)))
            }
        }
        #expect(worst <= 1, "off by \(worst)")
    }

    @Test func oneByOneOutputs() throws {
        // Given a 1×1 image and a noisy image
        let single = TestImage(width: 1, height: 1, channels: 4) { _, _, c in UInt8(10 + 50 * c) }
        let noisy = TestImage(width: 37, height: 23, channels: 1, pixel: noise)
        // When each is resampled to 1×1
        let same = try resample(single, width: 1, height: 1)
        let mean = try resample(noisy, width: 1, height: 1, filter: .box)
        // Then the 1×1 copy is exact and the box result is the image's mean (±1)
        #expect(same.pixels == single.pixels)
        let average = Double(noisy.pixels.reduce(0) { $0 + Int($1) }) / Double(noisy.pixels.count)
        #expect(abs(Double(mean.pixels[0]) - average) <= 1)
    }

    @Test func invalidArgumentsAreRefused() {
        var buffer = [UInt8](repeating: 0, count: 64)
        buffer.withUnsafeMutableBytes { out in
            let base = out.baseAddress!
            let whole = SourceRect(x: 0, y: 0, width: 10, height: 10)
            let cases: [(Int, Int, Int, SourceRect, PixelRows, Int?)] = [
                (0, 10, 4, whole, PixelRows(base: base, width: 2, height: 2, bytesPerRow: 8), nil),
                (10, 10, 3, whole, PixelRows(base: base, width: 2, height: 2, bytesPerRow: 8), nil),
                (10, 10, 4, whole, PixelRows(base: base, width: 0, height: 2, bytesPerRow: 8), nil),
                (
                    10, 10, 4, SourceRect(x: 5, y: 0, width: 10, height: 10),
                    PixelRows(base: base, width: 2, height: 2, bytesPerRow: 8), nil
                ),
                (
                    10, 10, 4, SourceRect(x: -1, y: 0, width: 5, height: 5),
                    PixelRows(base: base, width: 2, height: 2, bytesPerRow: 8), nil
                ),
                (
                    10, 10, 4, SourceRect(x: 0, y: 0, width: 0, height: 5),
                    PixelRows(base: base, width: 2, height: 2, bytesPerRow: 8), nil
                ),
                (10, 10, 1, whole, PixelRows(base: base, width: 2, height: 2, bytesPerRow: 8), 0),
                (10, 10, 4, whole, PixelRows(base: base, width: 4, height: 2, bytesPerRow: 8), nil),
            ]
            for (sw, sh, channels, rect, destination, alpha) in cases {
                // Given impossible geometry, When a resampler is made, Then it throws invalidArgument
                do {
                    _ = try RowResampler(
                        sourceWidth: sw, sourceHeight: sh, channels: channels, sourceRect: rect,
                        destination: destination, filter: .lanczos3, alphaChannel: alpha)
                    Issue.record("accepted \(sw)×\(sh)×\(channels) \(rect) → \(destination.width)")
                } catch {
                    #expect((error as? DarkroomImageError)?.code == .invalidArgument)
                }
            }
        }
    }
}
