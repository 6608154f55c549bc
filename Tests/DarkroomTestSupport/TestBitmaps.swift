import DarkroomImage
import Foundation

/// Generated images for tests: deterministic, smooth enough to encode well, distinct per seed.
package enum TestBitmaps {
    /// A BGRA gradient; with `alpha`, alpha falls off left to right (premultiplied).
    package static func gradient(_ width: Int, _ height: Int, alpha: Bool) throws -> Bitmap {
        let b = try Bitmap(width: width, height: height, format: .bgra8Premultiplied, isOpaque: !alpha)
        for y in 0..<height {
            let row = b.row(y).assumingMemoryBound(to: UInt8.self)
            for x in 0..<width {
                let a = alpha ? 255 - x * 255 / width : 255
                row[x * 4] = UInt8(x * 255 / width * a / 255)
                row[x * 4 + 1] = UInt8(y * 255 / height * a / 255)
                row[x * 4 + 2] = UInt8((x + y) % 256 * a / 255)
                row[x * 4 + 3] = UInt8(a)
            }
        }
        return b
    }

    /// An opaque BGRA diagonal gradient; distinct seeds give distinct pixels (and so distinct encoded bytes).
    package static func seeded(width: Int, height: Int, seed: Int) throws -> Bitmap {
        let b = try Bitmap(width: width, height: height, format: .bgra8Premultiplied, isOpaque: true)
        for y in 0..<height {
            let row = b.row(y).assumingMemoryBound(to: UInt8.self)
            for x in 0..<width {
                row[x * 4] = UInt8((x * 255 / max(1, width - 1) + seed * 37) & 255)
                row[x * 4 + 1] = UInt8((y * 255 / max(1, height - 1)) & 255)
                row[x * 4 + 2] = UInt8((x + y + seed) & 255)
                row[x * 4 + 3] = 255
            }
        }
        return b
    }

    /// Smooth gradients without a wrap-around edge, opaque BGRA or Gray8: a resampler's output can be compared
    /// with a reference at a high PSNR.
    package static func synthetic(width: Int, height: Int, gray: Bool = false) throws -> Bitmap {
        let b = try Bitmap(width: width, height: height, format: gray ? .gray8 : .bgra8Premultiplied)
        for y in 0..<height {
            let r = b.row(y).assumingMemoryBound(to: UInt8.self)
            for x in 0..<width {
                let v = UInt8(x * 191 / max(width - 1, 1) + y * 64 / max(height, 1))
                if gray {
                    r[x] = v
                } else {
                    r[4 * x] = v
                    r[4 * x + 1] = UInt8(y * 255 / max(height - 1, 1))
                    r[4 * x + 2] = 255 - v
                    r[4 * x + 3] = 255
                }
            }
        }
        return b
    }
}
