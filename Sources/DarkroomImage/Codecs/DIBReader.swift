/// A Windows device-independent bitmap: the pixels of a BMP file and of a BMP entry in an ICO or CUR file.
///
/// Reads every header Windows and OS/2 write (12-byte core, 16/64-byte OS/2 2.x, 40-byte info with or without
/// separate bitfield masks, 52/56-byte, V4 and V5 with an embedded ICC profile), bit depths 1, 2, 4 and 8 through a
/// palette, 16 and 32 bits through masks (5-5-5 and BGRX by default), 24-bit BGR, and RLE8/RLE4 with deltas.
/// Top-down (negative height) and bottom-up rows. JPEG- and PNG-compressed BMPs are refused as unsupported.
///
/// Rows are read one at a time from the input in the stored top-to-bottom order (bottom-up files from their
/// end), so a thumbnail holds one source row; only RLE needs its indices decoded whole first (one byte a pixel).
/// As Pillow does, the fourth byte of a 32-bit `BI_RGB` BMP is padding and pixels an RLE delta skips take palette
/// entry 0; an icon entry takes its alpha from a 32-bit image, else from its AND mask.
struct DIBReader {
    enum Compression: Int {
        case rgb = 0
        case rle8 = 1
        case rle4 = 2
        case bitfields = 3
        case jpeg = 4
        case png = 5
        case alphaBitfields = 6
    }

    let width: Int
    let height: Int
    let topDown: Bool
    let bitCount: Int
    let compression: Compression
    /// Palette entries as B, G, R, 255.
    let palette: [UInt32]
    /// Channel masks for 16- and 32-bit images (blue, green, red, alpha).
    let masks: (r: UInt32, g: UInt32, b: UInt32, a: UInt32)
    /// Where the pixel array starts, from the start of the input.
    let pixelOffset: Int
    /// Bytes per stored row (padded to four bytes).
    let stride: Int
    /// An icon entry: the header's height counts the AND mask too, which follows the pixels.
    let isIconEntry: Bool
    /// The V5 header's embedded ICC profile, as a range of the input.
    let iccProfile: Range<Int>?

    /// Whether decoded pixels can be transparent.
    var hasAlpha: Bool { isIconEntry || masks.a != 0 }

    /// Parses a BMP file (`BM`, its 14-byte file header, then the DIB header).
    static func parseFile(_ reader: ByteReader) throws(ProbeStop) -> DIBReader {
        guard try reader.u8(0) == 0x42, try reader.u8(1) == 0x4D else {
            guard looksLikeBareDIB(reader) else { throw .corrupt("not a BMP file") }
            return try parse(reader, at: 0, pixelOffset: nil, isIconEntry: false)
        }
        return try parse(reader, at: 14, pixelOffset: try reader.u32le(10), isIconEntry: false)
    }

    /// Whether `reader` starts with a Windows DIB header and no file header: a header size of 40, 108 or 124,
    /// positive width, one plane, a depth BMP has and a compression that goes with it. Checked after every format
    /// with a signature, as the header has none of its own.
    static func looksLikeBareDIB(_ reader: ByteReader) -> Bool {
        guard let size = try? reader.u32le(0), [40, 108, 124].contains(size), let width = try? reader.u32le(4),
            (1...65535).contains(width), let planes = try? reader.u16le(12), planes == 1,
            let bits = try? reader.u16le(14), [1, 4, 8, 16, 24, 32].contains(bits),
            let compression = try? reader.u32le(16), compression <= 3 || compression == 6
        else { return false }
        return true
    }

