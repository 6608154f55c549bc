import DarkroomImage

/// Where the interesting part of an image is, in the spirit of libvips's `attention` strategy: a map of edges
/// (the Laplacian of luma), skin tones and saturated colour, blurred, whose brightest point the crop centres on.
///
/// Runs on the already-resized image (a thumbnail's decode), reduced to at most ``mapSide`` pixels a side, so its
/// cost is O(thumbnail pixels), never the source's.
package enum Saliency {
    /// The longest side of the map.
    static let mapSide = 96

    /// The top-left corner of the `cropWidth × cropHeight` crop of `bitmap` centred on its most salient point,
    /// kept inside the image.
    package static func cropOrigin(_ bitmap: Bitmap, cropWidth: Int, cropHeight: Int) throws -> (x: Int, y: Int) {
        let spareX = bitmap.width - cropWidth
        let spareY = bitmap.height - cropHeight
        guard spareX > 0 || spareY > 0 else { return (0, 0) }
        let (map, width, height, step) = try interest(bitmap)
        let blurred = blur(map, width: width, height: height, radius: max(1, min(width, height) / 10))
        var best = 0
        var least = blurred[0]
        for i in blurred.indices {
            if blurred[i] > blurred[best] { best = i }
            least = min(least, blurred[i])
        }
        // Nothing stands out (a flat or evenly textured image): the centre, as the other gravities default to
        guard blurred[best] - least > 1e-3 else { return (max(spareX, 0) / 2, max(spareY, 0) / 2) }
        let centreX = (Double(best % width) + 0.5) * step
        let centreY = (Double(best / width) + 0.5) * step
        let x = Int((centreX - Double(cropWidth) / 2).rounded())
        let y = Int((centreY - Double(cropHeight) / 2).rounded())
        return (min(max(x, 0), max(spareX, 0)), min(max(y, 0), max(spareY, 0)))
    }

    /// The interest map: the image averaged down to blocks of `step` pixels, then per block the absolute
    /// Laplacian of luma, plus twice the skin likeness, plus the saturation where the block is neither black
    /// nor white.
    static func interest(_ bitmap: Bitmap) throws -> (map: [Float], width: Int, height: Int, step: Double) {
        let input = bitmap.format == .bgra8Premultiplied ? bitmap : try bitmap.converted(to: .bgra8Premultiplied)
        let step = max(1, (max(input.width, input.height) + mapSide - 1) / mapSide)
        let width = max(1, input.width / step)
        let height = max(1, input.height / step)
        var red = [Float](repeating: 0, count: width * height)
        var green = red
        var blue = red
        for y in 0..<height * step {
            let row = input.row(y).assumingMemoryBound(to: UInt8.self)
            let base = (y / step) * width
            for x in 0..<width * step {
                let i = base + x / step
                blue[i] += Float(row[4 * x])
                green[i] += Float(row[4 * x + 1])
                red[i] += Float(row[4 * x + 2])
            }
        }
        let scale = 1 / Float(step * step * 255)
        var luma = [Float](repeating: 0, count: width * height)
        var map = luma
        // The direction of skin in RGB (smartcrop.js's (0.78, 0.57, 0.44)), normalised
        let skin: (Float, Float, Float) = (0.7204, 0.5264, 0.4063)
        for i in luma.indices {
            let (r, g, b) = (red[i] * scale, green[i] * scale, blue[i] * scale)
            let l = 0.299 * r + 0.587 * g + 0.114 * b
            luma[i] = l
            let high = max(r, g, b)
            let low = min(r, g, b)
            let saturation = l > 0.05 && l < 0.95 && high > 0 ? (high - low) / high : 0
            let length = (r * r + g * g + b * b).squareRoot()
            var skinness: Float = 0
            if length > 0, l > 0.2 {
                let (dr, dg, db) = (r / length - skin.0, g / length - skin.1, b / length - skin.2)
                skinness = max(0, 1 - (dr * dr + dg * dg + db * db).squareRoot() / 0.15)
            }
            map[i] = 2 * skinness + 0.5 * saturation * saturation
        }
        for y in 0..<height {
            for x in 0..<width {
                let i = y * width + x
                let l = luma[i]
                let left = x > 0 ? luma[i - 1] : l
                let right = x < width - 1 ? luma[i + 1] : l
                let up = y > 0 ? luma[i - width] : l
                let down = y < height - 1 ? luma[i + width] : l
                map[i] += 4 * abs(4 * l - left - right - up - down)
            }
        }
        return (map, width, height, Double(step))
    }

    /// Two passes of a separable box blur of `radius` (close to a Gaussian of σ ≈ radius).
    static func blur(_ map: [Float], width: Int, height: Int, radius: Int) -> [Float] {
        var a = map
        var b = map
        for _ in 0..<2 {
            for y in 0..<height {
                for x in 0..<width {
                    var sum: Float = 0
                    var n: Float = 0
                    for dx in -radius...radius where x + dx >= 0 && x + dx < width {
                        sum += a[y * width + x + dx]
                        n += 1
                    }
                    b[y * width + x] = sum / n
                }
            }
            for y in 0..<height {
                for x in 0..<width {
                    var sum: Float = 0
                    var n: Float = 0
                    for dy in -radius...radius where y + dy >= 0 && y + dy < height {
                        sum += b[(y + dy) * width + x]
                        n += 1
                    }
                    a[y * width + x] = sum / n
                }
            }
        }
        return a
    }
}
