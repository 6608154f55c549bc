import Foundation

extension ThumbHash {
    /// The placeholder a hash describes: a blurred image of at most 32 pixels on its longer side, in the hash's
    /// aspect ratio, as premultiplied BGRA (draw it scaled up with a linear filter).
    ///
    /// Follows the reference decoder (`thumbHashToRGBA` in github.com/evanw/thumbhash) step for step, its samples
    /// truncated as its `Uint8Array` stores them. Cost: about 32 × 32 × 30 multiply-adds (a few microseconds).
    /// - Throws: `.corrupt` for a hash shorter than its header says.
    public static func decode(_ hash: [UInt8]) throws(DarkroomImageError) -> Bitmap {
        guard hash.count >= 5 else { throw DarkroomImageError(.corrupt, "a ThumbHash has at least 5 bytes") }
        let header24 = Int(hash[0]) | Int(hash[1]) << 8 | Int(hash[2]) << 16
        let header16 = Int(hash[3]) | Int(hash[4]) << 8
        let lDC = Double(header24 & 63) / 63
        let pDC = Double((header24 >> 6) & 63) / 31.5 - 1
        let qDC = Double((header24 >> 12) & 63) / 31.5 - 1
        let lScale = Double((header24 >> 18) & 31) / 31
        let hasAlpha = header24 >> 23 != 0
        let pScale = Double((header16 >> 3) & 63) / 63
        let qScale = Double((header16 >> 9) & 63) / 63
        let isLandscape = header16 >> 15 != 0
        let lx = max(3, isLandscape ? (hasAlpha ? 5 : 7) : header16 & 7)
        let ly = max(3, isLandscape ? header16 & 7 : (hasAlpha ? 5 : 7))
        guard !hasAlpha || hash.count >= 6 else {
            throw DarkroomImageError(.corrupt, "a ThumbHash with alpha has at least 6 bytes")
        }
        let aDC = hasAlpha ? Double(hash[5] & 15) / 15 : 1
        let aScale = hasAlpha ? Double(hash[5] >> 4) / 15 : 0

        let acStart = hasAlpha ? 6 : 5
        var acIndex = 0
        var truncated = false
        func channel(_ nx: Int, _ ny: Int, _ scale: Double) -> [Double] {
            var ac: [Double] = []
            for cy in 0..<ny {
                var cx = cy == 0 ? 1 : 0
                while cx * ny < nx * (ny - cy) {
                    let at = acStart + (acIndex >> 1)
                    guard at < hash.count else {
                        truncated = true
                        return ac
                    }
                    let nibble = (Int(hash[at]) >> ((acIndex & 1) << 2)) & 15
                    ac.append((Double(nibble) / 7.5 - 1) * scale)
                    acIndex += 1
                    cx += 1
                }
            }
            return ac
        }
        let lAC = channel(lx, ly, lScale)
        let pAC = channel(3, 3, pScale * 1.25)
        let qAC = channel(3, 3, qScale * 1.25)
        let aAC = hasAlpha ? channel(5, 5, aScale) : []
        guard !truncated else { throw DarkroomImageError(.corrupt, "the ThumbHash ends inside its AC terms") }

        let aspect = approximateAspectRatio(hash) ?? 1
        let w = Int(aspect > 1 ? 32 : (32 * aspect).rounded())
        let h = Int(aspect > 1 ? (32 / aspect).rounded() : 32)
        let bitmap = try Bitmap(width: max(1, w), height: max(1, h), format: .rgba8, isOpaque: !hasAlpha)
        let nx = max(lx, hasAlpha ? 5 : 3)
        let ny = max(ly, hasAlpha ? 5 : 3)
        var fx = [Double](repeating: 0, count: nx)
        var fy = [Double](repeating: 0, count: ny)
        for y in 0..<bitmap.height {
            let row = bitmap.row(y).assumingMemoryBound(to: UInt8.self)
            for cy in 0..<ny { fy[cy] = cos(Double.pi / Double(bitmap.height) * (Double(y) + 0.5) * Double(cy)) }
            for x in 0..<bitmap.width {
                var l = lDC
                var p = pDC
                var q = qDC
                var a = aDC
                for cx in 0..<nx { fx[cx] = cos(Double.pi / Double(bitmap.width) * (Double(x) + 0.5) * Double(cx)) }
                var j = 0
                for cy in 0..<ly {
                    var cx = cy == 0 ? 1 : 0
                    let fy2 = fy[cy] * 2
                    while cx * ly < lx * (ly - cy) {
                        l += lAC[j] * fx[cx] * fy2
                        cx += 1
                        j += 1
                    }
                }
                j = 0
                for cy in 0..<3 {
                    let fy2 = fy[cy] * 2
                    for cx in (cy == 0 ? 1 : 0)..<(3 - cy) {
                        let f = fx[cx] * fy2
                        p += pAC[j] * f
                        q += qAC[j] * f
                        j += 1
                    }
                }
                if hasAlpha {
                    j = 0
                    for cy in 0..<5 {
                        let fy2 = fy[cy] * 2
                        for cx in (cy == 0 ? 1 : 0)..<(5 - cy) {
                            a += aAC[j] * fx[cx] * fy2
                            j += 1
                        }
                    }
                }
                let b = l - 2.0 / 3.0 * p
                let r = (3 * l - b + q) / 2
                let g = r - q
                func sample(_ v: Double) -> UInt8 { UInt8(max(0, 255 * min(1, v))) }
                row[4 * x] = sample(r)
                row[4 * x + 1] = sample(g)
                row[4 * x + 2] = sample(b)
                row[4 * x + 3] = hasAlpha ? sample(a) : 255
            }
        }
        return try bitmap.converted(to: .bgra8Premultiplied)
    }

    /// The aspect ratio (width / height) a hash records, approximately; nil for fewer than 5 bytes.
    public static func approximateAspectRatio(_ hash: [UInt8]) -> Double? {
        guard hash.count >= 5 else { return nil }
        let header = Int(hash[3])
        let hasAlpha = hash[2] & 0x80 != 0
        let isLandscape = hash[4] & 0x80 != 0
        let lx = isLandscape ? (hasAlpha ? 5 : 7) : header & 7
        let ly = isLandscape ? header & 7 : (hasAlpha ? 5 : 7)
        guard lx > 0, ly > 0 else { return 1 }
        return Double(lx) / Double(ly)
    }
}
