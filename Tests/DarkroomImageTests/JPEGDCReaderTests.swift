// The JPEG shim's DC-only reader (dc_scan.c), which serves sequential files at 1/8 scale: compared with libjpeg's
// own 1/8 decode of the same bytes (dr_jpeg_set_dc_reader(d, 0)) on real photos, on synthetic files in every
// sampling it takes, with restart markers, and on damaged files.
import CDarkroomJPEG
import DarkroomImage
import DarkroomSupport
import DarkroomTestSupport
import Foundation
import Testing

private struct Scaled {
    var status: Int32 = -1
    var info = dr_jpeg_info()
    var pixels: [UInt8] = []
    var usedReader: Bool { info.dc_reader != 0 }
    var ok: Bool { status == Int32(DR_JPEG_OK.rawValue) }
}

/// Decodes `bytes` at 1/8 (header → start → all rows → finish), with the DC reader in `mode`, or forbidden.
private func decode8(
    _ bytes: [UInt8], gray: Bool, reader: Bool, mode: dr_jpeg_dc_mode = DR_JPEG_DC_EXACT,
    strict: Bool = true
) -> Scaled {
    var r = Scaled()
    bytes.withUnsafeBufferPointer { buf in
        guard let d = dr_jpeg_decoder_create(buf.baseAddress, buf.count, 100, strict ? 1 : 0, 64 << 20) else { return }
        defer { dr_jpeg_decoder_destroy(d) }
        dr_jpeg_set_dc_reader(d, Int32((reader ? mode : DR_JPEG_DC_OFF).rawValue))
        r.status = dr_jpeg_read_header(d, &r.info)
        guard r.ok else { return }
        let output = gray ? DR_JPEG_OUT_GRAY : DR_JPEG_OUT_BGRA
        r.status = dr_jpeg_start(d, 8, Int32(output.rawValue), &r.info)
        guard r.ok else { return }
        let bpp = gray ? 1 : 4
        let w = Int(r.info.output_width)
        let h = Int(r.info.output_height)
        guard w * h <= 4_000_000 else {
            r.status = -2
            return
        }
        r.pixels = [UInt8](repeating: 0, count: w * h * bpp)
        var y = 0
        while y < h {
            var got: Int32 = 0
            r.status = r.pixels.withUnsafeMutableBufferPointer {
                dr_jpeg_read_rows(d, $0.baseAddress! + y * w * bpp, w * bpp, 7, &got)
            }
            guard r.ok, got > 0 else { return }
            y += Int(got)
        }
        let used = r.info.dc_reader
        r.status = dr_jpeg_finish(d, &r.info)
        r.info.dc_reader = used
    }
    return r
}

private func encode(
    width: Int, height: Int, gray: Bool, lumaH: Int32, lumaV: Int32, restartRows: Int32,
    quality: Int32 = 90
) -> [UInt8] {
    // Detail at every scale, so AC runs, ZRLs and large DC steps all occur
    var px = [UInt8](repeating: 255, count: width * height * (gray ? 1 : 4))
    var rng = SplitMix64(state: UInt64(width * 31 + height))
    for y in 0..<height {
        for x in 0..<width {
            let noise = Double(rng.next() % 40)
            let r = 128 + 100 * sin(Double(x) / 7 + Double(y) / 13) * cos(Double(x * y) / 900) + noise - 20
            let g = Double((x / 9 + y / 5) % 2 == 0 ? 230 : 20)
            let b = 30 + 190 * Double(x + y) / Double(width + height)
            if gray {
                px[y * width + x] = UInt8(max(0, min(255, (0.3 * r + 0.6 * g + 0.1 * b).rounded())))
            } else {
                let i = (y * width + x) * 4
                px[i] = UInt8(max(0, min(255, b.rounded())))
                px[i + 1] = UInt8(g)
                px[i + 2] = UInt8(max(0, min(255, r.rounded())))
            }
        }
    }
    var options = dr_jpeg_encode_options(
        quality: quality, progressive: 0, optimize: 1, luma_h: lumaH, luma_v: lumaV,
        restart_rows: restartRows, icc: nil, icc_len: 0)
    var out: UnsafeMutablePointer<UInt8>? = nil
    var size = 0
    let input = gray ? DR_JPEG_OUT_GRAY : DR_JPEG_OUT_BGRA
    let status = px.withUnsafeBufferPointer {
        dr_jpeg_encode_with(
            $0.baseAddress, Int32(width), Int32(height), width * (gray ? 1 : 4), Int32(input.rawValue),
            &options, &out, &size, nil, 0)
    }
    precondition(status == Int32(DR_JPEG_OK.rawValue))
    defer { dr_jpeg_free(out) }
    return Array(UnsafeBufferPointer(start: out!, count: size))
}

