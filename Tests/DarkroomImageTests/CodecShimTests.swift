// Tests for the two C shims (CDarkroomJPEG over libjpeg-turbo, CDarkroomGIF over giflib), driven through their
// C API exactly as the Swift decoders will drive them. Real photos come from ../shared/photos (package root
// relative) or $DARKROOM_PHOTOS; a missing folder fails the tests.
import CDarkroomGIF
import CDarkroomJPEG
import DarkroomImage
import DarkroomSupport
import DarkroomTestSupport
import Foundation
import Testing

// MARK: - Fixtures

/// The samples these tests use, relative to the photos folder.
private enum ShimPhotos {
    static func bytes(_ relative: String) throws -> [UInt8] { try SamplePhotos.bytes(relative) }

    static let jpeg12mp = "jpeg-12mp/eveningglow-4032x3024.jpg"
    static let jpeg12mpProgressive = "jpeg-12mp/kite-4032x3024-progressive.jpg"
    static let jpegSmall = "orientation/fallenleaf-600x400-orientation-1.jpg"
    static let gifAnimated = "gif/slideshow-480x300-animated.gif"
}

// MARK: - JPEG helpers

/// The NUL-terminated text in a C message buffer.
private func text(_ buffer: [CChar]) -> String {
    String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
}

private func code(_ s: dr_jpeg_status) -> Int32 { Int32(s.rawValue) }
private func code(_ o: dr_jpeg_output) -> Int32 { Int32(o.rawValue) }
private func code(_ s: dr_gif_status) -> Int32 { Int32(s.rawValue) }
private func code(_ c: dr_jpeg_colorspace) -> Int32 { Int32(c.rawValue) }

private enum JPEGStage: Equatable { case create, header, start, rows, finish, done }

private struct JPEGDecode {
    var status: Int32 = 0
    var stage: JPEGStage = .create
    var info = dr_jpeg_info()
    var pixels: [UInt8] = []
    var bytesPerPixel = 0
    var message = ""
    var width: Int { Int(info.output_width) }
    var height: Int { Int(info.output_height) }
    var ok: Bool { stage == .done && status == code(DR_JPEG_OK) }
}

/// Runs create → read_header → start → read_rows (in chunks of `chunk`) → finish, stopping at the first failure.
/// Images above `maxPixels` are not read (finish aborts them), so fuzzed headers cannot make the test allocate
/// gigabytes.
private func decodeJPEG(
    _ bytes: [UInt8], scale: Int32 = 1, output: dr_jpeg_output = DR_JPEG_OUT_BGRA, strict: Bool = true,
    maxScans: Int32 = 1000, maxMemory: Int = 0, chunk: Int32 = 37, maxPixels: Int = 20_000_000
) -> JPEGDecode {
    var r = JPEGDecode()
    bytes.withUnsafeBufferPointer { buf in
        guard let d = dr_jpeg_decoder_create(buf.baseAddress, buf.count, maxScans, strict ? 1 : 0, maxMemory) else {
            r.status = -1
            return
        }
        defer { dr_jpeg_decoder_destroy(d) }
        func failed(_ status: Int32, _ stage: JPEGStage) -> Bool {
            guard status != code(DR_JPEG_OK) else { return false }
            r.status = status
            r.stage = stage
            r.message = String(cString: dr_jpeg_message(d))
            return true
        }
        if failed(dr_jpeg_read_header(d, &r.info), .header) { return }
        if failed(dr_jpeg_start(d, scale, code(output), &r.info), .start) { return }
        r.bytesPerPixel = output == DR_JPEG_OUT_GRAY ? 1 : 4
        let stride = r.width * r.bytesPerPixel
        if r.width * r.height <= maxPixels {
            r.pixels = [UInt8](repeating: 0, count: stride * r.height)
            var y = 0
            while y < r.height {
                var got: Int32 = 0
                let want = min(chunk, Int32(r.height - y))
                let status = r.pixels.withUnsafeMutableBufferPointer { p in
                    dr_jpeg_read_rows(d, p.baseAddress! + y * stride, stride, want, &got)
                }
                if failed(status, .rows) { return }
                if got == 0 { break }
                y += Int(got)
            }
            #expect(y == r.height, "read_rows stopped early")
        }
        if failed(dr_jpeg_finish(d, &r.info), .finish) { return }
        r.stage = .done
        r.message = String(cString: dr_jpeg_message(d))
    }
    return r
}

private func encodeJPEG(
    _ pixels: [UInt8], width: Int, height: Int, input: dr_jpeg_output, quality: Int32 = 95,
    progressive: Bool = false, optimize: Bool = true
) -> (status: Int32, bytes: [UInt8], message: String) {
    let bpp = input == DR_JPEG_OUT_GRAY ? 1 : 4
    var out: UnsafeMutablePointer<UInt8>? = nil
    var outSize = 0
    var msg = [CChar](repeating: 0, count: 256)
    let status = pixels.withUnsafeBufferPointer { p in
        dr_jpeg_encode(
            p.baseAddress, Int32(width), Int32(height), width * bpp, code(input), quality,
            progressive ? 1 : 0, optimize ? 1 : 0, &out, &outSize, &msg, msg.count)
    }
    var bytes: [UInt8] = []
    if let out {
        bytes = [UInt8](UnsafeBufferPointer(start: out, count: outSize))
        dr_jpeg_free(out)
    }
    return (status, bytes, text(msg))
}

