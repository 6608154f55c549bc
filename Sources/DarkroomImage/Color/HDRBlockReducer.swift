/// What the HDR decoders reduce a PQ or HLG image into, `d × d` source pixels a block: the signal for the SDR tone
/// map (``HDRReducedImage``), or light for an HDR output (``HDRLightImage``).
protocol HDRBlockReducer: AnyObject {
    /// The shrink denominator: each reduced pixel covers a `d × d` block of the source.
    var d: Int { get }
    var width: Int { get }
    var height: Int { get }
    /// Reduces source `rows` (whole blocks) of an image's Y'CbCr planes of `Sample`s; `cb` and `cr` nil for a gray
    /// (4:0:0) image, `shiftX`/`shiftY` log2 of the chroma subsampling.
    func reducePlanes<Sample: FixedWidthInteger & UnsignedInteger & SIMDScalar>(
        y: YCbCrRows.Plane, cb: YCbCrRows.Plane?, cr: YCbCrRows.Plane?, as: Sample.Type, shiftX: Int, shiftY: Int,
        coefficients: YUVCoefficients, rows: Range<Int>)
    /// Adds source row `y` of premultiplied RGBA16 pixels; rows come in order.
    func addRGBA16(_ row: UnsafePointer<UInt16>, sourceRow y: Int)
}

extension HDRBlockReducer {
    /// Premultiplies `width` straight RGBA16 pixels in place, as ``addRGBA16(_:sourceRow:)`` takes them.
    static func premultiplyRGBA16(_ row: UnsafeMutablePointer<UInt16>, width: Int) {
        for x in 0..<width {
            let a = UInt32(row[4 * x + 3])
            for c in 0..<3 { row[4 * x + c] = UInt16((UInt32(row[4 * x + c]) * a + 32767) / 65535) }
        }
    }

    /// ``reducePlanes(y:cb:cr:as:shiftX:shiftY:coefficients:rows:)`` for samples of `bitDepth` bits: 8-bit samples
    /// are bytes, deeper ones 16-bit words.
    func reducePlanes(
        y: YCbCrRows.Plane, cb: YCbCrRows.Plane?, cr: YCbCrRows.Plane?, bitDepth: Int, shiftX: Int, shiftY: Int,
        coefficients: YUVCoefficients, rows: Range<Int>
    ) {
        if bitDepth > 8 {
            reducePlanes(
                y: y, cb: cb, cr: cr, as: UInt16.self, shiftX: shiftX, shiftY: shiftY, coefficients: coefficients,
                rows: rows)
        } else {
            reducePlanes(
                y: y, cb: cb, cr: cr, as: UInt8.self, shiftX: shiftX, shiftY: shiftY, coefficients: coefficients,
                rows: rows)
        }
    }
}
