import DarkroomTestSupport
import Foundation
import Testing

@testable import DarkroomImage

/// The GIF shim's own LZW decoding (a string at a time, rows cut wherever a string crosses them) against Pillow's
/// decoder, on files written with a small LZW encoder that reaches the corners encoders use: a full table kept
/// without a clear code, clear codes anywhere (twice in a row, right after the start), strings thousands of rows
/// long in a one-pixel-wide image, every minimum code size, interlaced rows.
@Suite struct GIFLZWTests {
    /// Writes `cases` into `directory` as GIFs with two frames each (the second the first's indices reversed, so
    /// the animation path decodes a second LZW stream on the same state) and returns their paths. Pillow checks
    /// that each file decodes to the indices it was written from before any comparison.
    static func write(_ cases: [String], into directory: TemporaryDirectory) throws -> [String] {
        let script = """
            import random, struct, sys
            from PIL import GifImagePlugin, Image
            # Frames that share the global palette stay palette images, so their indices can be read back.
            GifImagePlugin.LOADING_STRATEGY = GifImagePlugin.LoadingStrategy.RGB_AFTER_DIFFERENT_PALETTE_ONLY

            def lzw(indices, min_size, clear_every, clear_twice):
                clear, end = 1 << min_size, (1 << min_size) + 1
                out, acc, nacc = bytearray(), 0, 0
                def put(code, size):
                    nonlocal acc, nacc
                    acc |= code << nacc; nacc += size
                    while nacc >= 8:
                        out.append(acc & 255); acc >>= 8; nacc -= 8
                def reset():
                    return {bytes([i]): i for i in range(clear)}, clear + 2, min_size + 1, True
                table, nxt, size, first = reset()
                dec_next = clear + 2
                put(clear, size)
                if clear_twice:
                    put(clear, size)
                emitted, w = 0, b""
                def emit(code):
                    # Mirrors a decoder's table: no entry for the first code after a clear, widths grow when the
                    # decoder's next free code reaches the width's limit.
                    nonlocal size, dec_next, first, emitted
                    put(code, size); emitted += 1
                    if not first and dec_next < 4096:
                        dec_next += 1
                        if dec_next == (1 << size) and size < 12:
                            size += 1
                    first = False
                for px in indices:
                    wc = w + bytes([px])
                    if wc in table:
                        w = wc
                        continue
                    emit(table[w])
                    if nxt < 4096:
                        table[wc] = nxt; nxt += 1
                    w = bytes([px])
                    if clear_every and emitted % clear_every == 0:
                        emit(table[w]); w = b""
                        put(clear, size)
                        table, nxt, size, first = reset(); dec_next = clear + 2
                if w:
                    emit(table[w])
                put(end, size)
                if nacc:
                    out.append(acc & 255)
                return bytes(out)

            def frame(indices, w, h, min_size, interlace, clear_every, clear_twice):
                if interlace:
                    order = [y for start, step in ((0, 8), (4, 8), (2, 4), (1, 2)) for y in range(start, h, step)]
                    indices = [indices[y * w + x] for y in order for x in range(w)]
                data = lzw(indices, min_size, clear_every, clear_twice)
                blocks = b"".join(bytes([len(data[i:i + 255])]) + data[i:i + 255] for i in range(0, len(data), 255))
                gce = b"\\x21\\xf9\\x04\\x00\\x0a\\x00\\x00\\x00"
                return gce + b"\\x2c" + struct.pack("<HHHHB", 0, 0, w, h, 0x40 if interlace else 0) \\
                    + bytes([min_size]) + blocks + b"\\x00"

            for spec in sys.argv[2:]:
                name, w, h, colours, min_size, interlace, clear_every, clear_twice, pattern = spec.split(":")
                w, h, colours, min_size = int(w), int(h), int(colours), int(min_size)
                interlace, clear_every, clear_twice = interlace == "1", int(clear_every), clear_twice == "1"
                rng = random.Random(name)
                if pattern == "noise":
                    indices = [rng.randrange(colours) for _ in range(w * h)]
                elif pattern == "flat":
                    indices = [colours - 1] * (w * h)
                else:  # runs: stretches of one colour of random length
                    indices = []
                    while len(indices) < w * h:
                        indices += [rng.randrange(colours)] * rng.randrange(1, 40)
                    indices = indices[:w * h]
                palette = bytes(rng.randrange(256) for _ in range(3 * 256))
                second = indices[::-1]
                data = b"GIF89a" + struct.pack("<HHBBB", w, h, 0xF7, 0, 0) + palette \\
                    + b"\\x21\\xff\\x0bNETSCAPE2.0\\x03\\x01\\x00\\x00\\x00" \\
                    + frame(indices, w, h, min_size, interlace, clear_every, clear_twice) \\
                    + frame(second, w, h, min_size, interlace, clear_every, clear_twice) + b"\\x3b"
                path = f"{sys.argv[1]}/{name}.gif"
                with open(path, "wb") as f:
                    f.write(data)
                with Image.open(path) as im:
                    for n, expected in enumerate((indices, second)):
                        im.seek(n)
                        got = list(getattr(im, "get_flattened_data", im.getdata)()) if im.mode == "P" else None
                        if got != expected:
                            raise SystemExit(f"{name}: Pillow does not read frame {n} as written")
                print(path)
            """
        let output = try PythonReference.run(script, [directory.path] + cases)
        return String(decoding: output, as: UTF8.self).split(separator: "\n").map(String.init)
    }