@Suite("JPEG DC-only reader at 1/8")
struct JPEGDCReaderTests {
    static let sequential = [
        "jpeg-12mp/eveningglow-4032x3024.jpg", "jpeg-12mp/path-4032x3024.jpg", "jpeg/coldripple-2560x1600.jpg",
        "jpeg/bythewater-2560x1600.jpg", "jpeg/darkesthour-2560x1600.jpg",
        "orientation/fallenleaf-600x400-orientation-6.jpg",
    ]

    @Test("sequential photos take the reader, and its 1/8 output equals libjpeg's byte for byte", arguments: sequential)
    func photos(path: String) throws {
        // Given a sequential photo
        let bytes = try SamplePhotos.bytes(path)
        // When it is decoded at 1/8 with the reader and by libjpeg
        let fastGray = decode8(bytes, gray: true, reader: true)
        let slowGray = decode8(bytes, gray: true, reader: false)
        let fast = decode8(bytes, gray: false, reader: true)
        let slow = decode8(bytes, gray: false, reader: false)
        // Then the reader served both, and gray and colour are the same to the byte
        #expect(fastGray.ok && slowGray.ok && fast.ok && slow.ok)
        #expect(fastGray.usedReader && fast.usedReader && !slow.usedReader)
        #expect(fast.info.output_width == slow.info.output_width && fast.info.output_height == slow.info.output_height)
        #expect(fastGray.pixels == slowGray.pixels)
        #expect(fast.pixels == slow.pixels)
    }

    @Test("half-resolution chroma: luma still identical, colour close to libjpeg's", arguments: sequential)
    func halfChroma(path: String) throws {
        // Given a sequential photo
        let bytes = try SamplePhotos.bytes(path)
        // When it is decoded at 1/8 with 4:2:0 chroma from DC only, and by libjpeg
        let fastGray = decode8(bytes, gray: true, reader: true, mode: DR_JPEG_DC_HALF_CHROMA)
        let fast = decode8(bytes, gray: false, reader: true, mode: DR_JPEG_DC_HALF_CHROMA)
        let slowGray = decode8(bytes, gray: true, reader: false)
        let slow = decode8(bytes, gray: false, reader: false)
        // Then luma is the same to the byte and colour differs only by chroma detail finer than 16 pixels
        #expect(fast.ok && fast.usedReader && fastGray.usedReader)
        #expect(fastGray.pixels == slowGray.pixels)
        let p = PixelCompare.psnr(fast.pixels, slow.pixels, bytesPerPixel: 4)
        #expect(p >= 30, "\(path): \(p) dB")
    }

    @Test("skipping rows with the reader: counts exact, rows after a skip equal the full read's")
    func skipRows() throws {
        // Given a 12 MP photo read whole at 1/8 by the reader (504×378)
        let bytes = try SamplePhotos.bytes("jpeg-12mp/path-4032x3024.jpg")
        let full = decode8(bytes, gray: false, reader: true)
        #expect(full.ok && full.usedReader)
        let stride = 504 * 4
        // When a second decoder reads 10 rows, skips 100, reads 50, then skips past the end
        var head = [UInt8](repeating: 0, count: 10 * stride)
        var band = [UInt8](repeating: 0, count: 50 * stride)
        var read: Int32 = 0
        var skipped: Int32 = 0
        var skippedAtEnd: Int32 = 0
        var statuses: [Int32] = []
        var info = dr_jpeg_info()
        bytes.withUnsafeBufferPointer { buf in
            let d = dr_jpeg_decoder_create(buf.baseAddress, buf.count, 100, 1, 0)!
            defer { dr_jpeg_decoder_destroy(d) }
            statuses.append(dr_jpeg_read_header(d, &info))
            statuses.append(dr_jpeg_start(d, 8, Int32(DR_JPEG_OUT_BGRA.rawValue), &info))
            statuses.append(
                head.withUnsafeMutableBufferPointer { dr_jpeg_read_rows(d, $0.baseAddress, stride, 10, &read) })
            statuses.append(dr_jpeg_skip_rows(d, 100, &skipped))
            statuses.append(
                band.withUnsafeMutableBufferPointer { dr_jpeg_read_rows(d, $0.baseAddress, stride, 50, &read) })
            statuses.append(dr_jpeg_skip_rows(d, 10_000, &skippedAtEnd))
            statuses.append(dr_jpeg_finish(d, &info))
        }
        // Then every call succeeds, the counts are exact, and the rows match the full read
        #expect(statuses.allSatisfy { $0 == Int32(DR_JPEG_OK.rawValue) }, "\(statuses)")
        #expect(info.dc_reader == 1)
        #expect(skipped == 100 && read == 50 && skippedAtEnd == 378 - 160)
        #expect(head[...] == full.pixels[0..<(10 * stride)])
        #expect(band[...] == full.pixels[(110 * stride)..<(160 * stride)])
    }

