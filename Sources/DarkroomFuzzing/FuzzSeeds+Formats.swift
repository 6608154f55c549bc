import DarkroomImage

extension FuzzSeeds {
    /// Small files in the formats Darkroom reads but does not write — BMP (24-bit, 8-bit palette, RLE8), TIFF
    /// (RGB, LZW-less gray, two pages), a DNG (an RGGB mosaic) and SVG — plus JPEG XL and ICO from Darkroom's
    /// encoders, so the fuzzer starts inside every decoder rather than at its signature check.
    static func formatSeeds() -> [(name: String, bytes: [UInt8])] {
        var seeds: [(name: String, bytes: [UInt8])] = [
            ("rgb24.bmp", bmp(width: 5, height: 3, bitCount: 24)),
            ("pal8.bmp", bmp(width: 6, height: 4, bitCount: 8)),
            ("rle8.bmp", bmp(width: 6, height: 4, bitCount: 8, rle: true)),
            ("rgb.tiff", tiff(width: 7, height: 5, samples: 3, pages: 1)),
            ("gray-2pages.tiff", tiff(width: 6, height: 4, samples: 1, pages: 2)),
            ("mosaic.dng", tiff(width: 24, height: 24, samples: 1, pages: 1, dng: true)),  // libraw wants ≥ 22 px
            (
                "shapes.svg",
                Array(
                    """
                    <svg xmlns="http://www.w3.org/2000/svg" width="24" height="16" viewBox="0 0 12 8">
                    <rect width="12" height="8" fill="#248"/><circle cx="6" cy="4" r="3" fill="red" opacity="0.5"/>
                    <path d="M0 8 L6 0 L12 8 Z" stroke="#fff" fill="none"/><text x="1" y="7">a</text></svg>
                    """.utf8)
            ),
        ]
        if let bitmap = gradient(9, 7, alpha: true) {
            for format in [ImageFileFormat.jxl, .ico] {
                if let bytes = try? ImageEncoder.encode(bitmap, as: format) {
                    seeds.append(("alpha.\(format.rawValue)", bytes))
                }
            }
        }
        return seeds
    }

    /// A bottom-up BMP with a BITMAPINFOHEADER: 24-bit BGR, or 8-bit with a 4-colour palette (RLE8 when asked).
    static func bmp(width: Int, height: Int, bitCount: Int, rle: Bool = false) -> [UInt8] {
        var pixels: [UInt8] = []
        let palette: [UInt8] = bitCount == 8 ? [0, 0, 0, 0, 255, 0, 0, 0, 0, 255, 0, 0, 0, 0, 255, 0] : []
        if rle {
            for y in 0..<height { pixels += [UInt8(width), UInt8(y % 4)] + (y + 1 < height ? [0, 0] : [0, 1]) }
        } else {
            let stride = (width * bitCount / 8 + 3) / 4 * 4
            for y in 0..<height {
                var row = (0..<width).flatMap { x -> [UInt8] in
                    bitCount == 24 ? [UInt8(x * 40 & 255), UInt8(y * 60 & 255), 128] : [UInt8((x + y) % 4)]
                }
                row += [UInt8](repeating: 0, count: stride - row.count)
                pixels += row
            }
        }
        let offset = 14 + 40 + palette.count
        var out: [UInt8] = [0x42, 0x4D] + le32(offset + pixels.count) + le32(0) + le32(offset)
        out += le32(40) + le32(width) + le32(height) + le16(1) + le16(bitCount) + le32(rle ? 1 : 0)
        out += le32(pixels.count) + le32(2835) + le32(2835) + le32(bitCount == 8 ? 4 : 0) + le32(0)
        return out + palette + pixels
    }

    /// A little-endian TIFF of `pages` uncompressed 8-bit pages (gray or RGB), each one strip; with `dng`, one
    /// 16-bit CFA page carrying the DNG tags libraw needs.
    static func tiff(width: Int, height: Int, samples: Int, pages: Int, dng: Bool = false) -> [UInt8] {
        var out: [UInt8] = [0x49, 0x49, 42, 0] + le32(8)
        for page in 0..<pages {
            let bytesPerSample = dng ? 2 : 1
            let data = (0..<(width * height * samples)).flatMap { i -> [UInt8] in
                dng ? le16((i * 97 + page) & 0x0FFF) : [UInt8((i * 37 + page * 50) & 255)]
            }
            var entries: [(tag: Int, type: Int, values: [Int])] = [
                (256, 4, [width]), (257, 4, [height]), (258, 3, [Int](repeating: 8 * bytesPerSample, count: samples)),
                (259, 3, [1]), (262, 3, [dng ? 32803 : samples == 3 ? 2 : 1]), (273, 4, [0]), (277, 3, [samples]),
                (278, 4, [height]), (279, 4, [data.count]), (274, 3, [page == 0 ? 1 : 6]),
            ]
            if dng {
                entries += [
                    (271, 2, Array("Darkroom\0".utf8).map(Int.init)), (272, 2, Array("Seed\0".utf8).map(Int.init)),
                    (33421, 3, [2, 2]), (33422, 1, [0, 1, 1, 2]), (50706, 1, [1, 4, 0, 0]), (50707, 1, [1, 1, 0, 0]),
                    (50708, 2, Array("Darkroom Seed\0".utf8).map(Int.init)), (50717, 4, [4095]),
                ]
            }
            entries.sort { $0.tag < $1.tag }
            let directory = out.count
            let extraStart = directory + 2 + 12 * entries.count + 4
            var extra: [UInt8] = []
            var ifd: [UInt8] = le16(entries.count)
            let dataOffset = extraStart + entries.reduce(0) { $0 + max(0, Self.size($1) - 4) + 1 } + 1
            for entry in entries {
                var payload = entry.values.flatMap { v -> [UInt8] in
                    switch entry.type {
                    case 3: le16(v)
                    case 4: le32(v)
                    default: [UInt8(v)]
                    }
                }
                if entry.tag == 273 { payload = le32(dataOffset) }
                ifd += le16(entry.tag) + le16(entry.type) + le32(entry.values.count)
                if payload.count <= 4 {
                    ifd += payload + [UInt8](repeating: 0, count: 4 - payload.count)
                } else {
                    ifd += le32(extraStart + extra.count)
                    extra += payload + [0]
                }
            }
            let next = page + 1 < pages ? dataOffset + data.count + (data.count & 1) : 0
            out += ifd + le32(next) + extra
            out += [UInt8](repeating: 0, count: dataOffset - out.count) + data + (data.count & 1 == 1 ? [0] : [])
        }
        return out
    }

    private static func size(_ entry: (tag: Int, type: Int, values: [Int])) -> Int {
        entry.values.count * (entry.type == 3 ? 2 : entry.type == 4 ? 4 : 1)
    }

    private static func le16(_ v: Int) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF)] }
    private static func le32(_ v: Int) -> [UInt8] { [0, 8, 16, 24].map { UInt8(v >> $0 & 0xFF) } }
}
