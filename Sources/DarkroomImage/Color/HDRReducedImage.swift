/// The middle of an HDR decode: the source averaged in blocks of the shrink denominator into 16-bit RGBA
/// (premultiplied, the PQ or HLG signal still), then tone-mapped to SDR sRGB a row at a time into the resampler.
///
/// Averaging before the tone map keeps every bit of the signal (the sums are 32-bit) and runs the per-pixel tone map
/// on the reduced pixels only, as the ICC step runs on the output. The brightest reduced pixel is the roll-off's
/// source peak: a still image is measured whole, as libplacebo's peak detection measures video frames. Memory: 8
/// bytes a reduced pixel (checked against ``DecodeLimits/maxDecodedBytes``), and 16 more while tone-mapping.
package final class HDRReducedImage: HDRBlockReducer {
    let width: Int, height: Int
    /// The shrink denominator: each reduced pixel averages a `d × d` block of the source.
    let d: Int
    /// Counted as pixel memory while it exists (a ``ScratchBuffer``).
    let pixels: ScratchBuffer<UInt16>
    private let sourceWidth: Int, sourceHeight: Int
    /// One reduced row's RGBA sums while RGBA rows are added, and how many source rows they hold.
    private let rgbaSums: ScratchBuffer<UInt32>
    private var rgbaRows = 0

    init(sourceWidth: Int, sourceHeight: Int, d: Int, limits: DecodeLimits, what: String) throws(DarkroomImageError) {
        width = (sourceWidth + d - 1) / d
        height = (sourceHeight + d - 1) / d
        self.d = d
        self.sourceWidth = sourceWidth
        self.sourceHeight = sourceHeight
        let bytes = width * height * 24  // the pixels, and their light while tone-mapping
        guard bytes <= limits.maxDecodedBytes else {
            throw DarkroomImageError(
                .limitExceeded,
                "tone-mapping a \(sourceWidth)×\(sourceHeight) HDR \(what) needs \(bytes) bytes, over maxDecodedBytes (\(limits.maxDecodedBytes))"
            )
        }
        pixels = try ScratchBuffer<UInt16>(count: width * height * 4, zeroed: true)
        rgbaSums = try ScratchBuffer<UInt32>(count: width * 4, zeroed: true)
    }

    /// The first pixel of reduced row `y`.
    func row(_ y: Int) -> UnsafeMutablePointer<UInt16> { pixels.pointer + y * width * 4 }

    // MARK: Reducing planes

    /// Reduces an opaque image's Y'CbCr planes directly: each block's mean Y', and the mean Cb and Cr of the chroma
    /// samples that cover it, converted to R'G'B' once per block (the conversion is affine: averaging first gives
    /// the same signal, from a half (4:2:0) of the samples a converted image would have).
    /// - Parameters:
    ///   - rows: the source rows to reduce (whole blocks).
    ///   - shiftX, shiftY: log2 of the chroma subsampling; `cb` and `cr` nil for a gray (4:0:0) image.
    func reducePlanes<Sample: FixedWidthInteger & UnsignedInteger & SIMDScalar>(
        y: YCbCrRows.Plane, cb: YCbCrRows.Plane?, cr: YCbCrRows.Plane?, as: Sample.Type, shiftX sx: Int,
        shiftY sy: Int, coefficients k: YUVCoefficients, rows needed: Range<Int>
    ) {
        let chromaWidth = (sourceWidth + (1 << sx) - 1) >> sx
        let chromaHeight = (sourceHeight + (1 << sy) - 1) >> sy
        var sums = [UInt64](repeating: 0, count: width * 3)
        var ry = needed.lowerBound / d
        while ry * d < needed.upperBound, ry < height {
            for i in sums.indices { sums[i] = 0 }
            let y0 = ry * d
            let y1 = min(y0 + d, sourceHeight)
            Self.sumRows(y, rows: y0..<y1, width: sourceWidth, d: d, into: &sums, channel: 0, as: Sample.self)
            let cy0 = y0 >> sy
            let cy1 = min((y1 + (1 << sy) - 1) >> sy, chromaHeight)
            if let cb, let cr {
                if d >> sx > 0 {
                    for (c, plane) in [(1, cb), (2, cr)] {
                        Self.sumRows(
                            plane, rows: cy0..<cy1, width: chromaWidth, d: d >> sx, into: &sums, channel: c,
                            as: Sample.self)
                    }
                } else {
                    // d = 1 with subsampled chroma: each pixel takes the chroma sample that covers it.
                    for (c, plane) in [(1, cb), (2, cr)] {
                        let row = UnsafeRawPointer(plane.base + cy0 * plane.stride).assumingMemoryBound(to: Sample.self)
                        for bx in 0..<width { sums[3 * bx + c] = UInt64(row[bx >> sx]) }
                    }
                }
            }
            let out = row(ry)
            for bx in 0..<width {
                let columns = min(d, sourceWidth - bx * d)
                let yMean = Double(sums[3 * bx]) / Double(columns * (y1 - y0))
                var u = k.chromaOffset
                var v = k.chromaOffset
                if cb != nil {
                    let cx0 = (bx * d) >> sx
                    let cx1 = min((bx * d + columns + (1 << sx) - 1) >> sx, chromaWidth)
                    let count = d >> sx > 0 ? Double(max(1, (cx1 - cx0) * (cy1 - cy0))) : 1
                    u = Double(sums[3 * bx + 1]) / count
                    v = Double(sums[3 * bx + 2]) / count
                }
                let (r, g, b) = k.rgb(y: yMean, cb: u, cr: v)
                out[4 * bx] = UInt16((min(max(r, 0), 1) * 65535).rounded())
                out[4 * bx + 1] = UInt16((min(max(g, 0), 1) * 65535).rounded())
                out[4 * bx + 2] = UInt16((min(max(b, 0), 1) * 65535).rounded())
                out[4 * bx + 3] = 65535
            }
            ry += 1
        }
    }

    /// Adds `rows` of one plane into `sums` (three channels a block), `d` samples a block: whole blocks of 2, 4 or 8
    /// samples as one vector load and a horizontal add, the ragged last block a sample at a time.
    @inline(__always)
    private static func sumRows<Sample: FixedWidthInteger & UnsignedInteger & SIMDScalar>(
        _ plane: YCbCrRows.Plane, rows: Range<Int>, width: Int, d: Int, into sums: inout [UInt64], channel: Int,
        as: Sample.Type
    ) {
        let whole = width / d
        sums.withUnsafeMutableBufferPointer { sums in
            for y in rows {
                let raw = UnsafeRawPointer(plane.base + y * plane.stride)
                switch d {
                case 8: Self.sumBlocks(raw, SIMD8<Sample>.self, blocks: whole, into: sums, channel: channel)
                case 4: Self.sumBlocks(raw, SIMD4<Sample>.self, blocks: whole, into: sums, channel: channel)
                case 2: Self.sumBlocks(raw, SIMD2<Sample>.self, blocks: whole, into: sums, channel: channel)
                default:
                    let row = raw.assumingMemoryBound(to: Sample.self)
                    for block in 0..<whole {
                        var s: UInt64 = 0
                        for x in (block * d)..<(block * d + d) { s &+= UInt64(truncatingIfNeeded: row[x]) }
                        sums[3 * block + channel] &+= s
                    }
                }
                if whole * d < width {
                    let row = raw.assumingMemoryBound(to: Sample.self)
                    var s: UInt64 = 0
                    for x in (whole * d)..<width { s &+= UInt64(truncatingIfNeeded: row[x]) }
                    sums[3 * whole + channel] &+= s
                }
            }
        }
    }

    @inline(__always)
    private static func sumBlocks<V: SIMD>(
        _ row: UnsafeRawPointer, _: V.Type, blocks: Int, into sums: UnsafeMutableBufferPointer<UInt64>, channel: Int
    ) where V.Scalar: FixedWidthInteger & UnsignedInteger {
        let stride = MemoryLayout<V.Scalar>.stride * V.scalarCount
        for block in 0..<blocks {
            let v = row.loadUnaligned(fromByteOffset: block * stride, as: V.self)
            var s: UInt64 = 0
            for i in 0..<V.scalarCount { s &+= UInt64(truncatingIfNeeded: v[i]) }
            sums[3 * block + channel] &+= s
        }
    }

    // MARK: Reducing RGBA rows

    /// Adds source row `y` of premultiplied RGBA16 pixels (rows in order, `d` a block).
    func addRGBA16(_ row: UnsafePointer<UInt16>, sourceRow y: Int) {
        let sums = rgbaSums.pointer
        var x = 0
        var block = 0
        while x < sourceWidth {
            let end = min(x + d, sourceWidth)
            var s = SIMD4<UInt32>(sums[4 * block], sums[4 * block + 1], sums[4 * block + 2], sums[4 * block + 3])
            while x < end {
                s &+= SIMD4<UInt32>(
                    UInt32(row[4 * x]), UInt32(row[4 * x + 1]), UInt32(row[4 * x + 2]), UInt32(row[4 * x + 3]))
                x += 1
            }
            (sums[4 * block], sums[4 * block + 1], sums[4 * block + 2], sums[4 * block + 3]) = (s.x, s.y, s.z, s.w)
            block += 1
        }
        rgbaRows += 1
        guard y % d == d - 1 || y == sourceHeight - 1 else { return }
        let out = self.row(y / d)
        for block in 0..<width {
            let count = UInt32(min(d, sourceWidth - block * d) * rgbaRows)
            for c in 0..<4 {
                out[4 * block + c] = UInt16((sums[4 * block + c] + count / 2) / count)
                sums[4 * block + c] = 0
            }
        }
        rgbaRows = 0
    }

    // MARK: Decoding

    /// The SDR decode the HDR codecs share: a reduced image at the strongest shrink denominator that keeps the
    /// shrink-on-load margin, `reduce` filling it from the source rows the output needs (whole blocks, to be added
    /// in order), then tone-mapped into the plan's output and marked as converted, described by `signal`.
    /// - Throws: `.unsupportedFeature` for primaries the tone mapper does not convert; `.limitExceeded` past
    ///   ``DecodeLimits/maxDecodedBytes``; what `reduce` throws.
    static func decode(
        sourceWidth: Int, sourceHeight: Int, isOpaque: Bool, signal: EmbeddedColor.CICP, plan: DecodePlan,
        options: DecodeOptions, allocate: BitmapAllocator, what: String,
        reduce: (HDRReducedImage, _ sourceRows: Range<Int>) throws(DarkroomImageError) -> Void
    ) throws(DarkroomImageError) -> CodecOutput {
        guard let transfer = HDRTransfer(cicp: signal.transfer) else {
            throw DarkroomImageError(.unsupportedFeature, "transfer \(signal.transfer) is not PQ or HLG")
        }
        let d = plan.shrinkOnLoadDenominator(options)
        let reduced = try HDRReducedImage(
            sourceWidth: sourceWidth, sourceHeight: sourceHeight, d: d, limits: options.limits, what: what)
        let destination = try RowDestination(
            plan: plan, sourceWidth: reduced.width, sourceHeight: reduced.height, format: .bgra8Premultiplied,
            isOpaque: isOpaque, filter: options.filter, allocate: allocate)
        let rows = destination.requiredRows.clamped(to: 0..<reduced.height)
        try reduce(reduced, (rows.lowerBound * d)..<min(rows.upperBound * d, sourceHeight))
        guard try reduced.toneMap(transfer: transfer, primaries: signal.primaries, rows: rows, into: destination)
        else {
            throw DarkroomImageError(.unsupportedFeature, "the HDR primaries \(signal.primaries) are not supported")
        }
        return .toneMapped(destination.finish(), shrinkDenominator: d, color: ColorReading(color: .cicp(signal)))
    }

    /// A `width × height` PQ or HLG picture that `fill` writes as straight RGBA16 signal (alpha 65,535; rows of
    /// `width × 8` bytes), tone-mapped to opaque BGRA8 sRGB in memory `allocate` supplies, peak measured over the
    /// picture: the tail of a decoder that scales the signal itself (a video frame scaled by libswscale).
    /// - Throws: `.unsupportedFeature` for a transfer that is not PQ or HLG, or primaries the tone mapper does not
    ///   convert; `.limitExceeded` past ``DecodeLimits/maxDecodedBytes``; what `fill` throws.
    package static func toneMapped(
        width: Int, height: Int, transfer: Int, primaries: Int, limits: DecodeLimits, allocate: BitmapAllocator,
        fill: (_ pixels: UnsafeMutablePointer<UInt16>, _ bytesPerRow: Int) throws(DarkroomImageError) -> Void
    ) throws(DarkroomImageError) -> Bitmap {
        guard let signal = HDRTransfer(cicp: transfer) else {
            throw DarkroomImageError(.unsupportedFeature, "transfer \(transfer) is not PQ or HLG")
        }
        let picture = try HDRReducedImage(
            sourceWidth: width, sourceHeight: height, d: 1, limits: limits, what: "video frame")
        try fill(picture.pixels.pointer, width * 8)
        let whole = SourceRect(x: 0, y: 0, width: Double(width), height: Double(height))
        let plan = DecodePlan(
            outputWidth: width, outputHeight: height, sourceRect: whole, sourceWidth: width, sourceHeight: height)
        let destination = try RowDestination(
            plan: plan, sourceWidth: width, sourceHeight: height, format: .bgra8Premultiplied, isOpaque: true,
            filter: .lanczos3, allocate: allocate)
        guard try picture.toneMap(transfer: signal, primaries: primaries, rows: 0..<height, into: destination) else {
            throw DarkroomImageError(.unsupportedFeature, "the HDR primaries \(primaries) are not supported")
        }
        return destination.finish()
    }

    // MARK: Tone mapping

    /// Tone-maps reduced `rows` to premultiplied BGRA8 sRGB and hands each to `destination`.
    /// - Returns: false when `primaries` are not supported (nothing is written).
    func toneMap(transfer: HDRTransfer, primaries: Int, rows: Range<Int>, into destination: RowDestination)
        throws(DarkroomImageError) -> Bool
    {
        guard let measuring = HDRToneMapper(transfer: transfer, primaries: primaries, sourcePeak: 0) else {
            return false
        }
        let (light, mapper) = try measure(rows, with: measuring)
        let out = try ScratchBuffer<UInt8>(count: width * 4, zeroed: false)
        let o = out.pointer
        for (i, y) in rows.enumerated() {
            let p = row(y)
            let l = light.pointer + i * width
            for x in 0..<width {
                let (sr, sg, sb) = mapper.encode(l[x])
                let alpha = UInt16(p[4 * x + 3] >> 8)
                if alpha == 255 {
                    (o[4 * x], o[4 * x + 1], o[4 * x + 2]) = (sb, sg, sr)
                } else {
                    o[4 * x] = UInt8((UInt16(sb) * alpha + 127) / 255)
                    o[4 * x + 1] = UInt8((UInt16(sg) * alpha + 127) / 255)
                    o[4 * x + 2] = UInt8((UInt16(sr) * alpha + 127) / 255)
                }
                o[4 * x + 3] = UInt8(alpha)
            }
            destination.consume(row: o, y: y)
        }
        return true
    }

    /// The light of reduced `rows` (nits, the source primaries), once per pixel, and `measuring` rolling off from
    /// the brightest opaque pixel's light: a still image's peak is measured whole, and the gain table, which
    /// depends on it, is built once it is known.
    private func measure(_ rows: Range<Int>, with measuring: HDRToneMapper) throws(DarkroomImageError) -> (
        ScratchBuffer<SIMD3<Float>>, HDRToneMapper
    ) {
        let light = try ScratchBuffer<SIMD3<Float>>(count: width * rows.count, zeroed: false)
        var peak: Float = 0
        for (i, y) in rows.enumerated() {
            let p = row(y)
            let l = light.pointer + i * width
            for x in 0..<width {
                let (r, g, b, a) = Self.unpremultiplied(p + 4 * x)
                l[x] = measuring.light(r, g, b)
                if a > 0 { peak = max(peak, l[x].max()) }
            }
        }
        return (light, measuring.withSourcePeak(Double(peak)))
    }

    /// A premultiplied RGBA16 pixel as straight signal values (0…1) and its alpha.
    @inline(__always)
    private static func unpremultiplied(_ p: UnsafePointer<UInt16>) -> (Float, Float, Float, Float) {
        let a = Float(p[3]) / 65535
        guard a > 0 else { return (0, 0, 0, 0) }
        let scale = 1 / (65535 * a)
        return (Float(p[0]) * scale, Float(p[1]) * scale, Float(p[2]) * scale, a)
    }
}