    @Test("a progressive file is left to libjpeg")
    func progressive() throws {
        let bytes = try SamplePhotos.bytes("jpeg-12mp/kite-4032x3024-progressive.jpg")
        let r = decode8(bytes, gray: false, reader: true)
        #expect(r.ok && !r.usedReader)
    }

    @Test(
        "gray, 4:4:4, 4:2:2, 4:4:0 and 4:2:0 files, odd sizes, restart markers: the reader matches libjpeg",
        arguments: [(true, Int32(1), Int32(1)), (false, 1, 1), (false, 2, 1), (false, 1, 2), (false, 2, 2)],
        [Int32(0), 1, 3])
    func synthetic(layout: (gray: Bool, h: Int32, v: Int32), restartRows: Int32) {
        for (w, h) in [(333, 217), (8, 8), (17, 9), (640, 16)] {
            // Given a synthetic file in that layout
            let bytes = encode(
                width: w, height: h, gray: layout.gray, lumaH: layout.h, lumaV: layout.v, restartRows: restartRows)
            // When decoded at 1/8 both ways
            let fastGray = decode8(bytes, gray: true, reader: true)
            let slowGray = decode8(bytes, gray: true, reader: false)
            let fast = decode8(bytes, gray: false, reader: true)
            let slow = decode8(bytes, gray: false, reader: false)
            // Then the reader took it, and gray and colour are identical to libjpeg's
            let label = "\(w)×\(h) \(layout) restart \(restartRows)"
            #expect(fast.ok && slow.ok && fastGray.ok && slowGray.ok, "\(label)")
            #expect(fast.usedReader && fastGray.usedReader, "\(label)")
            #expect(fastGray.pixels == slowGray.pixels, "\(label)")
            #expect(fast.pixels == slow.pixels, "\(label)")
        }
    }

    @Test(
        "damaged files: same status as libjpeg's path, and the reader serves only streams libjpeg reads without a warning",
        arguments: [true, false])
    func damaged(strict: Bool) throws {
        // Given a photo and a synthetic file with restart markers, cut and with flipped bytes
        let photo = try SamplePhotos.bytes("orientation/fallenleaf-600x400-orientation-1.jpg")
        let restarts = encode(width: 320, height: 200, gray: false, lumaH: 2, lumaV: 2, restartRows: 1)
        var rng = SplitMix64(state: 8)
        var variants: [[UInt8]] = []
        for source in [photo, restarts] {
            for cut in stride(from: 2, to: source.count, by: max(1, source.count / 60)) {
                variants.append(Array(source[..<cut]))
            }
            for _ in 0..<150 {
                var b = source
                for _ in 0..<Int(1 + rng.next() % 3) {
                    let i = 2 + Int(rng.next() % UInt64(b.count - 2))
                    b[i] ^= UInt8(truncatingIfNeeded: 1 << (rng.next() % 8))
                }
                variants.append(b)
            }
        }
        var served = 0
        for (n, bytes) in variants.enumerated() {
            // When each is decoded at 1/8 with and without the reader
            let fast = decode8(bytes, gray: false, reader: true, strict: strict)
            let slow = decode8(bytes, gray: false, reader: false, strict: strict)
            // Then the outcome is the same; where the reader served, libjpeg saw a clean stream and the same pixels
            #expect(fast.status == slow.status, "variant \(n)")
            if fast.usedReader {
                served += 1
                #expect(slow.info.warnings == 0 && slow.info.truncated == 0, "variant \(n)")
                #expect(fast.pixels == slow.pixels, "variant \(n)")
            }
        }
        // And the reader still served the flips that leave a valid stream (flipped magnitude bits)
        #expect(served > 10)
    }
}
