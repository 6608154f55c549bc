import Foundation

/// ThumbHash (Evan Wallace's placeholder format): an image's look in about 25 bytes — average colour, aspect
/// ratio, alpha and a few low-frequency DCT terms of luminance and two chroma channels — for painting a blurred
/// placeholder while the real thumbnail loads.
///
/// Follows the reference encoder (`rgbaToThumbHash` in github.com/evanw/thumbhash) step for step, with its
/// rounding (JavaScript's `Math.round`), so hashes are byte-identical to it. Cost: the encoder works on at most
/// 100×100 pixels (about 10⁶ multiply-adds); ``compute(_:limits:)`` gets them from the smallest decode the codec
/// offers (a 12 MP JPEG decodes at 1/8 with the DC-only reader), so the cost is the thumbnail's, not the source's.
public enum ThumbHash {
    /// The largest side the encoder takes; larger bitmaps gain nothing and cost quadratically more.
    public static let maxSide = 100

    /// Decodes `bytes` at most ``maxSide`` pixels on a side and encodes the result.
    /// - Throws: ``DarkroomImageError`` from the decode.
    public static func compute(_ bytes: UnsafeRawBufferPointer, limits: DecodeLimits = .default)
        throws(DarkroomImageError) -> [UInt8]
    {
        let decoded = try ImageDecoder().decode(
            bytes,
            options: DecodeOptions(
                size: .maxPixelSize(maxSide), pixelFormat: .exactly(.rgba8), filter: .box, limits: limits))
        return try encode(decoded.bitmap)
    }

    /// Encodes a bitmap of at most ``maxSide`` × ``maxSide`` pixels (any encodable format; straight RGBA is read).
    /// - Throws: `.invalidArgument` for a larger bitmap.
    public static func encode(_ bitmap: Bitmap) throws(DarkroomImageError) -> [UInt8] {
        let w = bitmap.width
        let h = bitmap.height
        guard w <= maxSide, h <= maxSide else {
            throw DarkroomImageError(
                .invalidArgument, "\(w)×\(h) does not fit in \(maxSide)×\(maxSide) for a ThumbHash")
        }
        let rgba = bitmap.format == .rgba8 ? bitmap : try bitmap.converted(to: .rgba8)
        var pixels = [Double](repeating: 0, count: w * h * 4)
        for y in 0..<h {
            let row = rgba.row(y).assumingMemoryBound(to: UInt8.self)
            for i in 0..<(w * 4) { pixels[y * w * 4 + i] = Double(row[i]) }
        }
        return encode(width: w, height: h, rgba: pixels)
    }

    /// The reference algorithm over `rgba` (0–255 per channel, straight alpha, row-major).
    static func encode(width w: Int, height h: Int, rgba: [Double]) -> [UInt8] {
        func round(_ x: Double) -> Int { Int((x + 0.5).rounded(.down)) }  // JavaScript's Math.round
        let count = w * h
        // The average colour, weighted by alpha.
        var avgR = 0.0
        var avgG = 0.0
        var avgB = 0.0
        var avgA = 0.0
        for i in 0..<count {
            let alpha = rgba[4 * i + 3] / 255
            avgR += alpha / 255 * rgba[4 * i]
            avgG += alpha / 255 * rgba[4 * i + 1]
            avgB += alpha / 255 * rgba[4 * i + 2]
            avgA += alpha
        }
        if avgA > 0 {
            avgR /= avgA
            avgG /= avgA
            avgB /= avgA
        }
        let hasAlpha = avgA < Double(count)
        let lLimit = hasAlpha ? 5.0 : 7.0  // fewer luminance terms when alpha needs bits
        let longest = Double(max(w, h))
        let lx = max(1, round(lLimit * Double(w) / longest))
        let ly = max(1, round(lLimit * Double(h) / longest))
        // RGBA → luminance, yellow–blue, red–green and alpha, composited over the average colour.
        var l = [Double](repeating: 0, count: count)
        var p = l
        var q = l
        var a = l
        for i in 0..<count {
            let alpha = rgba[4 * i + 3] / 255
            let r = avgR * (1 - alpha) + alpha / 255 * rgba[4 * i]
            let g = avgG * (1 - alpha) + alpha / 255 * rgba[4 * i + 1]
            let b = avgB * (1 - alpha) + alpha / 255 * rgba[4 * i + 2]
            l[i] = (r + g + b) / 3
            p[i] = (r + g) / 2 - b
            q[i] = r - g
            a[i] = alpha
        }
        // The DCT's constant term and its varying terms normalised to 0…1 by the largest one.
        func encodeChannel(_ channel: [Double], _ nx: Int, _ ny: Int) -> (dc: Double, ac: [Double], scale: Double) {
            var dc = 0.0
            var ac: [Double] = []
            var scale = 0.0
            var fx = [Double](repeating: 0, count: w)
            for cy in 0..<ny {
                var cx = 0
                while cx * ny < nx * (ny - cy) {
                    var f = 0.0
                    for x in 0..<w { fx[x] = cos(Double.pi / Double(w) * Double(cx) * (Double(x) + 0.5)) }
                    for y in 0..<h {
                        let fy = cos(Double.pi / Double(h) * Double(cy) * (Double(y) + 0.5))
                        for x in 0..<w { f += channel[x + y * w] * fx[x] * fy }
                    }
                    f /= Double(count)
                    if cx > 0 || cy > 0 {
                        ac.append(f)
                        scale = max(scale, abs(f))
                    } else {
                        dc = f
                    }
                    cx += 1
                }
            }
            if scale > 0 { ac = ac.map { 0.5 + 0.5 / scale * $0 } }
            return (dc, ac, scale)
        }
        let lum = encodeChannel(l, max(3, lx), max(3, ly))
        let yb = encodeChannel(p, 3, 3)
        let rg = encodeChannel(q, 3, 3)
        let alpha = hasAlpha ? encodeChannel(a, 5, 5) : (dc: 0, ac: [], scale: 0)
        // The header: constants, scales, sizes and flags.
        let isLandscape = w > h
        let header24 =
            round(63 * lum.dc) | (round(31.5 + 31.5 * yb.dc) << 6) | (round(31.5 + 31.5 * rg.dc) << 12)
            | (round(31 * lum.scale) << 18) | ((hasAlpha ? 1 : 0) << 23)
        let header16 =
            (isLandscape ? ly : lx) | (round(63 * yb.scale) << 3) | (round(63 * rg.scale) << 9)
            | ((isLandscape ? 1 : 0) << 15)
        var hash: [UInt8] = [
            UInt8(header24 & 255), UInt8((header24 >> 8) & 255), UInt8((header24 >> 16) & 255),
            UInt8(header16 & 255), UInt8((header16 >> 8) & 255),
        ]
        if hasAlpha { hash.append(UInt8(truncatingIfNeeded: round(15 * alpha.dc) | (round(15 * alpha.scale) << 4))) }
        // The varying terms, four bits each.
        let start = hash.count
        var index = 0
        for terms in hasAlpha ? [lum.ac, yb.ac, rg.ac, alpha.ac] : [lum.ac, yb.ac, rg.ac] {
            for f in terms {
                let slot = start + (index >> 1)
                if slot == hash.count { hash.append(0) }
                hash[slot] |= UInt8(truncatingIfNeeded: round(15 * f) << ((index & 1) << 2))
                index += 1
            }
        }
        return hash
    }
}