    /// Parses a DIB header at `offset`; the pixels start at `pixelOffset` (nil: right after the header, masks and
    /// palette, as in an icon entry).
    static func parse(_ reader: ByteReader, at offset: Int, pixelOffset: Int?, isIconEntry: Bool)
        throws(ProbeStop) -> DIBReader
    {
        let headerSize = try reader.u32le(offset)
        var width: Int
        var height: Int
        var bitCount: Int
        var compression = Compression.rgb
        var colorsUsed = 0
        var paletteEntryBytes = 4
        var masks: (r: UInt32, g: UInt32, b: UInt32, a: UInt32) = (0, 0, 0, 0)
        var iccProfile: Range<Int>?
        var masksEnd = offset + headerSize
        switch headerSize {
        case 12:
            width = try reader.u16le(offset + 4)
            height = try reader.u16le(offset + 6)
            bitCount = try reader.u16le(offset + 10)
            paletteEntryBytes = 3
        case 16, 40, 52, 56, 64, 108, 124:
            width = Int(Int32(bitPattern: UInt32(try reader.u32le(offset + 4))))
            height = Int(Int32(bitPattern: UInt32(try reader.u32le(offset + 8))))
            bitCount = try reader.u16le(offset + 14)
            if headerSize >= 20 {
                let raw = try reader.u32le(offset + 16)
                // OS/2 2.x reuses 3 and 4 for Huffman 1D and RLE24, which nothing writes any more
                guard let value = Compression(rawValue: raw), !(headerSize == 64 && raw >= 3) else {
                    throw .unsupported("BMP compression \(raw) is not supported")
                }
                compression = value
            }
            if headerSize >= 36 { colorsUsed = try reader.u32le(offset + 32) }
            if compression == .bitfields || compression == .alphaBitfields {
                // The masks follow a 40-byte header, or sit inside a longer one at the same place
                let count = compression == .alphaBitfields || headerSize >= 56 ? 4 : 3
                let base = offset + 40
                masks.r = UInt32(try reader.u32le(base))
                masks.g = UInt32(try reader.u32le(base + 4))
                masks.b = UInt32(try reader.u32le(base + 8))
                if count == 4 { masks.a = UInt32(try reader.u32le(base + 12)) }
                if headerSize == 40 { masksEnd = base + 4 * count }
            }
            if headerSize == 124, try reader.u32le(offset + 56) == 0x4D42_4544 {  // 'MBED'
                let start = offset + (try reader.u32le(offset + 112))
                let size = try reader.u32le(offset + 116)
                if size > 0, start >= offset, start <= reader.count, size <= reader.count - start {
                    iccProfile = start..<(start + size)
                }
            }
        default:
            throw .unsupported("a BMP header of \(headerSize) bytes is not a known kind")
        }
        if isIconEntry { height /= 2 }
        let topDown = height < 0
        height = abs(height)
        guard width > 0, height > 0 else { throw .corrupt("the BMP gives an empty size \(width)×\(height)") }
        switch (compression, bitCount) {
        case (.rgb, 1), (.rgb, 2), (.rgb, 4), (.rgb, 8), (.rgb, 16), (.rgb, 24), (.rgb, 32), (.rle8, 8), (.rle4, 4),
            (.bitfields, 16), (.bitfields, 32), (.alphaBitfields, 16), (.alphaBitfields, 32):
            break
        case (.jpeg, _), (.png, _):
            throw .unsupported("JPEG- and PNG-compressed BMPs are not supported")
        default:
            throw .corrupt("a \(bitCount)-bit BMP cannot use compression \(compression.rawValue)")
        }
        if compression == .rgb && bitCount == 16 { masks = (0x7C00, 0x03E0, 0x001F, 0) }
        if compression == .rgb && bitCount == 32 { masks = (0x00FF_0000, 0x0000_FF00, 0x0000_00FF, 0) }
        if isIconEntry && bitCount == 32 { masks.a = 0xFF00_0000 }
        var palette: [UInt32] = []
        // A pixel offset inside the header cannot be meant (it would leave no room for the palette or masks): the
        // pixels follow the palette, as Pillow reads such files
        let pixelOffset = pixelOffset.flatMap { $0 <= masksEnd && bitCount <= 8 ? nil : $0 }
        if bitCount <= 8 {
            let entries = colorsUsed > 0 && colorsUsed <= 1 << bitCount ? colorsUsed : 1 << bitCount
            let start = masksEnd
            // A palette cut short by the pixel array keeps the entries before it (some writers do that)
            let available = pixelOffset.map { max(0, ($0 - start) / paletteEntryBytes) } ?? entries
            palette.reserveCapacity(entries)
            for i in 0..<min(entries, available) {
                let p = start + i * paletteEntryBytes
                let bgr =
                    UInt32(try reader.u8(p)) | UInt32(try reader.u8(p + 1)) << 8 | UInt32(try reader.u8(p + 2)) << 16
                palette.append(bgr | 0xFF00_0000)
            }
            masksEnd = start + entries * paletteEntryBytes
        }
        return DIBReader(
            width: width, height: height, topDown: topDown, bitCount: bitCount, compression: compression,
            palette: palette, masks: masks, pixelOffset: pixelOffset ?? masksEnd,
            stride: (width * bitCount + 31) / 32 * 4, isIconEntry: isIconEntry, iccProfile: iccProfile)
    }