/// A smooth synthetic picture (gradients and a slow sine), BGRA with A = 255, or its gray version.
private func smoothImage(width: Int, height: Int, gray: Bool) -> [UInt8] {
    var px = [UInt8](repeating: 255, count: width * height * (gray ? 1 : 4))
    for y in 0..<height {
        for x in 0..<width {
            let r = 128 + 100 * sin(Double(x) / 23 + Double(y) / 41)
            let g = 40 + 170 * Double(y) / Double(height)
            let b = 30 + 190 * Double(x + y) / Double(width + height)
            if gray {
                px[y * width + x] = UInt8((0.299 * r + 0.587 * g + 0.114 * b).rounded())
            } else {
                let i = (y * width + x) * 4
                px[i] = UInt8(b.rounded())
                px[i + 1] = UInt8(g.rounded())
                px[i + 2] = UInt8(r.rounded())
            }
        }
    }
    return px
}

// MARK: - GIF helpers

/// A GIF87a/89a writer for tests: one frame, 2-bit LZW codes kept at 3 bits by a clear code every two pixels
/// (valid LZW that every decoder accepts, just not compressed).
private struct TinyGIF {
    var canvasWidth: Int
    var canvasHeight: Int
    var globalPalette: [[UInt8]]? = [[255, 0, 0], [0, 255, 0], [0, 0, 255], [255, 255, 255]]  // RGB
    var localPalette: [[UInt8]]? = nil
    var transparentIndex: Int? = nil
    var left = 0, top = 0
    var width: Int
    var height: Int
    var interlaced = false
    var pixels: [UInt8]  // width*height indices (0...3), row-major in picture order
    var includeFrame = true

    static func rowOrder(height: Int, interlaced: Bool) -> [Int] {
        guard interlaced else { return Array(0..<height) }
        var rows: [Int] = []
        for (start, step) in [(0, 8), (4, 8), (2, 4), (1, 2)] {
            rows += Array(stride(from: start, to: height, by: step))
        }
        return rows
    }

    /// The file, and the offset just past the frame's data (its block terminator included).
    func encode() -> (bytes: [UInt8], frameEnd: Int) {
        var out: [UInt8] = Array("GIF89a".utf8)
        func le16(_ v: Int) { out += [UInt8(v & 0xFF), UInt8((v >> 8) & 0xFF)] }
        func table(_ p: [[UInt8]]) -> (packedSize: UInt8, bytes: [UInt8]) {
            var n = 2
            var bits = 1
            while n < p.count {
                n *= 2
                bits += 1
            }
            var bytes: [UInt8] = []
            for i in 0..<n { bytes += i < p.count ? p[i] : [0, 0, 0] }
            return (UInt8(bits - 1), bytes)
        }
        le16(canvasWidth)
        le16(canvasHeight)
        if let g = globalPalette {
            let t = table(g)
            out += [0x80 | 0x10 | t.packedSize, 0, 0]
            out += t.bytes
        } else {
            out += [0, 0, 0]
        }
        if let t = transparentIndex {
            out += [0x21, 0xF9, 0x04, 0x01, 0, 0, UInt8(t), 0x00]
        }
        out += [0x21, 0xFE, 0x03] + Array("hi!".utf8) + [0x00]  // a comment extension, to be skipped
        guard includeFrame else {
            out.append(0x3B)
            return (out, out.count)
        }
        out.append(0x2C)
        le16(left)
        le16(top)
        le16(width)
        le16(height)
        var packed: UInt8 = interlaced ? 0x40 : 0
        var localBytes: [UInt8] = []
        if let l = localPalette {
            let t = table(l)
            packed |= 0x80 | t.packedSize
            localBytes = t.bytes
        }
        out.append(packed)
        out += localBytes
        out.append(2)  // LZW minimum code size: clear = 4, end = 5, codes 3 bits wide
        var codes: [Int] = []
        var stream: [UInt8] = []
        for y in TinyGIF.rowOrder(height: height, interlaced: interlaced) {
            stream += pixels[(y * width)..<(y * width + width)]
        }
        for (i, p) in stream.enumerated() {
            if i % 2 == 0 { codes.append(4) }
            codes.append(Int(p))
        }
        codes.append(5)
        var data: [UInt8] = []
        var acc = 0
        var nbits = 0
        for c in codes {
            acc |= c << nbits
            nbits += 3
            while nbits >= 8 {
                data.append(UInt8(acc & 0xFF))
                acc >>= 8
                nbits -= 8
            }
        }
        if nbits > 0 { data.append(UInt8(acc & 0xFF)) }
        var i = 0
        while i < data.count {
            let n = min(255, data.count - i)
            out.append(UInt8(n))
            out += data[i..<(i + n)]
            i += n
        }
        out.append(0x00)
        let frameEnd = out.count
        out.append(0x3B)
        return (out, frameEnd)
    }
}

private struct GIFDecode {
    var status: Int32
    var info: dr_gif_info
    var pixels: [UInt8]
    var message: String
    func pixel(_ x: Int, _ y: Int, width: Int) -> [UInt8] {
        Array(pixels[(y * width + x) * 4..<(y * width + x) * 4 + 4])
    }
}

private func gifInfo(_ bytes: [UInt8]) -> (status: Int32, info: dr_gif_info) {
    var info = dr_gif_info()
    var msg = [CChar](repeating: 0, count: 128)
    let status = bytes.withUnsafeBufferPointer { dr_gif_read_info($0.baseAddress, $0.count, &info, &msg, msg.count) }
    return (status, info)
}

private func decodeGIF(_ bytes: [UInt8], width: Int, height: Int, stride: Int? = nil) -> GIFDecode {
    let rowBytes = stride ?? width * 4
    var pixels = [UInt8](repeating: 0xAB, count: max(1, rowBytes * height))  // garbage: the shim must clear it
    var info = dr_gif_info()
    var msg = [CChar](repeating: 0, count: 128)
    let status = bytes.withUnsafeBufferPointer { src in
        pixels.withUnsafeMutableBufferPointer { dst in
            dr_gif_decode_first_frame(
                src.baseAddress, src.count, dst.baseAddress, rowBytes, Int32(width),
                Int32(height), &info, &msg, msg.count)
        }
    }
    return GIFDecode(status: status, info: info, pixels: pixels, message: text(msg))
}

