/// The resampler's hot loops, on raw pointers only (no arrays, no allocation, no bounds checks).
///
/// - ``widen(_:into:count:)``: bytes → `Float`, one pass, 16 bytes per step.
/// - ``horizontal4(_:into:weights:)`` / ``horizontal1(_:into:weights:)``: one filtered row from one input
///   row; cost `outputCount × paddedTaps` multiply-adds of `SIMD4<Float>` (one BGRA pixel, or 4 gray taps).
/// - ``vertical(rows:weights:taps:floats:into:width:channels:alphaChannel:)``: one output row as the weighted
///   sum of `taps` filtered rows, accumulated in registers 32 floats at a time and converted straight to
///   bytes (round to nearest, clamp to 0...255, color ≤ alpha when premultiplied); cost `taps × floats`
///   multiply-adds.
enum RowKernels {
    /// Converts `count` bytes to `Float`, 16 per step.
    static func widen(_ source: UnsafePointer<UInt8>, into target: UnsafeMutablePointer<Float>, count: Int) {
        let from = UnsafeRawPointer(source)
        let to = UnsafeMutableRawPointer(target)
        var i = 0
        while i &+ 16 <= count {
            let bytes = from.loadUnaligned(fromByteOffset: i, as: SIMD16<UInt8>.self)
            to.storeBytes(of: SIMD16<Float>(bytes), toByteOffset: i &* 4, as: SIMD16<Float>.self)
            i &+= 16
        }
        while i < count {
            target[i] = Float(source[i])
            i &+= 1
        }
    }

    /// Filters one row of 4-channel `Float` pixels. `input` holds the pixels starting at `weights.origin`, readable
    /// (finite) up to 3 pixels past the last one any tap touches, 16-byte aligned; `output` gets
    /// `weights.outputCount` pixels.
    static func horizontal4(
        _ input: UnsafePointer<Float>, into output: UnsafeMutablePointer<Float>,
        weights: ResampleWeights
    ) {
        let starts = weights.starts.pointer
        let padded = weights.paddedCounts.pointer
        let stride = weights.tapStride
        let source = UnsafeRawPointer(input)
        let target = UnsafeMutableRawPointer(output)
        var w = UnsafeRawPointer(weights.weights.pointer)
        for i in 0..<weights.outputCount {
            var p = source + Int(starts[i]) &* 16
            var tap = w
            // Four independent accumulators hide the add latency; weights load 4 at a time (16-byte aligned).
            var a0 = SIMD4<Float>.zero
            var a1 = SIMD4<Float>.zero
            var a2 = SIMD4<Float>.zero
            var a3 = SIMD4<Float>.zero
            var remaining = Int(padded[i])
            while remaining > 0 {
                let k = tap.load(as: SIMD4<Float>.self)
                a0 += p.load(as: SIMD4<Float>.self) * SIMD4(repeating: k[0])
                a1 += p.load(fromByteOffset: 16, as: SIMD4<Float>.self) * SIMD4(repeating: k[1])
                a2 += p.load(fromByteOffset: 32, as: SIMD4<Float>.self) * SIMD4(repeating: k[2])
                a3 += p.load(fromByteOffset: 48, as: SIMD4<Float>.self) * SIMD4(repeating: k[3])
                p += 64
                tap += 16
                remaining &-= 4
            }
            target.storeBytes(of: (a0 + a1) + (a2 + a3), toByteOffset: i &* 16, as: SIMD4<Float>.self)
            w += stride &* 4
        }
    }

    /// Filters one row of 1-channel `Float` samples (same layout contract as ``horizontal4(_:into:weights:)``).
    static func horizontal1(
        _ input: UnsafePointer<Float>, into output: UnsafeMutablePointer<Float>,
        weights: ResampleWeights
    ) {
        let starts = weights.starts.pointer
        let padded = weights.paddedCounts.pointer
        let stride = weights.tapStride
        var w = UnsafeRawPointer(weights.weights.pointer)
        for i in 0..<weights.outputCount {
            var p = UnsafeRawPointer(input + Int(starts[i]))
            var tap = w
            var acc = SIMD4<Float>.zero
            var remaining = Int(padded[i])
            while remaining > 0 {
                acc += p.loadUnaligned(as: SIMD4<Float>.self) * tap.load(as: SIMD4<Float>.self)
                p += 16
                tap += 16
                remaining &-= 4
            }
            output[i] = acc.sum()
            w += stride &* 4
        }
    }

    /// Writes one output row: `Σ weights[j] × rows[j]` over the first `width × channels` floats (rows readable
    /// up to `floats`, a multiple of 16, 64-byte aligned), converted to `width × channels` bytes at `target`.
    static func vertical(
        rows: UnsafePointer<UnsafePointer<Float>>, weights: UnsafePointer<Float>, taps: Int,
        floats: Int, into target: UnsafeMutablePointer<UInt8>, width: Int, channels: Int,
        alphaChannel: Int?
    ) {
        let bytes = width &* channels
        let used = min(floats, (bytes &+ 15) & ~15)
        // Literal alpha lanes so each inlined copy of the loop folds its packing to straight-line SSE.
        switch alphaChannel {
        case nil: verticalLoop(rows, weights, taps, used, target, bytes, alpha: -1)
        case 3?: verticalLoop(rows, weights, taps, used, target, bytes, alpha: 3)
        case 0?: verticalLoop(rows, weights, taps, used, target, bytes, alpha: 0)
        case 1?: verticalLoop(rows, weights, taps, used, target, bytes, alpha: 1)
        case _?: verticalLoop(rows, weights, taps, used, target, bytes, alpha: 2)
        }
    }

