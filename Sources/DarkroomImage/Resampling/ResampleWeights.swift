/// The precomputed weights of one resampling axis: for every output index a first input index and a
/// contiguous run of normalized `Float` weights, stored at a fixed stride (a multiple of 4, 16-byte aligned)
/// and zero-padded to a multiple of 4 taps, so hot loops run unrolled by 4 without a remainder.
///
/// Built once per decode (cost: O(outputCount × taps) kernel evaluations in `Double`, and
/// `outputCount × tapStride × 4` bytes of counted scratch); read-only afterwards. Input indices are in the
/// axis's (possibly box-reduced) input space; ``starts`` are relative to ``origin``.
final class ResampleWeights {
    /// Number of output samples.
    let outputCount: Int
    /// The first input index any output reads.
    let origin: Int
    /// One past the last input index any output reads.
    let end: Int
    /// The largest number of (unpadded) taps of any output.
    let maxTaps: Int
    /// Weights per output in ``weights`` (a multiple of 4, ≥ ``maxTaps``).
    let tapStride: Int
    /// First input index of output `i`, relative to ``origin``.
    let starts: ScratchBuffer<Int32>
    /// Taps of output `i` (exact).
    let counts: ScratchBuffer<Int32>
    /// Taps of output `i` rounded up to a multiple of 4 (the extra weights are zero).
    let paddedCounts: ScratchBuffer<Int32>
    /// `outputCount × tapStride` weights; each output's weights sum to 1.
    let weights: ScratchBuffer<Float>

    /// Computes the weights mapping `inputLength` input samples starting at `inputOrigin` (fractional, in
    /// input pixels) onto `outputSize` samples, like Pillow's `precompute_coeffs`: output `i` is centered at
    /// `inputOrigin + (i + 0.5) × scale`, the kernel widens by `max(1, scale)`, taps are clamped to
    /// `0..<inputSize` and renormalized; negligible end taps are trimmed.
    init(
        inputSize: Int, inputOrigin: Double, inputLength: Double, outputSize: Int,
        filter: ResamplingFilter
    ) throws(DarkroomImageError) {
        let scale = inputLength / Double(outputSize)
        let filterScale = max(1.0, scale)
        let support = FilterKernel.support(filter) * filterScale
        let inverseFilterScale = 1.0 / filterScale
        let window = Int(support.rounded(.up)) * 2 + 2

        // Scratch for the Double weights, one window per output (freed before returning).
        let values = UnsafeMutablePointer<Double>.allocate(capacity: outputSize * window)
        let startList = UnsafeMutablePointer<Int>.allocate(capacity: outputSize)
        let countList = UnsafeMutablePointer<Int>.allocate(capacity: outputSize)
        defer {
            values.deallocate()
            startList.deallocate()
            countList.deallocate()
        }
        var low = Int.max
        var high = Int.min
        var widest = 1

        for i in 0..<outputSize {
            let center = inputOrigin + (Double(i) + 0.5) * scale
            var first = max(Int((center - support + 0.5).rounded(.down)), 0)
            var last = min(Int((center + support + 0.5).rounded(.down)), inputSize)  // exclusive
            first = min(first, inputSize - 1)
            last = min(max(last, first + 1), first + window)
            let row = values + i * window
            if filter == .box {
                // Area average: each input pixel [k, k+1) weighs by its overlap with the output pixel's
                // footprint, so fractional ratios average exactly (Pillow's box only tests pixel centers).
                let lo = center - 0.5 * filterScale
                let hi = center + 0.5 * filterScale
                for k in 0..<(last - first) {
                    let p = Double(first + k)
                    row[k] = max(0, min(p + 1, hi) - max(p, lo))
                }
            } else {
                FilterKernel.fill(
                    filter, first: (Double(first) - center + 0.5) * inverseFilterScale,
                    step: inverseFilterScale, count: last - first, into: row)
            }
            var total = 0.0
            for k in 0..<(last - first) { total += row[k] }
            if total == 0 {
                // Degenerate window (cannot happen for sane geometry): take the nearest pixel.
                first = min(max(Int(center.rounded(.down)), 0), inputSize - 1)
                last = first + 1
                row[0] = 1
                total = 1
            }
            // Normalize, then trim end taps too small to change an 8-bit result.
            var lo = 0
            var hi = last - first
            while hi - lo > 1, abs(row[lo] / total) < 1e-6 { lo += 1 }
            while hi - lo > 1, abs(row[hi - 1] / total) < 1e-6 { hi -= 1 }
            var kept = 0.0
            for k in lo..<hi { kept += row[k] }
            if kept == 0 { kept = total }
            for k in 0..<(hi - lo) { row[k] = row[lo + k] / kept }
            startList[i] = first + lo
            countList[i] = hi - lo
            low = min(low, first + lo)
            high = max(high, first + hi)
            widest = max(widest, hi - lo)
        }

        outputCount = outputSize
        origin = low
        end = high
        maxTaps = widest
        tapStride = (widest + 3) & ~3
        starts = try ScratchBuffer(count: outputSize)
        counts = try ScratchBuffer(count: outputSize)
        paddedCounts = try ScratchBuffer(count: outputSize)
        weights = try ScratchBuffer(count: outputSize * tapStride)  // zeroed: padding taps weigh 0
        for i in 0..<outputSize {
            starts.pointer[i] = Int32(startList[i] - low)
            counts.pointer[i] = Int32(countList[i])
            paddedCounts.pointer[i] = Int32((countList[i] + 3) & ~3)
            let row = weights.pointer + i * tapStride
            for k in 0..<countList[i] { row[k] = Float(values[i * window + k]) }
        }
    }

