/// Converts rows of decoded Y, Cb, Cr (and alpha) planes to premultiplied BGRA8, one row at a time, so a decoder
/// never holds a full-size RGB copy: used for HEIC, whose decoder hands out its planes.
///
/// Fixed-point tables per sample value (as libjpeg converts YCbCr): a few table reads and adds per pixel. Chroma
/// is upsampled by nearest neighbour (the resample that follows averages far more than bilinear upsampling would
/// add); samples above 8 bits are `UInt16` and come out as 8 bits. Matrices: BT.601, BT.709 and BT.2020
/// (non-constant luminance), full or limited range.
struct YCbCrRows {
    struct Plane {
        let base: UnsafePointer<UInt8>
        let stride: Int
    }

    let y: Plane, cb: Plane, cr: Plane
    let alpha: Plane?
    /// log2 of the chroma subsampling: (1, 1) for 4:2:0, (1, 0) for 4:2:2, (0, 0) for 4:4:4.
    let shiftX: Int, shiftY: Int
    let bitDepth: Int
    /// Q16 contributions by sample value: luma, Cr → R, Cb → G, Cr → G, Cb → B; and 8-bit alpha.
    private let luma: [Int32], crToR: [Int32], cbToG: [Int32], crToG: [Int32], cbToB: [Int32]
    private let alphaLevels: [UInt8]

    /// Nil for a matrix it does not know (the caller then asks the decoder for RGB).
    init?(
        y: Plane, cb: Plane, cr: Plane, alpha: Plane?, shiftX: Int, shiftY: Int, bitDepth: Int, matrix: Int,
        fullRange: Bool
    ) {
        guard let (kr, kb) = YUVCoefficients.weights(matrix: matrix), (8...16).contains(bitDepth) else { return nil }
        self.y = y
        self.cb = cb
        self.cr = cr
        self.alpha = alpha
        self.shiftX = shiftX
        self.shiftY = shiftY
        self.bitDepth = bitDepth
        let levels = 1 << bitDepth
        let maxValue = Double(levels - 1)
        let unit = Double(1 << (bitDepth - 8))
        let half = Double(1 << (bitDepth - 1))
        let (yOffset, yScale, cScale) =
            fullRange
            ? (0, 255 / maxValue, 255 / maxValue)
            : (16 * unit, 255 / (219 * unit), 255 / (224 * unit))
        let kg = 1 - kr - kb
        let q16 = 65536.0
        func table(_ f: (Double) -> Double) -> [Int32] { (0..<levels).map { Int32((f(Double($0)) * q16).rounded()) } }
        luma = table { ($0 - yOffset) * yScale + 0.5 }  // + 0.5: round on the final shift
        crToR = table { 2 * (1 - kr) * ($0 - half) * cScale }
        cbToG = table { -2 * kb * (1 - kb) / kg * ($0 - half) * cScale }
        crToG = table { -2 * kr * (1 - kr) / kg * ($0 - half) * cScale }
        cbToB = table { 2 * (1 - kb) * ($0 - half) * cScale }
        alphaLevels = (0..<levels).map { UInt8((Double($0) * 255 / maxValue).rounded()) }
    }

    /// Writes row `row` as premultiplied BGRA8 into `destination` (`width` pixels).
    func convert(row: Int, width: Int, into destination: UnsafeMutablePointer<UInt8>) {
        let cy = row >> shiftY
        if bitDepth == 8 {
            convert(UInt8.self, row: row, chromaRow: cy, width: width, into: destination)
        } else {
            convert(UInt16.self, row: row, chromaRow: cy, width: width, into: destination)
        }
    }

    @inline(__always)
    private func convert<Sample: FixedWidthInteger & UnsignedInteger>(
        _: Sample.Type, row: Int, chromaRow: Int, width: Int,
        into d: UnsafeMutablePointer<UInt8>
    ) {
        let mask = (1 << bitDepth) - 1
        let ys = UnsafeRawPointer(y.base + row * y.stride).assumingMemoryBound(to: Sample.self)
        let us = UnsafeRawPointer(cb.base + chromaRow * cb.stride).assumingMemoryBound(to: Sample.self)
        let vs = UnsafeRawPointer(cr.base + chromaRow * cr.stride).assumingMemoryBound(to: Sample.self)
        let alphas = alpha.map { UnsafeRawPointer($0.base + row * $0.stride).assumingMemoryBound(to: Sample.self) }
        let sx = shiftX
        luma.withUnsafeBufferPointer { lt in
            crToR.withUnsafeBufferPointer { rt in
                cbToG.withUnsafeBufferPointer { gu in
                    crToG.withUnsafeBufferPointer { gv in
                        cbToB.withUnsafeBufferPointer { bt in
                            alphaLevels.withUnsafeBufferPointer { at in
                                @inline(__always) func clamp(_ v: Int32) -> UInt8 {
                                    UInt8(truncatingIfNeeded: min(max(v >> 16, 0), 255))
                                }
                                for x in 0..<width {
                                    let l = lt[Int(ys[x]) & mask]
                                    let u = Int(us[x >> sx]) & mask
                                    let v = Int(vs[x >> sx]) & mask
                                    var r = clamp(l + rt[v])
                                    var g = clamp(l + gu[u] + gv[v])
                                    var b = clamp(l + bt[u])
                                    var a: UInt8 = 255
                                    if let alphas {
                                        a = at[Int(alphas[x]) & mask]
                                        let k = UInt32(a)
                                        r = UInt8((UInt32(r) * k + 127) / 255)
                                        g = UInt8((UInt32(g) * k + 127) / 255)
                                        b = UInt8((UInt32(b) * k + 127) / 255)
                                    }
                                    d[4 * x] = b
                                    d[4 * x + 1] = g
                                    d[4 * x + 2] = r
                                    d[4 * x + 3] = a
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}