// MARK: - Tests

@Suite("CodecShimTests: libjpeg-turbo and giflib C shims")
struct CodecShimTests {
    // MARK: JPEG header and full decodes

    @Test func jpegHeaderOf12MPPhotoReportsSizeAndProgressiveFlag() throws {
        // Given a baseline and a progressive 4032x3024 camera photo
        let baseline = try ShimPhotos.bytes(ShimPhotos.jpeg12mp)
        let progressive = try ShimPhotos.bytes(ShimPhotos.jpeg12mpProgressive)
        for (bytes, isProgressive) in [(baseline, 0), (progressive, 1)] {
            // When only the header is read
            var info = dr_jpeg_info()
            let status = bytes.withUnsafeBufferPointer { buf -> Int32 in
                let d = dr_jpeg_decoder_create(buf.baseAddress, buf.count, 100, 1, 0)!
                defer { dr_jpeg_decoder_destroy(d) }
                return dr_jpeg_read_header(d, &info)
            }
            // Then size, components, colour space and the progressive flag are those of the file
            #expect(status == code(DR_JPEG_OK))
            #expect(info.width == 4032 && info.height == 3024)
            #expect(info.components == 3)
            #expect(info.colorspace == code(DR_JPEG_CS_YCBCR))
            #expect(info.progressive == Int32(isProgressive))
            #expect(info.warnings == 0 && info.truncated == 0)
        }
    }

    @Test func jpegFullDecodeTo12MPBGRA() throws {
        // Given the 12 MP baseline photo
        let bytes = try ShimPhotos.bytes(ShimPhotos.jpeg12mp)
        // When it is decoded at full size to BGRA
        let r = decodeJPEG(bytes, chunk: 64, maxPixels: 13_000_000)
        // Then it is 4032x3024, opaque, clean, and not a flat picture
        #expect(r.ok, "stage \(r.stage) status \(r.status): \(r.message)")
        #expect(r.width == 4032 && r.height == 3024)
        #expect(r.pixels.count == 4032 * 3024 * 4)
        #expect(r.info.warnings == 0 && r.info.truncated == 0)
        var distinct = Set<UInt32>()
        var allOpaque = true
        for i in Swift.stride(from: 0, to: r.pixels.count, by: 4 * 997) {
            distinct.insert(UInt32(r.pixels[i]) << 16 | UInt32(r.pixels[i + 1]) << 8 | UInt32(r.pixels[i + 2]))
            allOpaque = allOpaque && r.pixels[i + 3] == 255
        }
        #expect(distinct.count > 100)
        #expect(allOpaque)
    }

    @Test func jpegScaledDecodes() throws {
        // Given the 12 MP baseline and progressive photos
        for path in [ShimPhotos.jpeg12mp, ShimPhotos.jpeg12mpProgressive] {
            let bytes = try ShimPhotos.bytes(path)
            // When decoded with DCT scaling 1/2, 1/4, 1/8
            for (denom, w, h) in [(Int32(2), 2016, 1512), (4, 1008, 756), (8, 504, 378)] {
                let r = decodeJPEG(bytes, scale: denom)
                // Then the output size is the scaled size
                #expect(r.ok, "\(path) 1/\(denom): \(r.message)")
                #expect(r.width == w && r.height == h, "\(path) 1/\(denom)")
                #expect(r.info.width == 4032, "stored size stays the file's")
            }
        }
    }

    @Test func jpegGrayOutputIsLumaOfColorOutput() throws {
        // Given the 12 MP photo decoded at 1/8 both as BGRA and as gray
        let bytes = try ShimPhotos.bytes(ShimPhotos.jpeg12mp)
        let color = decodeJPEG(bytes, scale: 8)
        let gray = decodeJPEG(bytes, scale: 8, output: DR_JPEG_OUT_GRAY)
        // Then the gray output is one byte per pixel, the same size, and equals the colour output's luma
        #expect(color.ok && gray.ok, "\(gray.message)")
        #expect(gray.width == 504 && gray.height == 378)
        #expect(gray.pixels.count == 504 * 378)
        var worst = 0
        for i in 0..<(504 * 378) {
            let b = Double(color.pixels[i * 4])
            let g = Double(color.pixels[i * 4 + 1])
            let r = Double(color.pixels[i * 4 + 2])
            let luma = 0.299 * r + 0.587 * g + 0.114 * b
            worst = max(worst, Int(abs(luma - Double(gray.pixels[i])).rounded()))
        }
        #expect(worst <= 3, "gray differs from the colour decode's luma by up to \(worst)")
    }

    @Test func jpegGrayFileDecodesToBGRAAndGray() {
        // Given a gray JPEG made by the encoder
        let w = 200
        let h = 150
        let src = smoothImage(width: w, height: h, gray: true)
        let jpeg = encodeJPEG(src, width: w, height: h, input: DR_JPEG_OUT_GRAY)
        #expect(jpeg.status == code(DR_JPEG_OK))
        // When decoded to BGRA and to gray
        let bgra = decodeJPEG(jpeg.bytes)
        let gray = decodeJPEG(jpeg.bytes, output: DR_JPEG_OUT_GRAY)
        // Then the file is 1-component gray, and BGRA output repeats the gray value with A = 255
        #expect(bgra.ok && gray.ok)
        #expect(gray.info.components == 1 && gray.info.colorspace == code(DR_JPEG_CS_GRAY))
        var same = true
        for i in 0..<(w * h) {
            let g = gray.pixels[i]
            same =
                same && bgra.pixels[i * 4] == g && bgra.pixels[i * 4 + 1] == g && bgra.pixels[i * 4 + 2] == g
                && bgra.pixels[i * 4 + 3] == 255
        }
        #expect(same)
    }

