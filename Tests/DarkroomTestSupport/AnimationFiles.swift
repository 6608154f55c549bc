/// Small animated GIFs and APNGs written byte by byte, so that each disposal and blend mode can be tested on a
/// file whose every pixel is known, independently of the code under test. The encoders are the simplest the
/// formats allow: GIF LZW with a clear code every 250 pixels (codes stay 9 bits), PNG with stored deflate blocks.
package enum AnimationFiles {
    /// One GIF frame: its rectangle, palette indices (row-major, `width × height`), disposal (0–3), delay in
    /// centiseconds and transparent index.
    package struct GIFFrame {
        package var x = 0, y = 0, width: Int, height: Int
        package var indices: [UInt8]
        package var disposal = 1
        package var delay = 10
        package var transparent: UInt8?
        package var interlaced = false
        package init(
            x: Int = 0, y: Int = 0, width: Int, height: Int, indices: [UInt8], disposal: Int = 1, delay: Int = 10,
            transparent: UInt8? = nil, interlaced: Bool = false
        ) {
            (self.x, self.y, self.width, self.height, self.indices) = (x, y, width, height, indices)
            (self.disposal, self.delay, self.transparent, self.interlaced) = (disposal, delay, transparent, interlaced)
        }
    }

    /// A GIF89a of `width × height` with a 256-entry global palette (`palette[i]` = R, G, B), a NETSCAPE2.0
    /// loop count unless nil, and `frames`.
    package static func gif(
        width: Int, height: Int, palette: [(UInt8, UInt8, UInt8)], loop: Int? = 0, frames: [GIFFrame]
    ) -> [UInt8] {
        var out = Array("GIF89a".utf8)
        out += le16(width) + le16(height) + [0xF7, 0, 0]
        for i in 0..<256 {
            let c = i < palette.count ? palette[i] : (0, 0, 0)
            out += [c.0, c.1, c.2]
        }
        if let loop { out += [0x21, 0xFF, 11] + Array("NETSCAPE2.0".utf8) + [3, 1] + le16(loop) + [0] }
        for frame in frames {
            let flags = UInt8(frame.disposal << 2) | (frame.transparent != nil ? 1 : 0)
            out += [0x21, 0xF9, 4, flags] + le16(frame.delay) + [frame.transparent ?? 0, 0]
            out += [0x2C] + le16(frame.x) + le16(frame.y) + le16(frame.width) + le16(frame.height)
            out += [frame.interlaced ? 0x40 : 0]
            var rows = Array(0..<frame.height)
            if frame.interlaced {
                rows = [(0, 8), (4, 8), (2, 4), (1, 2)].flatMap { stride(from: $0.0, to: frame.height, by: $0.1) }
            }
            let pixels = rows.flatMap { frame.indices[($0 * frame.width)..<(($0 + 1) * frame.width)] }
            out += [8] + subBlocks(lzw(pixels))
        }
        out.append(0x3B)
        return out
    }

    /// One APNG frame: rectangle, straight RGBA pixels (`width × height × 4`), dispose_op (0 none, 1 background,
    /// 2 previous), blend_op (0 source, 1 over) and delay in milliseconds.
    package struct APNGFrame {
        package var x = 0, y = 0, width: Int, height: Int
        package var rgba: [UInt8]
        package var dispose = 0, blend = 0, delayMilliseconds = 100
        package init(
            x: Int = 0, y: Int = 0, width: Int, height: Int, rgba: [UInt8], dispose: Int = 0, blend: Int = 0,
            delayMilliseconds: Int = 100
        ) {
            (self.x, self.y, self.width, self.height, self.rgba) = (x, y, width, height, rgba)
            (self.dispose, self.blend, self.delayMilliseconds) = (dispose, blend, delayMilliseconds)
        }
    }

    /// An RGBA APNG of `width × height` playing `plays` times (0 forever); the first frame is also the default
    /// image (its data in IDAT) unless `hiddenDefault` (RGBA of the canvas) is given: then that image is the IDAT,
    /// before any `fcTL` (not part of the animation), and every frame is in `fdAT` chunks.
    package static func apng(
        width: Int, height: Int, plays: Int = 0, frames: [APNGFrame], hiddenDefault: [UInt8]? = nil
    ) -> [UInt8] {
        var out: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        out += chunk("IHDR", be32(width) + be32(height) + [8, 6, 0, 0, 0])
        out += chunk("acTL", be32(frames.count) + be32(plays))
        if let hiddenDefault {
            var raw: [UInt8] = []
            for y in 0..<height { raw += [0] + hiddenDefault[(y * width * 4)..<((y + 1) * width * 4)] }
            out += chunk("IDAT", zlibStored(raw))
        }
        var sequence = 0
        for (index, frame) in frames.enumerated() {
            out += chunk(
                "fcTL",
                be32(sequence) + be32(frame.width) + be32(frame.height) + be32(frame.x) + be32(frame.y)
                    + be16(frame.delayMilliseconds) + be16(1000) + [UInt8(frame.dispose), UInt8(frame.blend)])
            sequence += 1
            var raw: [UInt8] = []
            for y in 0..<frame.height { raw += [0] + frame.rgba[(y * frame.width * 4)..<((y + 1) * frame.width * 4)] }
            let data = zlibStored(raw)
            if index == 0, hiddenDefault == nil {
                out += chunk("IDAT", data)
            } else {
                out += chunk("fdAT", be32(sequence) + data)
                sequence += 1
            }
        }
        out += chunk("IEND", [])
        return out
    }

    /// A PNG made of `chunks` in the order given, each a type and its payload (lengths and CRCs are filled in):
    /// for files that break a rule on purpose, such as the APNG conformance cases.
    package static func png(_ chunks: [(type: String, payload: [UInt8])]) -> [UInt8] {
        chunks.reduce([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { $0 + chunk($1.type, $1.payload) }
    }

    /// The zlib data of a `width × height` 8-bit RGBA image of one colour (every row filter type 0), as an `IDAT`
    /// or an `fdAT` after its sequence number carries it.
    package static func solidImageData(width: Int, height: Int, rgba: [UInt8]) -> [UInt8] {
        let row: [UInt8] = [0] + Array(repeating: rgba, count: width).joined()
        return zlibStored(Array(Array(repeating: row, count: height).joined()))
    }

    /// `value` as four big-endian bytes, as PNG chunk fields are written.
    package static func bigEndian32(_ value: Int) -> [UInt8] { be32(value) }

    // MARK: - Encoding pieces

    private static func le16(_ v: Int) -> [UInt8] { [UInt8(v & 0xFF), UInt8((v >> 8) & 0xFF)] }
    private static func be16(_ v: Int) -> [UInt8] { [UInt8((v >> 8) & 0xFF), UInt8(v & 0xFF)] }
    private static func be32(_ v: Int) -> [UInt8] { [24, 16, 8, 0].map { UInt8((v >> $0) & 0xFF) } }

    /// GIF LZW at minimum code size 8 without compression: a clear code before every 250 literal codes keeps the
    /// table below 512 entries, so every code is 9 bits.
    private static func lzw(_ pixels: [UInt8]) -> [UInt8] {
        var bits: UInt32 = 0
        var count = 0
        var out: [UInt8] = []
        func put(_ code: Int) {
            bits |= UInt32(code) << count
            count += 9
            while count >= 8 {
                out.append(UInt8(bits & 0xFF))
                bits >>= 8
                count -= 8
            }
        }
        for (i, p) in pixels.enumerated() {
            if i % 250 == 0 { put(256) }
            put(Int(p))
        }
        put(257)
        if count > 0 { out.append(UInt8(bits & 0xFF)) }
        return out
    }

    private static func subBlocks(_ data: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        var i = 0
        while i < data.count {
            let n = min(255, data.count - i)
            out += [UInt8(n)] + data[i..<(i + n)]
            i += n
        }
        return out + [0]
    }

    private static func chunk(_ type: String, _ payload: [UInt8]) -> [UInt8] {
        let body = Array(type.utf8) + payload
        return be32(payload.count) + body + be32(Int(crc32(body)))
    }

    private static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for b in bytes {
            crc ^= UInt32(b)
            for _ in 0..<8 { crc = crc & 1 != 0 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return ~crc
    }

    /// A zlib stream of stored (uncompressed) deflate blocks.
    private static func zlibStored(_ data: [UInt8]) -> [UInt8] {
        var out: [UInt8] = [0x78, 0x01]
        var i = 0
        repeat {
            let n = min(65535, data.count - i)
            let last: UInt8 = i + n == data.count ? 1 : 0
            out += [last, UInt8(n & 0xFF), UInt8(n >> 8), UInt8(~n & 0xFF), UInt8((~n >> 8) & 0xFF)]
            out += data[i..<(i + n)]
            i += n
        } while i < data.count
        var a: UInt32 = 1
        var b: UInt32 = 0
        for byte in data {
            a = (a + UInt32(byte)) % 65521
            b = (b + a) % 65521
        }
        return out + be32(Int((b << 16) | a))
    }
}