    /// Decodes the rows in `rows` (stored order, top first) as premultiplied BGRA, calling `deliver` with each.
    /// - Throws: `.truncated` when the pixels end early, `.limitExceeded` when RLE's index plane passes
    ///   `maxBytes`.
    func decodeRows(
        _ bytes: UnsafeRawBufferPointer, rows: Range<Int>, maxBytes: Int,
        deliver: (UnsafeMutablePointer<UInt8>, Int) -> Void
    ) throws(DarkroomImageError) {
        let out = try ScratchBuffer<UInt8>(count: width * 4, zeroed: false)
        if compression == .rle8 || compression == .rle4 {
            guard width * height <= maxBytes else {
                throw DarkroomImageError(
                    .limitExceeded, "an RLE BMP of \(width)×\(height) needs its indices whole, over maxDecodedBytes")
            }
            let indices = try ScratchBuffer<UInt8>(count: width * height)
            try decodeRLE(bytes, into: indices.pointer)
            for y in rows {
                // The format forbids top-down RLE; writers that do it anyway mean rows in stored order (as Pillow reads)
                let source = indices.pointer + (topDown ? y : height - 1 - y) * width
                for x in 0..<width { store(paletteEntry(Int(source[x])), out.pointer, x) }
                deliver(out.pointer, y)
            }
            return
        }
        let maskStride = (width + 31) / 32 * 4
        for y in rows {
            let stored = topDown ? y : height - 1 - y
            let start = pixelOffset + stored * stride
            // The last stored row may lack its padding (writers that stop at the last pixel)
            guard start >= 0, start <= bytes.count - (width * bitCount + 7) / 8 else {
                throw DarkroomImageError(.truncated, "the BMP pixels end before row \(y) of \(height)")
            }
            let row = bytes.baseAddress!.advanced(by: start).assumingMemoryBound(to: UInt8.self)
            convert(row, out.pointer)
            if isIconEntry && bitCount < 32 {
                let maskStart = pixelOffset + height * stride + stored * maskStride
                if maskStart >= 0, maskStart <= bytes.count - maskStride {
                    let mask = bytes.baseAddress!.advanced(by: maskStart).assumingMemoryBound(to: UInt8.self)
                    for x in 0..<width where mask[x >> 3] & (0x80 >> UInt8(x & 7)) != 0 {
                        for c in 0..<4 { out.pointer[4 * x + c] = 0 }
                    }
                }
            }
            deliver(out.pointer, y)
        }
    }

    private func paletteEntry(_ index: Int) -> UInt32 {
        index < palette.count ? palette[index] : 0xFF00_0000
    }

    private func store(_ bgra: UInt32, _ out: UnsafeMutablePointer<UInt8>, _ x: Int) {
        let a = UInt8(truncatingIfNeeded: bgra >> 24)
        out[4 * x] = PixelConversion.premultiply(UInt8(truncatingIfNeeded: bgra), a)
        out[4 * x + 1] = PixelConversion.premultiply(UInt8(truncatingIfNeeded: bgra >> 8), a)
        out[4 * x + 2] = PixelConversion.premultiply(UInt8(truncatingIfNeeded: bgra >> 16), a)
        out[4 * x + 3] = a
    }