    @Test(arguments: [ShimPhotos.jpeg12mp, ShimPhotos.jpeg12mpProgressive])
    func jpegSkipRowsMatchesFullDecode(path: String) throws {
        // Given a 12 MP photo (baseline or progressive) decoded in full at 1/2 scale
        let bytes = try ShimPhotos.bytes(path)
        let full = decodeJPEG(bytes, scale: 2)
        #expect(full.ok)
        let w = full.width
        let stride = w * 4
        // When a second decoder reads 10 rows, skips 700, reads 50, then skips past the end
        var rowsRead: Int32 = 0
        var skipped: Int32 = 0
        var skippedAtEnd: Int32 = 0
        var head = [UInt8](repeating: 0, count: 10 * stride)
        var band = [UInt8](repeating: 0, count: 50 * stride)
        var info = dr_jpeg_info()
        var statuses: [Int32] = []
        bytes.withUnsafeBufferPointer { buf in
            let d = dr_jpeg_decoder_create(buf.baseAddress, buf.count, 100, 1, 0)!
            defer { dr_jpeg_decoder_destroy(d) }
            statuses.append(dr_jpeg_read_header(d, &info))
            statuses.append(dr_jpeg_start(d, 2, code(DR_JPEG_OUT_BGRA), &info))
            statuses.append(
                head.withUnsafeMutableBufferPointer { dr_jpeg_read_rows(d, $0.baseAddress, stride, 10, &rowsRead) })
            statuses.append(dr_jpeg_skip_rows(d, 700, &skipped))
            statuses.append(
                band.withUnsafeMutableBufferPointer { dr_jpeg_read_rows(d, $0.baseAddress, stride, 50, &rowsRead) })
            statuses.append(dr_jpeg_skip_rows(d, 100_000, &skippedAtEnd))
            statuses.append(dr_jpeg_finish(d, &info))
        }
        // Then every call succeeds, the counts are exact, and the rows after the skip equal the full decode's
        #expect(statuses.allSatisfy { $0 == code(DR_JPEG_OK) }, "\(statuses)")
        #expect(skipped == 700 && rowsRead == 50)
        #expect(skippedAtEnd == Int32(full.height - 760))
        #expect(head[...] == full.pixels[0..<(10 * stride)])
        #expect(band[...] == full.pixels[(710 * stride)..<(760 * stride)])
    }

    // MARK: JPEG damage

