import DarkroomImage

/// How a scaled frame looks to a thumbnailer choosing a poster frame: its luma's mean and spread. A frame is blank
/// when it is one flat colour (a spread under 5 of 255: a fade, a title card's background, a lens cap) or nearly
/// black (a mean under 16 with a spread under 10); ffmpegthumbnailer skips the same frames by their histogram.
/// Cost: one pass over the thumbnail's pixels.
struct FrameLook {
    /// Mean luma, 0…255.
    let mean: Double
    /// Standard deviation of the luma, 0…255: how much the frame shows.
    let detail: Double

    init(_ bitmap: Bitmap) {
        var sum = 0.0
        var squares = 0.0
        let bytes = bitmap.format.bytesPerPixel
        for y in 0..<bitmap.height {
            let row = bitmap.row(y).assumingMemoryBound(to: UInt8.self)
            for x in 0..<bitmap.width {
                let p = row + x * bytes
                // BT.709 weights on the (sRGB) bytes; gray is luma already
                let luma =
                    bytes == 1 ? Double(p[0]) : 0.0722 * Double(p[0]) + 0.7152 * Double(p[1]) + 0.2126 * Double(p[2])
                sum += luma
                squares += luma * luma
            }
        }
        let count = Double(max(1, bitmap.width * bitmap.height))
        mean = sum / count
        detail = max(0, squares / count - mean * mean).squareRoot()
    }

    /// Whether a thumbnailer should look for another frame.
    var isBlank: Bool { detail < 5 || (mean < 16 && detail < 10) }
}