    /// The exclusive end (relative to ``origin``) of output `i`'s taps.
    @inline(__always)
    func relativeEnd(_ i: Int) -> Int { Int(starts.pointer[i]) + Int(counts.pointer[i]) }
}

/// How one axis is resampled: an optional integer box pre-reduction by ``factor`` (Pillow's `reducing_gap`
/// of 2, its `thumbnail()` default: `factor = ⌊ratio / 2⌋` once the ratio reaches 4, so the filter pass always
/// keeps a ratio ≥ 2), then a filter pass described by ``weights`` in reduced coordinates. An integer ratio
/// prefers a factor that divides it, so box blocks line up with output pixels (an exact area average).
///
/// Reduced sample `r` averages source samples `r·factor ..< min((r+1)·factor, sourceSize)` (the last block may
/// be partial and averages only what exists). Cost: one ``ResampleWeights``.
struct AxisPlan {
    /// The box reduction factor (1: none). Capped at 256 so 16-bit column sums cannot overflow.
    let factor: Int
    /// Samples of the reduced axis: `⌈sourceSize / factor⌉`.
    let reducedSize: Int
    /// The filter pass from reduced samples to output samples.
    let weights: ResampleWeights
    /// Samples of the source axis.
    let sourceSize: Int
    /// The ratio the filter pass keeps at least, once a pre-reduction applies.
    static let reducingGap = 2.0

    init(
        sourceSize: Int, rectOrigin: Double, rectLength: Double, outputSize: Int,
        filter: ResamplingFilter
    ) throws(DarkroomImageError) {
        let ratio = rectLength / Double(outputSize)
        var k = ratio >= 2 * Self.reducingGap ? min(Int(ratio / Self.reducingGap), 256) : 1
        let whole = ratio.rounded()
        if k > 1, abs(ratio - whole) < 1e-9, Int(whole) % k != 0,
            let divisor = stride(from: k, through: max(2, k / 2), by: -1).first(where: { Int(whole) % $0 == 0 })
        {
            k = divisor
        }
        self.sourceSize = sourceSize
        factor = max(1, min(k, sourceSize))
        reducedSize = (sourceSize + factor - 1) / factor
        let scale = 1.0 / Double(factor)
        weights = try ResampleWeights(
            inputSize: reducedSize, inputOrigin: rectOrigin * scale, inputLength: rectLength * scale,
            outputSize: outputSize, filter: filter)
    }

    /// Source samples the filter pass needs: whole reduction blocks covering the reduced window.
    var sourceRange: Range<Int> {
        (weights.origin * factor)..<min(weights.end * factor, sourceSize)
    }
}