    @Test func jpegTruncatedAtManyOffsets() throws {
        // Given a real photo and a synthetic progressive file, each cut at many offsets
        let photo = try ShimPhotos.bytes(ShimPhotos.jpegSmall)
        let w = 320
        let h = 240
        let prog = encodeJPEG(
            smoothImage(width: w, height: h, gray: false), width: w, height: h,
            input: DR_JPEG_OUT_BGRA, quality: 90, progressive: true
        ).bytes
        #expect(!prog.isEmpty)
        for file in [photo, prog] {
            #expect(decodeJPEG(file).ok, "the whole file decodes")
            var offsets = [0, 1, 2, 3, 4, 10, 20, 50, 100, 200, 500, 1000, file.count - 2, file.count - 1]
            offsets += (1..<48).map { file.count * $0 / 48 }
            var lenientSurvivors = 0
            for n in offsets where n < file.count {
                let cut = Array(file[0..<n])
                // When decoded strictly, Then the decode fails with TRUNCATED at some stage
                let strict = decodeJPEG(cut, strict: true)
                #expect(
                    strict.status == code(DR_JPEG_ERR_TRUNCATED),
                    "strict cut at \(n): stage \(strict.stage) status \(strict.status) \(strict.message)")
                // When decoded leniently, Then either the header was lost (TRUNCATED) or the decode completes
                // with the truncated flag set
                let lenient = decodeJPEG(cut, strict: false)
                if lenient.stage == .header {
                    #expect(lenient.status == code(DR_JPEG_ERR_TRUNCATED), "lenient cut at \(n): \(lenient.message)")
                } else {
                    #expect(
                        lenient.ok,
                        "lenient cut at \(n): stage \(lenient.stage) status \(lenient.status) \(lenient.message)")
                    #expect(lenient.info.truncated == 1, "lenient cut at \(n)")
                    #expect(lenient.info.warnings >= 1, "lenient cut at \(n)")
                    lenientSurvivors += 1
                }
            }
            #expect(lenientSurvivors >= 20, "cuts after the header (44 KB of APPn in the photo) decode")
        }
        // Given the real 12 MP progressive photo cut inside its scans, When decoded at 1/8, Then strict says
        // TRUNCATED at start (all scans are read there) and lenient decodes with the flag set
        let kite = try ShimPhotos.bytes(ShimPhotos.jpeg12mpProgressive)
        for n in [kite.count / 5, kite.count / 2, kite.count - 2] {
            let cut = Array(kite[0..<n])
            let strict = decodeJPEG(cut, scale: 8, strict: true)
            #expect(strict.stage == .start && strict.status == code(DR_JPEG_ERR_TRUNCATED), "kite cut at \(n)")
            let lenient = decodeJPEG(cut, scale: 8, strict: false)
            #expect(lenient.ok && lenient.info.truncated == 1, "kite cut at \(n): \(lenient.message)")
        }
    }

    @Test func jpegRandomByteFlipsNeverCrash() throws {
        // Given a real baseline photo and a synthetic progressive file
        let photo = try ShimPhotos.bytes(ShimPhotos.jpegSmall)
        let prog = encodeJPEG(
            smoothImage(width: 160, height: 120, gray: false), width: 160, height: 120,
            input: DR_JPEG_OUT_BGRA, quality: 80, progressive: true
        ).bytes
        var rng = SplitMix64(state: 0xDA4C_0000_2024)
        var outcomes: [Int32: Int] = [:]
        for file in [photo, prog] {
            for round in 0..<150 {
                // When 1 to 20 random bytes are changed
                let damaged = ByteFlips.flipped(file, count: 1 + round % 20, in: 2..<file.count, using: &rng)
                // Then decoding (strict and lenient, full and 1/4 scale) returns a status and never crashes
                for (strict, scale) in [(true, Int32(1)), (false, Int32(4))] {
                    let r = decodeJPEG(
                        damaged, scale: scale, strict: strict, maxScans: 64, maxMemory: 64 << 20,
                        maxPixels: 4_000_000)
                    #expect((0...6).contains(r.status))
                    outcomes[r.status, default: 0] += 1
                }
            }
        }
        #expect(outcomes[code(DR_JPEG_OK), default: 0] > 0)
        #expect(outcomes.count > 1, "some flips must be detected: \(outcomes)")
    }

    @Test func jpegProgressiveScanLimit() {
        // Given a progressive JPEG from jpeg_simple_progression (10 scans for YCbCr)
        let w = 256
        let h = 192
        let jpeg = encodeJPEG(
            smoothImage(width: w, height: h, gray: false), width: w, height: h,
            input: DR_JPEG_OUT_BGRA, progressive: true)
        #expect(jpeg.status == code(DR_JPEG_OK))
        // When decoded with max_scans = 2
        let limited = decodeJPEG(jpeg.bytes, maxScans: 2)
        // Then start fails with TOO_MANY_SCANS
        #expect(limited.info.progressive == 1)
        #expect(limited.stage == .start)
        #expect(limited.status == code(DR_JPEG_ERR_TOO_MANY_SCANS), "\(limited.message)")
        #expect(limited.message.contains("exceeds"))
        // When decoded with room for its scans (10) or no limit (0), Then it decodes
        #expect(decodeJPEG(jpeg.bytes, maxScans: 10).ok)
        #expect(!decodeJPEG(jpeg.bytes, maxScans: 9).ok)
        #expect(decodeJPEG(jpeg.bytes, maxScans: 0).ok)
        // And a baseline file is never limited by the scan count
        let baseline = encodeJPEG(
            smoothImage(width: w, height: h, gray: false), width: w, height: h,
            input: DR_JPEG_OUT_BGRA)
        #expect(decodeJPEG(baseline.bytes, maxScans: 1).ok)
    }

    @Test func jpegMemoryLimitStopsProgressiveDecode() {
        // Given a 1024x1024 progressive JPEG (its whole-image coefficient buffer is ~3 MB)
        let w = 1024
        let h = 1024
        let jpeg = encodeJPEG(
            smoothImage(width: w, height: h, gray: false), width: w, height: h,
            input: DR_JPEG_OUT_BGRA, quality: 80, progressive: true)
        // When decoded with max_memory = 1 MB, Then start fails with NO_MEMORY; with 64 MB it decodes
        let limited = decodeJPEG(jpeg.bytes, maxMemory: 1 << 20)
        #expect(limited.stage == .start && limited.status == code(DR_JPEG_ERR_NO_MEMORY), "\(limited.message)")
        #expect(decodeJPEG(jpeg.bytes, maxMemory: 64 << 20).ok)
    }

    @Test func jpegCallsOutOfOrderReturnArgument() throws {
        let bytes = try ShimPhotos.bytes(ShimPhotos.jpegSmall)
        let arg = code(DR_JPEG_ERR_ARGUMENT)
        let ok = code(DR_JPEG_OK)
        var row = [UInt8](repeating: 0, count: 4096 * 4 * 4)
        var n: Int32 = 0
        var info = dr_jpeg_info()
        bytes.withUnsafeBufferPointer { buf in
            row.withUnsafeMutableBufferPointer { rowBuf in
                let dst = rowBuf.baseAddress
                // Given a fresh decoder, When rows are read/skipped or it is started/finished before the header,
                // Then each call returns ARGUMENT
                let d = dr_jpeg_decoder_create(buf.baseAddress, buf.count, 100, 1, 0)!
                defer { dr_jpeg_decoder_destroy(d) }
                #expect(dr_jpeg_read_rows(d, dst, 4096 * 4, 1, &n) == arg)
                #expect(dr_jpeg_skip_rows(d, 1, &n) == arg)
                #expect(dr_jpeg_start(d, 1, code(DR_JPEG_OUT_BGRA), &info) == arg)
                #expect(dr_jpeg_finish(d, &info) == arg)
                #expect(!String(cString: dr_jpeg_message(d)).isEmpty)
                // Given the header is read, When it is read again or rows are read before start, Then ARGUMENT
                #expect(dr_jpeg_read_header(d, &info) == ok)
                #expect(dr_jpeg_read_header(d, &info) == arg)
                #expect(dr_jpeg_read_rows(d, dst, 4096 * 4, 1, &n) == arg)
                #expect(dr_jpeg_finish(d, &info) == arg)
                // When start gets a bad scale, an unknown output or CMYK for a YCbCr file, Then ARGUMENT (and
                // the decoder can still be started properly afterwards)
                #expect(dr_jpeg_start(d, 3, code(DR_JPEG_OUT_BGRA), &info) == arg)
                #expect(dr_jpeg_start(d, 16, code(DR_JPEG_OUT_BGRA), &info) == arg)
                #expect(dr_jpeg_start(d, 1, 7, &info) == arg)
                #expect(dr_jpeg_start(d, 1, code(DR_JPEG_OUT_CMYK), &info) == arg)
                #expect(dr_jpeg_start(d, 1, code(DR_JPEG_OUT_BGRA), &info) == ok)
                #expect(dr_jpeg_start(d, 1, code(DR_JPEG_OUT_BGRA), &info) == arg)
                // When rows are read with a too-small stride, a NULL destination or a negative count, Then ARGUMENT
                #expect(dr_jpeg_read_rows(d, dst, Int(info.output_width) * 4 - 1, 1, &n) == arg)
                #expect(dr_jpeg_read_rows(d, nil, Int(info.output_width) * 4, 1, &n) == arg)
                #expect(dr_jpeg_read_rows(d, dst, Int(info.output_width) * 4, -1, &n) == arg)
                #expect(dr_jpeg_read_rows(d, dst, Int(info.output_width) * 4, 0, &n) == ok && n == 0)
                #expect(dr_jpeg_read_rows(d, dst, Int(info.output_width) * 4, 3, &n) == ok && n == 3)
                #expect(dr_jpeg_skip_rows(d, -1, &n) == arg)
                // When finish is called mid-image (abort) and again, Then both succeed; reading afterwards is ARGUMENT
                #expect(dr_jpeg_finish(d, &info) == ok)
                #expect(dr_jpeg_finish(d, &info) == ok)
                #expect(dr_jpeg_read_rows(d, dst, Int(info.output_width) * 4, 1, &n) == arg)
                #expect(dr_jpeg_skip_rows(d, 1, &n) == arg)
                // NULL decoders are arguments errors, not crashes
                #expect(dr_jpeg_read_header(nil, &info) == arg)
                #expect(dr_jpeg_finish(nil, &info) == arg)
                #expect(String(cString: dr_jpeg_message(nil)).isEmpty)
                dr_jpeg_decoder_destroy(nil)
            }
        }
    }

    @Test func jpegEmptyAndGarbageInput() {
        // Given no bytes at all, When the header is read, Then TRUNCATED
        let empty = decodeJPEG([])
        #expect(empty.stage == .header && empty.status == code(DR_JPEG_ERR_TRUNCATED))
        // Given bytes that are not a JPEG, When the header is read, Then CORRUPT with libjpeg's message
        let garbage = decodeJPEG(Array("definitely not a jpeg file".utf8))
        #expect(garbage.stage == .header && garbage.status == code(DR_JPEG_ERR_CORRUPT))
        #expect(garbage.message.contains("Not a JPEG file"), "\(garbage.message)")
    }

    @Test func jpegErrorStateIsSticky() throws {
        // Given a strict decoder whose data ends mid-scan
        let photo = try ShimPhotos.bytes(ShimPhotos.jpegSmall)
        let cut = Array(photo[0..<(photo.count / 2)])
        var info = dr_jpeg_info()
        var n: Int32 = 0
        var rows = [UInt8](repeating: 0, count: 600 * 4 * 400)
        cut.withUnsafeBufferPointer { buf in
            let d = dr_jpeg_decoder_create(buf.baseAddress, buf.count, 100, 1, 0)!
            defer { dr_jpeg_decoder_destroy(d) }
            #expect(dr_jpeg_read_header(d, &info) == code(DR_JPEG_OK))
            #expect(dr_jpeg_start(d, 1, code(DR_JPEG_OUT_BGRA), &info) == code(DR_JPEG_OK))
            // When all rows are read, Then read_rows fails with TRUNCATED part way
            let status = rows.withUnsafeMutableBufferPointer {
                dr_jpeg_read_rows(d, $0.baseAddress, Int(info.output_width) * 4, info.output_height, &n)
            }
            #expect(status == code(DR_JPEG_ERR_TRUNCATED))
            #expect(n > 0 && n < info.output_height, "rows before the cut were delivered: \(n)")
            #expect(String(cString: dr_jpeg_message(d)).contains("Premature end"))
            // And every later call is refused instead of touching the aborted libjpeg object
            #expect(dr_jpeg_skip_rows(d, 1, &n) == code(DR_JPEG_ERR_ARGUMENT))
            #expect(dr_jpeg_finish(d, &info) == code(DR_JPEG_ERR_ARGUMENT))
            #expect(info.truncated == 1)
        }
    }

    // MARK: JPEG encoder

    @Test(arguments: [(false, false), (false, true), (true, false), (true, true)])
    func jpegEncodeDecodeRoundTrip(gray: Bool, progressive: Bool) {
        // Given a smooth synthetic image
        let w = 257
        let h = 193  // not multiples of the MCU size
        let src = smoothImage(width: w, height: h, gray: gray)
        let input = gray ? DR_JPEG_OUT_GRAY : DR_JPEG_OUT_BGRA
        // When encoded at q95 and decoded again in the same format
        let jpeg = encodeJPEG(src, width: w, height: h, input: input, quality: 95, progressive: progressive)
        #expect(jpeg.status == code(DR_JPEG_OK), "\(jpeg.message)")
        #expect(jpeg.bytes.starts(with: [0xFF, 0xD8]) && jpeg.bytes.suffix(2) == [0xFF, 0xD9])
        let r = decodeJPEG(jpeg.bytes, output: input)
        // Then the size, the file's colour space and the progressive flag are right, and PSNR > 35 dB
        #expect(r.ok && r.width == w && r.height == h)
        #expect(r.info.colorspace == code(gray ? DR_JPEG_CS_GRAY : DR_JPEG_CS_YCBCR))
        #expect(r.info.progressive == (progressive ? 1 : 0))
        let quality = PixelCompare.psnr(src, r.pixels, bytesPerPixel: gray ? 1 : 4)
        #expect(quality > 35, "PSNR \(quality) dB")
    }

    @Test func jpegEncoderGrowsItsBufferAndRejectsBadArguments() {
        // Given noise, which compresses badly (output far above the encoder's initial buffer)
        let w = 512
        let h = 512
        var rng = SplitMix64(state: 7)
        let noise = (0..<(w * h * 4)).map { _ in UInt8.random(in: 0...255, using: &rng) }
        // When encoded at q100, Then it succeeds and decodes to the same size
        let big = encodeJPEG(noise, width: w, height: h, input: DR_JPEG_OUT_BGRA, quality: 100, optimize: false)
        #expect(big.status == code(DR_JPEG_OK))
        #expect(big.bytes.count > w * h * 4 / 8)
        #expect(decodeJPEG(big.bytes).width == w)
        // When quality, size, stride or format is wrong, Then ARGUMENT with a message and no output
        let arg = code(DR_JPEG_ERR_ARGUMENT)
        #expect(encodeJPEG(noise, width: w, height: h, input: DR_JPEG_OUT_BGRA, quality: 0).status == arg)
        #expect(encodeJPEG(noise, width: w, height: h, input: DR_JPEG_OUT_BGRA, quality: 101).status == arg)
        #expect(encodeJPEG(noise, width: w, height: h, input: DR_JPEG_OUT_CMYK).status == arg)
        #expect(encodeJPEG(noise, width: 0, height: h, input: DR_JPEG_OUT_BGRA).status == arg)
        var out: UnsafeMutablePointer<UInt8>? = nil
        var size = 0
        var msg = [CChar](repeating: 0, count: 64)
        let tooSmallStride = noise.withUnsafeBufferPointer {
            dr_jpeg_encode(
                $0.baseAddress, Int32(w), Int32(h), w * 4 - 1, code(DR_JPEG_OUT_BGRA), 90, 0, 0,
                &out, &size, &msg, msg.count)
        }
        #expect(tooSmallStride == arg && out == nil && size == 0)
        #expect(text(msg).contains("stride"))
    }

    // MARK: GIF

    @Test func gifAnimatedFirstFrame() throws {
        // Given the 13-frame 480x300 slideshow
        let bytes = try ShimPhotos.bytes(ShimPhotos.gifAnimated)
        // When its screen is read and its first frame decoded
        let (infoStatus, info) = gifInfo(bytes)
        #expect(infoStatus == code(DR_GIF_OK))
        #expect(info.canvas_width == 480 && info.canvas_height == 300)
        let r = decodeGIF(bytes, width: 480, height: 300)
        // Then the canvas is filled with a real picture
        #expect(r.status == code(DR_GIF_OK), "\(r.message)")
        #expect(r.info.canvas_width == 480 && r.info.canvas_height == 300)
        var colors = Set<UInt32>()
        var opaque = 0
        for i in Swift.stride(from: 0, to: r.pixels.count, by: 4) {
            colors.insert(UInt32(r.pixels[i]) << 16 | UInt32(r.pixels[i + 1]) << 8 | UInt32(r.pixels[i + 2]))
            if r.pixels[i + 3] == 255 { opaque += 1 }
        }
        #expect(colors.count > 32, "\(colors.count) colours")
        if r.info.has_transparency == 0 {
            #expect(opaque == 480 * 300, "no transparent index: every pixel is opaque")
        }
    }

    @Test(arguments: [false, true])
    func gifTransparencyPaletteAndClipping(interlaced: Bool) {
        // Given a 6x12 canvas and a 5x13 frame at (2, 3) (so clipped right and bottom), transparent index 1,
        // a 4-colour local palette, and a pattern that tells every row apart
        let fw = 5
        let fh = 13
        var pixels = [UInt8](repeating: 0, count: fw * fh)
        for y in 0..<fh { for x in 0..<fw { pixels[y * fw + x] = UInt8((x + y * 3) % 4) } }
        let local: [[UInt8]] = [[10, 20, 30], [40, 50, 60], [70, 80, 90], [200, 210, 220]]
        let gif = TinyGIF(
            canvasWidth: 6, canvasHeight: 12, localPalette: local, transparentIndex: 1,
            left: 2, top: 3, width: fw, height: fh, interlaced: interlaced, pixels: pixels)
        // When its first frame is decoded
        let r = decodeGIF(gif.encode().bytes, width: 6, height: 12)
        // Then pixels outside the frame and transparent ones are 0,0,0,0, the others the local palette in BGRA
        #expect(r.status == code(DR_GIF_OK), "\(r.message)")
        #expect(r.info.has_transparency == 1)
        for y in 0..<12 {
            for x in 0..<6 {
                var expected: [UInt8] = [0, 0, 0, 0]
                if x >= 2 && y >= 3 && x - 2 < fw && y - 3 < fh {
                    let index = Int(pixels[(y - 3) * fw + (x - 2)])
                    if index != 1 { expected = [local[index][2], local[index][1], local[index][0], 255] }
                }
                #expect(r.pixel(x, y, width: 6) == expected, "pixel \(x),\(y)")
            }
        }
    }

    @Test func gifIndicesPastThePaletteAreBlackAndGlobalMapIsUsed() {
        // Given a frame without a local map, a 2-colour global map, and indices 0...3
        let pixels: [UInt8] = [0, 1, 2, 3]
        let gif = TinyGIF(
            canvasWidth: 4, canvasHeight: 1, globalPalette: [[1, 2, 3], [4, 5, 6]], width: 4,
            height: 1, pixels: pixels)
        // When decoded, Then indices 0 and 1 take the global colours and 2, 3 are opaque black
        let r = decodeGIF(gif.encode().bytes, width: 4, height: 1)
        #expect(r.status == code(DR_GIF_OK), "\(r.message)")
        #expect(r.info.has_transparency == 0)
        #expect(r.pixels == [3, 2, 1, 255, 6, 5, 4, 255, 0, 0, 0, 255, 0, 0, 0, 255])
    }

    @Test func gifWithoutFrameOrColorMap() {
        // Given a GIF that ends before any image, When decoded, Then NO_FRAME
        let noFrame = TinyGIF(canvasWidth: 4, canvasHeight: 4, width: 4, height: 4, pixels: [], includeFrame: false)
        #expect(decodeGIF(noFrame.encode().bytes, width: 4, height: 4).status == code(DR_GIF_ERR_NO_FRAME))
        // Given a frame with neither a local nor a global colour map, When decoded, Then CORRUPT
        let noMap = TinyGIF(
            canvasWidth: 2, canvasHeight: 2, globalPalette: nil, width: 2, height: 2,
            pixels: [0, 1, 2, 3])
        let r = decodeGIF(noMap.encode().bytes, width: 2, height: 2)
        #expect(r.status == code(DR_GIF_ERR_CORRUPT), "\(r.status) \(r.message)")
        // Given bytes that are not a GIF, When read, Then CORRUPT with giflib's message
        let junk = decodeGIF(Array("PNG? no, junk at all".utf8), width: 2, height: 2)
        #expect(junk.status == code(DR_GIF_ERR_CORRUPT))
        #expect(!junk.message.isEmpty)
    }

    @Test func gifTruncatedAtManyOffsets() throws {
        // Given a synthetic interlaced GIF, cut at every offset
        var pixels = [UInt8](repeating: 0, count: 40 * 30)
        for i in pixels.indices { pixels[i] = UInt8((i * 7 + i / 40) % 4) }
        let (bytes, frameEnd) = TinyGIF(
            canvasWidth: 40, canvasHeight: 30, transparentIndex: 2, width: 40,
            height: 30, interlaced: true, pixels: pixels
        ).encode()
        let whole = decodeGIF(bytes, width: 40, height: 30)
        #expect(whole.status == code(DR_GIF_OK))
        for n in 0..<bytes.count {
            // When decoded, Then every cut inside the first frame's pixels is TRUNCATED; a cut that loses only
            // what follows the last pixel's code (the byte with the end code, the terminator block) and cuts
            // after the frame decode the whole frame, as browsers show it
            let r = decodeGIF(Array(bytes[0..<n]), width: 40, height: 30)
            if n < frameEnd - 2 {
                #expect(r.status == code(DR_GIF_ERR_TRUNCATED), "cut at \(n): \(r.status) \(r.message)")
            } else {
                #expect(r.status == code(DR_GIF_OK) && r.pixels == whole.pixels, "cut at \(n)")
            }
        }
        // Given the real slideshow cut at many offsets inside its first frame, Then TRUNCATED, never a crash
        let photo = try ShimPhotos.bytes(ShimPhotos.gifAnimated)
        for n in [0, 1, 5, 6, 12, 13, 100, 780, 800, 1000, 5000, 20_000] {
            let r = decodeGIF(Array(photo[0..<n]), width: 480, height: 300)
            #expect(r.status == code(DR_GIF_ERR_TRUNCATED), "slideshow cut at \(n): \(r.status) \(r.message)")
        }
    }

    @Test func gifRandomByteFlipsNeverCrash() throws {
        // Given the slideshow (first 200 KB: more than its first frame) and a synthetic interlaced GIF
        let photo = Array(try ShimPhotos.bytes(ShimPhotos.gifAnimated).prefix(200_000))
        var pixels = [UInt8](repeating: 0, count: 64 * 48)
        for i in pixels.indices { pixels[i] = UInt8((i * 5 + i / 64) % 4) }
        let tiny = TinyGIF(
            canvasWidth: 64, canvasHeight: 48, transparentIndex: 0, width: 64, height: 48,
            interlaced: true, pixels: pixels
        ).encode().bytes
        var rng = SplitMix64(state: 0x61F)
        var outcomes: [Int32: Int] = [:]
        for (file, w, h) in [(photo, 480, 300), (tiny, 64, 48)] {
            for round in 0..<150 {
                // When 1 to 10 random bytes change (the canvas stays the caller's: the file's may be huge now)
                let damaged = ByteFlips.flipped(file, count: 1 + round % 10, in: 0..<file.count, using: &rng)
                let r = decodeGIF(damaged, width: w, height: h)
                // Then a status comes back, never a crash or an out-of-bounds write (ASan checks that)
                #expect((0...5).contains(r.status))
                outcomes[r.status, default: 0] += 1
            }
        }
        #expect(outcomes[code(DR_GIF_OK), default: 0] > 0)
        #expect(outcomes.count > 1, "\(outcomes)")
    }

    @Test func gifDestinationTooSmallIsArgument() throws {
        let bytes = try ShimPhotos.bytes(ShimPhotos.gifAnimated)
        let arg = code(DR_GIF_ERR_ARGUMENT)
        // Given a stride below canvas_width * 4, When decoded, Then ARGUMENT with a message
        let narrow = decodeGIF(bytes, width: 480, height: 300, stride: 480 * 4 - 1)
        #expect(narrow.status == arg)
        #expect(narrow.message.contains("stride"))
        // Given a zero or negative canvas, When decoded, Then ARGUMENT
        #expect(decodeGIF(bytes, width: 0, height: 300, stride: 16).status == arg)
        #expect(decodeGIF(bytes, width: 480, height: -1, stride: 480 * 4).status == arg)
        // Given no destination at all, Then ARGUMENT
        var msg = [CChar](repeating: 0, count: 64)
        var info = dr_gif_info()
        let status = bytes.withUnsafeBufferPointer {
            dr_gif_decode_first_frame($0.baseAddress, $0.count, nil, 480 * 4, 480, 300, &info, &msg, msg.count)
        }
        #expect(status == arg)
        // Given a canvas smaller than the file's, Then the frame is clipped to it (and nothing is written past it)
        let small = decodeGIF(bytes, width: 100, height: 50)
        #expect(small.status == code(DR_GIF_OK))
        #expect(small.info.canvas_width == 480, "info reports the file's screen, not the caller's canvas")
    }
}
