import CSPNG

/// APNG: each frame (read by ``APNGReader``) decoded by libspng row by row and composited onto a straight-alpha
/// RGBA canvas with the specification's integer "over" (the arithmetic of apngdis) or "source", then disposed
/// (none, background = transparent, previous). Holds the canvas, one frame row (a whole frame when it is
/// Adam7-interlaced) and, for "previous", a copy of what lies under the frame.
final class APNGCompositor: FrameCompositor {
    let rowFormat = PixelFormat.rgba8
    private let bytes: UnsafeRawBufferPointer
    private let reader: APNGReader
    private let limits: DecodeLimits
    private let width: Int
    private let canvas: ScratchBuffer<UInt8>
    private var saved: ScratchBuffer<UInt8>?
    private var next = 0
    /// The last composited frame, whose disposal applies before the next one.
    private var previous: APNGReader.Frame?

    init(_ bytes: UnsafeRawBufferPointer, reader: APNGReader, limits: DecodeLimits) throws(DarkroomImageError) {
        self.bytes = bytes
        self.reader = reader
        self.limits = limits
        width = reader.width
        canvas = try ScratchBuffer(count: reader.width * reader.height * 4)
    }

    func row(_ y: Int) -> UnsafeRawPointer { UnsafeRawPointer(canvas.pointer + y * width * 4) }

    func advance() throws(DarkroomImageError) -> Bool {
        guard next < reader.frames.count else { return false }
        let frame = reader.frames[next]
        if let previous { dispose(previous) }
        var kept = frame
        if frame.dispose == 2 {
            if next == 0 {
                kept.dispose = 1  // "previous" on the first frame means "background"
            } else {
                if saved == nil { saved = try ScratchBuffer(count: width * reader.height * 4, zeroed: false) }
                copyRect(frame, from: canvas.pointer, to: saved!.pointer)
            }
        }
        try draw(frame)
        previous = kept
        next += 1
        return true
    }

    private func dispose(_ frame: APNGReader.Frame) {
        switch frame.dispose {
        case 1:
            for y in frame.y..<(frame.y + frame.height) {
                (canvas.pointer + (y * width + frame.x) * 4).initialize(repeating: 0, count: frame.width * 4)
            }
        case 2: if let saved { copyRect(frame, from: saved.pointer, to: canvas.pointer) }
        default: break
        }
    }

    private func copyRect(
        _ frame: APNGReader.Frame, from source: UnsafeMutablePointer<UInt8>, to target: UnsafeMutablePointer<UInt8>
    ) {
        for y in frame.y..<(frame.y + frame.height) {
            let offset = (y * width + frame.x) * 4
            (target + offset).update(from: source + offset, count: frame.width * 4)
        }
    }

    /// Decodes `frame` with libspng and blends each row onto the canvas as it arrives.
    private func draw(_ frame: APNGReader.Frame) throws(DarkroomImageError) {
        let png = reader.framePNG(frame, in: bytes)
        guard let ctx = spng_ctx_new(0) else {
            throw DarkroomImageError(.outOfMemory, "could not create a PNG decoder")
        }
        defer { spng_ctx_free(ctx) }
        let side = UInt32(clamping: limits.maxDimension)
        try PNGDecoder.check(spng_set_image_limits(ctx, side, side), "setting limits")
        try PNGDecoder.check(
            spng_set_crc_action(ctx, Int32(SPNG_CRC_USE.rawValue), Int32(SPNG_CRC_USE.rawValue)), "setting up")
        let rowBytes = frame.width * 4
        try png.withUnsafeBytes { raw in
            Result { () throws(DarkroomImageError) in
                try PNGDecoder.check(spng_set_png_buffer(ctx, raw.baseAddress, raw.count), "reading frame")
                var ihdr = spng_ihdr()
                try PNGDecoder.check(spng_get_ihdr(ctx, &ihdr), "reading a frame header")
                let flags = Int32(SPNG_DECODE_TRNS.rawValue | SPNG_DECODE_PROGRESSIVE.rawValue)
                try PNGDecoder.check(
                    spng_decode_image(ctx, nil, 0, Int32(SPNG_FMT_RGBA8.rawValue), flags), "starting a frame")
                let interlaced = ihdr.interlace_method != 0
                let buffer = try ScratchBuffer<UInt8>(count: interlaced ? rowBytes * frame.height : rowBytes)
                var info = spng_row_info()
                while true {
                    let status = spng_get_row_info(ctx, &info)
                    if status == Int32(SPNG_EOI.rawValue) { break }
                    try PNGDecoder.check(status, "reading a frame row")
                    let y = Int(info.row_num)
                    let target = interlaced ? buffer.pointer + y * rowBytes : buffer.pointer
                    let decoded = spng_decode_row(ctx, target, rowBytes)
                    if decoded != 0 && decoded != Int32(SPNG_EOI.rawValue) {
                        try PNGDecoder.check(decoded, "a frame row")
                    }
                    if !interlaced { blend(row: target, y: y, frame) }
                    if decoded == Int32(SPNG_EOI.rawValue) { break }
                }
                if interlaced { for y in 0..<frame.height { blend(row: buffer.pointer + y * rowBytes, y: y, frame) } }
            }
        }.get()
    }

    /// Composites one decoded frame row (straight RGBA) onto canvas row `frame.y + y`.
    @inline(__always)
    private func blend(row source: UnsafeMutablePointer<UInt8>, y: Int, _ frame: APNGReader.Frame) {
        let target = canvas.pointer + ((frame.y + y) * width + frame.x) * 4
        if frame.blend == 0 {
            target.update(from: source, count: frame.width * 4)
            return
        }
        for x in 0..<frame.width {
            let s = source + x * 4
            let d = target + x * 4
            let sa = Int(s[3])
            if sa == 255 {
                d.update(from: s, count: 4)
            } else if sa != 0 {
                let da = Int(d[3])
                if da == 0 {
                    d.update(from: s, count: 4)
                } else {
                    let u = sa * 255
                    let v = (255 - sa) * da
                    let al = u + v
                    for c in 0..<3 { d[c] = UInt8((Int(s[c]) * u + Int(d[c]) * v) / al) }
                    d[3] = UInt8(al / 255)
                }
            }
        }
    }
}