    /// name:width:height:colours:minCodeSize:interlaced:clearEveryNCodes:clearTwiceAtStart:pattern
    static let cases = [
        "full-table-kept:257:61:256:8:0:0:0:noise",  // the table fills four times over and is never cleared
        "clears-anywhere:257:61:256:8:0:997:1:noise",  // clear codes every 997 codes, two at the start
        "one-pixel-wide:1:3000:4:2:0:0:0:flat",  // strings far longer than a row
        "narrow-runs:3:2000:16:4:0:0:0:runs",
        "min-size-2:97:53:4:2:0:0:0:noise",
        "min-size-5:97:53:32:5:0:300:0:runs",
        "min-size-8-few-colours:211:67:7:8:0:0:0:runs",
        "interlaced:131:77:256:8:1:0:0:runs",
    ]

    @Test func framesMatchPillowOnEveryCornerOfTheCode() throws {
        // Given GIFs that reach each corner of GIF's LZW code, and Pillow's reading of them
        let directory = try TemporaryDirectory("gif-lzw")
        defer { directory.remove() }
        let paths = try Self.write(Self.cases, into: directory)
        #expect(paths.count == Self.cases.count)
        for path in paths {
            let pillow = try PillowFrames(path: path)
            let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
            // When the first frame is decoded as a still and both frames through the animation path
            let still = try ImageDecoder().decode(bytes, options: DecodeOptions(pixelFormat: .exactly(.rgba8)))
            let (_, frames) = try AnimationDecoderTests.frames(bytes)
            // Then every pixel is Pillow's
            #expect(AnimationDecoderTests.rgba(still.bitmap) == pillow.frames[0], "\(path): still")
            #expect(frames.count == 2, "\(path)")
            for (frame, reference) in zip(frames, pillow.frames) {
                #expect(AnimationDecoderTests.rgba(frame.bitmap) == reference, "\(path): frame \(frame.index)")
            }
        }
    }

    @Test func aCodeTheTableDoesNotHoldIsCorruptAndAnEarlyEndIsTruncated() throws {
        // Given a valid file whose first frame's data is then damaged in two ways
        let directory = try TemporaryDirectory("gif-lzw-bad")
        defer { directory.remove() }
        let path = try #require(try Self.write(["bad:16:16:4:2:0:0:0:noise"], into: directory).first)
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        // 13-byte header, 768-byte palette, 19-byte loop extension, 8-byte control extension, 10-byte descriptor
        let codeSize = 13 + 768 + 19 + 8 + 10
        #expect(bytes[codeSize] == 2)
        let firstCodes = codeSize + 2  // after the code size byte and the first sub-block's length
        // When the code after the leading clear code (3 bits: 100 is the clear code 4) names the entry 7,
        // which no table holds yet
        var unheld = bytes
        unheld[firstCodes] = 0b0011_1100  // clear (100), then 7 (111)
        // and when the end code (5) follows the clear code at once
        var ended = bytes
        ended[firstCodes] = 0b0010_1100  // clear (100), then end (101)
        // Then the first is corrupt and the second truncated, as a still and as an animation
        for (damaged, code) in [(unheld, DarkroomImageError.Code.corrupt), (ended, .truncated)] {
            #expect(throws: DarkroomImageError.self) { try ImageDecoder().decode(damaged) }
            do {
                _ = try ImageDecoder().decode(damaged)
            } catch {
                #expect(error.code == code, "\(error)")
            }
            do {
                _ = try AnimationDecoderTests.frames(damaged)
                Issue.record("the animation path accepted a damaged first frame")
            } catch let error as DarkroomImageError {
                #expect(error.code == code, "\(error)")
            }
        }
    }
}