    @inline(always)  // one specialized copy per literal alpha lane
    private static func verticalLoop(
        _ rows: UnsafePointer<UnsafePointer<Float>>, _ weights: UnsafePointer<Float>, _ taps: Int, _ floats: Int,
        _ target: UnsafeMutablePointer<UInt8>, _ bytes: Int, alpha: Int
    ) {
        let out = UnsafeMutableRawPointer(target)
        var offset = 0
        // 32 floats per step: 8 accumulators, and the row pointer and weight loads amortize over 8 madds.
        while offset &+ 32 <= floats {
            var acc0 = SIMD16<Float>.zero
            var acc1 = SIMD16<Float>.zero
            for j in 0..<taps {
                let row = UnsafeRawPointer(rows[j] + offset)
                let w = weights[j]
                acc0 += row.load(as: SIMD16<Float>.self) * w
                acc1 += row.load(fromByteOffset: 64, as: SIMD16<Float>.self) * w
            }
            store(pack(acc0, alpha: alpha), out, offset, bytes)
            store(pack(acc1, alpha: alpha), out, offset &+ 16, bytes)
            offset &+= 32
        }
        if offset < floats {
            var acc = SIMD16<Float>.zero
            for j in 0..<taps {
                acc += UnsafeRawPointer(rows[j] + offset).load(as: SIMD16<Float>.self) * weights[j]
            }
            store(pack(acc, alpha: alpha), out, offset, bytes)
        }
    }

    /// Stores the 16 bytes at `offset`, or only those below `bytes`.
    @inline(__always)
    private static func store(_ packed: SIMD16<UInt8>, _ out: UnsafeMutableRawPointer, _ offset: Int, _ bytes: Int) {
        if offset &+ 16 <= bytes {
            out.storeBytes(of: packed, toByteOffset: offset, as: SIMD16<UInt8>.self)
        } else if offset < bytes {
            for lane in 0..<(bytes &- offset) {
                out.storeBytes(of: packed[lane], toByteOffset: offset &+ lane, as: UInt8.self)
            }
        }
    }
}

extension RowKernels {
    /// Turns 16 accumulated floats into bytes: round to nearest (ties to even), clamp to 0...255 and, when
    /// `alpha` is a lane index (0...3; -1 for none), clamp each color of a 4-byte pixel to its alpha.
    ///
    /// Written so the optimizer emits straight-line SSE (max/min clamps, magic-number rounding, an exact
    /// `a - max(a - c, 0)` on integral floats for the alpha limit): Swift's generic `pointwiseMin` and
    /// vector-operand `replacing` on floats compile to scalar loops.
    @inline(always)
    static func pack(_ value: SIMD16<Float>, alpha: Int) -> SIMD16<UInt8> {
        let q0 = pixel(value.lowHalf.lowHalf, alpha: alpha)
        let q1 = pixel(value.lowHalf.highHalf, alpha: alpha)
        let q2 = pixel(value.highHalf.lowHalf, alpha: alpha)
        let q3 = pixel(value.highHalf.highHalf, alpha: alpha)
        let magic = SIMD16<Float>(lowHalf: SIMD8(lowHalf: q0, highHalf: q1), highHalf: SIMD8(lowHalf: q2, highHalf: q3))
        // The low mantissa byte of (c + 1.5 × 2^23) is c.
        return SIMD16<UInt8>(truncatingIfNeeded: unsafeBitCast(magic, to: SIMD16<UInt32>.self))
    }

    /// Four values → clamped, rounded, alpha-limited, plus 1.5 × 2^23.
    @inline(always)
    private static func pixel(_ q: SIMD4<Float>, alpha: Int) -> SIMD4<Float> {
        let magic: Float = 12_582_912.0  // 1.5 × 2^23: adding it rounds to an integer (ties to even)
        var c = q.replacing(with: 0, where: q .< 0)
        c = c.replacing(with: 255, where: c .> 255)
        guard alpha >= 0 else { return c + magic }
        let r = (c + magic) - magic  // integral, so the arithmetic below is exact
        let a: SIMD4<Float>
        switch alpha {
        case 0: a = SIMD4(repeating: r[0])
        case 1: a = SIMD4(repeating: r[1])
        case 2: a = SIMD4(repeating: r[2])
        default: a = SIMD4(repeating: r[3])
        }
        var excess = a - r  // min(r, a) = a - max(a - r, 0)
        excess = excess.replacing(with: 0, where: excess .< 0)
        return (a - excess) + magic
    }
}
