/// Resamples linear light held whole in memory, three `Float` channels a pixel: the HDR outputs' last shrink, from
/// a block-averaged reduction (at most a few times the output on each side) to the output size, in light so that
/// highlights keep their energy. The same weights as the 8-bit path (``ResampleWeights``), applied in two passes.
///
/// Cost: per output pixel `taps` multiply-adds a channel on each axis; memory, the output and one intermediate of
/// output width by the source rows read, in floats.
enum LightResampler {
    /// `pixels` (`width × height`, row by row) resampled from `sourceRect` onto `outputWidth × outputHeight` with
    /// `filter`. Values are clamped at 0: a filter's negative lobes never make negative light.
    static func resample(
        _ pixels: [Float], width: Int, height: Int, sourceRect rect: SourceRect, outputWidth: Int,
        outputHeight: Int, filter: ResamplingFilter
    ) throws(DarkroomImageError) -> [Float] {
        precondition(pixels.count == width * height * 3 && outputWidth > 0 && outputHeight > 0)
        let horizontal = try ResampleWeights(
            inputSize: width, inputOrigin: rect.x, inputLength: rect.width, outputSize: outputWidth, filter: filter)
        let vertical = try ResampleWeights(
            inputSize: height, inputOrigin: rect.y, inputLength: rect.height, outputSize: outputHeight,
            filter: filter)
        let rowFloats = outputWidth * 3
        var across = [Float](repeating: 0, count: rowFloats * (vertical.end - vertical.origin))
        var out = [Float](repeating: 0, count: rowFloats * outputHeight)
        pixels.withUnsafeBufferPointer { source in
            across.withUnsafeMutableBufferPointer { across in
                for y in vertical.origin..<vertical.end {
                    let row = source.baseAddress! + y * width * 3
                    let target = across.baseAddress! + (y - vertical.origin) * rowFloats
                    for x in 0..<outputWidth {
                        let first = horizontal.origin + Int(horizontal.starts.pointer[x])
                        let weights = horizontal.weights.pointer + x * horizontal.tapStride
                        var sum = SIMD3<Float>()
                        for k in 0..<Int(horizontal.counts.pointer[x]) {
                            let p = row + (first + k) * 3
                            sum += weights[k] * SIMD3(p[0], p[1], p[2])
                        }
                        (target[3 * x], target[3 * x + 1], target[3 * x + 2]) = (sum.x, sum.y, sum.z)
                    }
                }
            }
        }
        across.withUnsafeBufferPointer { across in
            out.withUnsafeMutableBufferPointer { out in
                for y in 0..<outputHeight {
                    let first = Int(vertical.starts.pointer[y])
                    let weights = vertical.weights.pointer + y * vertical.tapStride
                    let target = out.baseAddress! + y * rowFloats
                    for k in 0..<Int(vertical.counts.pointer[y]) {
                        let row = across.baseAddress! + (first + k) * rowFloats
                        let w = weights[k]
                        for i in 0..<rowFloats { target[i] += w * row[i] }
                    }
                    for i in 0..<rowFloats { target[i] = max(target[i], 0) }
                }
            }
        }
        return out
    }
}