    /// One stored row to premultiplied BGRA.
    private func convert(_ row: UnsafePointer<UInt8>, _ out: UnsafeMutablePointer<UInt8>) {
        switch bitCount {
        case 1, 2, 4, 8:
            let perByte = 8 / bitCount
            let valueMask = (1 << bitCount) - 1
            for x in 0..<width {
                let byte = Int(row[x / perByte])
                let shift = 8 - bitCount * (x % perByte + 1)
                store(paletteEntry((byte >> shift) & valueMask), out, x)
            }
        case 24:
            for x in 0..<width {
                out[4 * x] = row[3 * x]
                out[4 * x + 1] = row[3 * x + 1]
                out[4 * x + 2] = row[3 * x + 2]
                out[4 * x + 3] = 255
            }
        default:
            let scale = (Self.channel(masks.r), Self.channel(masks.g), Self.channel(masks.b), Self.channel(masks.a))
            for x in 0..<width {
                let v =
                    bitCount == 16
                    ? UInt32(row[2 * x]) | UInt32(row[2 * x + 1]) << 8
                    : UInt32(row[4 * x]) | UInt32(row[4 * x + 1]) << 8 | UInt32(row[4 * x + 2]) << 16
                        | UInt32(row[4 * x + 3]) << 24
                let a = masks.a == 0 ? 255 : scale.3(v)
                store(
                    UInt32(scale.2(v)) | UInt32(scale.1(v)) << 8 | UInt32(scale.0(v)) << 16 | UInt32(a) << 24, out, x)
            }
        }
    }

    /// A function reading one masked channel scaled to 0…255 (a zero mask reads 0).
    private static func channel(_ mask: UInt32) -> (UInt32) -> UInt8 {
        guard mask != 0 else { return { _ in 0 } }
        let shift = UInt32(mask.trailingZeroBitCount)
        let maximum = mask >> shift
        return { value in UInt8((UInt64((value & mask) >> shift) * 255 + UInt64(maximum) / 2) / UInt64(maximum)) }
    }

    /// Expands RLE8/RLE4 into one index a pixel, in stored row order. Pixels the stream skips stay 0.
    private func decodeRLE(_ bytes: UnsafeRawBufferPointer, into indices: UnsafeMutablePointer<UInt8>)
        throws(DarkroomImageError)
    {
        var p = pixelOffset
        var x = 0
        var y = 0
        let n = bytes.count
        func put(_ value: UInt8) {
            if x < width && y < height { indices[y * width + x] = value }
            x += 1
        }
        while y < height {
            guard p >= 0, p + 2 <= n else { return }  // a stream without its end marker ends here, as in Pillow
            let count = Int(bytes[p])
            let value = bytes[p + 1]
            p += 2
            if count > 0 {
                for i in 0..<count {
                    put(compression == .rle8 ? value : (i & 1 == 0 ? value >> 4 : value & 0x0F))
                }
                continue
            }
            switch value {
            case 0:
                x = 0
                y += 1
            case 1:
                return
            case 2:
                guard p + 2 <= n else { return }
                x += Int(bytes[p])
                y += Int(bytes[p + 1])
                p += 2
            default:
                let pixels = Int(value)
                let dataBytes = compression == .rle8 ? pixels : (pixels + 1) / 2
                guard p + dataBytes <= n else {
                    throw DarkroomImageError(.truncated, "the BMP's RLE data ends inside an absolute run")
                }
                for i in 0..<pixels {
                    let byte = bytes[p + (compression == .rle8 ? i : i / 2)]
                    put(compression == .rle8 ? byte : (i & 1 == 0 ? byte >> 4 : byte & 0x0F))
                }
                p += (dataBytes + 1) & ~1  // runs are padded to 16 bits
            }
        }
    }
}
