import CDarkroomTIFF
import Foundation

extension TIFFDecoder {
    /// How a contiguous TIFF row is laid out, and its conversion to premultiplied BGRA (or C, M, Y, K bytes).
    /// Nil from ``init(_:)`` for layouts left to libtiff's RGBA interface.
    struct RowLayout {
        enum Kind { case gray, palette, rgb, cmyk, lab }
        let kind: Kind
        let bits: Int
        let samples: Int
        let colorSamples: Int
        /// 0 none, 1 associated (premultiplied), 2 unassociated.
        let alpha: Int
        let isFloat: Bool
        /// Signed integer samples: negative values are black, positive ones read as unsigned samples of the same
        /// width (as libvips casts them for display; no range is stated in the file).
        let isSigned: Bool
        let whiteIsZero: Bool

        var hasAlpha: Bool { alpha != 0 && kind != .cmyk }

        init?(_ image: dr_tiff_image) {
            guard image.planar_config == 1 else { return nil }
            let format = Int(image.sample_format)
            bits = Int(image.bits_per_sample)
            samples = Int(image.samples_per_pixel)
            isFloat = format == 3
            isSigned = format == 2 && (bits == 8 || bits == 16 || bits == 32)
            whiteIsZero = image.photometric == 0
            guard (format == 1 && ((1...16).contains(bits) || bits == 32)) || isSigned || (isFloat && bits == 32) else {
                return nil
            }
            switch image.photometric {
            case 0, 1: (kind, colorSamples) = (.gray, 1)
            case 2 where bits >= 8: (kind, colorSamples) = (.rgb, 3)
            case _ where isSigned: return nil
            case 3 where !isFloat && bits <= 8: (kind, colorSamples) = (.palette, 1)
            case 5 where image.ink_set == 1 && !isFloat && bits >= 8: (kind, colorSamples) = (.cmyk, 4)
            case 8 where bits == 8 || bits == 16: (kind, colorSamples) = (.lab, 3)
            default: return nil
            }
            guard samples >= colorSamples else { return nil }
            alpha = samples > colorSamples ? Int(image.alpha) : 0
        }

        /// One stored row to premultiplied BGRA (CMYK: the four samples as they are).
        func convert(
            _ source: UnsafePointer<UInt8>, _ out: UnsafeMutablePointer<UInt8>, width: Int, palette: [UInt32]
        ) {
            if bits == 8 && !isFloat && !isSigned && convert8(source, out, width: width) { return }
            let raw = UnsafeRawPointer(source)
            for x in 0..<width {
                let first = x * samples
                if kind == .palette {
                    let index = Int(integer(raw, first))
                    let entry = index < palette.count ? palette[index] : 0xFF00_0000
                    out[4 * x] = UInt8(truncatingIfNeeded: entry)
                    out[4 * x + 1] = UInt8(truncatingIfNeeded: entry >> 8)
                    out[4 * x + 2] = UInt8(truncatingIfNeeded: entry >> 16)
                    out[4 * x + 3] = 255
                    continue
                }
                if kind == .cmyk {
                    for c in 0..<4 { out[4 * x + c] = sample(raw, first + c) }
                    continue
                }
                let a: UInt8 = alpha != 0 ? sample(raw, first + colorSamples) : 255
                var bgr: (UInt8, UInt8, UInt8)
                if kind == .lab {
                    bgr = lab(raw, first)
                } else if kind == .gray {
                    var v = sample(raw, first)
                    if whiteIsZero { v = 255 - v }
                    bgr = (v, v, v)
                } else {
                    bgr = (sample(raw, first + 2), sample(raw, first + 1), sample(raw, first))
                }
                if alpha == 2 {
                    bgr = (
                        PixelConversion.premultiply(bgr.0, a), PixelConversion.premultiply(bgr.1, a),
                        PixelConversion.premultiply(bgr.2, a)
                    )
                } else if alpha == 1 {
                    bgr = (min(bgr.0, a), min(bgr.1, a), min(bgr.2, a))
                }
                (out[4 * x], out[4 * x + 1], out[4 * x + 2], out[4 * x + 3]) = (bgr.0, bgr.1, bgr.2, a)
            }
        }

        /// The common 8-bit layouts (gray, RGB, RGBA) without a call per sample; false for the others.
        private func convert8(_ source: UnsafePointer<UInt8>, _ out: UnsafeMutablePointer<UInt8>, width: Int) -> Bool {
            switch (kind, alpha) {
            case (.gray, 0):
                let flip: UInt8 = whiteIsZero ? 255 : 0
                for x in 0..<width {
                    let v = source[x * samples] ^ flip
                    (out[4 * x], out[4 * x + 1], out[4 * x + 2], out[4 * x + 3]) = (v, v, v, 255)
                }
            case (.rgb, 0):
                for x in 0..<width {
                    let p = source + x * samples
                    (out[4 * x], out[4 * x + 1], out[4 * x + 2], out[4 * x + 3]) = (p[2], p[1], p[0], 255)
                }
            case (.rgb, 2):
                for x in 0..<width {
                    let p = source + x * samples
                    let a = p[3]
                    out[4 * x] = PixelConversion.premultiply(p[2], a)
                    out[4 * x + 1] = PixelConversion.premultiply(p[1], a)
                    out[4 * x + 2] = PixelConversion.premultiply(p[0], a)
                    out[4 * x + 3] = a
                }
            default:
                return false
            }
            return true
        }

        /// Sample `index` of the row as stored: 8, 16 and 32 bits in host order (libtiff swaps them), other depths
        /// packed big-endian from the high bit.
        private func integer(_ raw: UnsafeRawPointer, _ index: Int) -> UInt32 {
            switch bits {
            case 8: return UInt32(raw.load(fromByteOffset: index, as: UInt8.self))
            case 16: return UInt32(raw.loadUnaligned(fromByteOffset: 2 * index, as: UInt16.self))
            case 32: return raw.loadUnaligned(fromByteOffset: 4 * index, as: UInt32.self)
            default:
                let bit = index * bits
                let last = (bit + bits - 1) >> 3  // the byte holding the sample's lowest bit
                var word: UInt32 = 0
                for i in (bit >> 3)...last { word = word << 8 | UInt32(raw.load(fromByteOffset: i, as: UInt8.self)) }
                return word >> UInt32(8 * (last + 1) - bit - bits) & ((1 << UInt32(bits)) - 1)
            }
        }

        /// CIE L*a*b* (D50, as TIFF stores it: L unsigned, a and b signed) to sRGB through XYZ, Bradford-adapted
        /// to D65.
        private func lab(_ raw: UnsafeRawPointer, _ first: Int) -> (UInt8, UInt8, UInt8) {
            let l: Double
            let a: Double
            let b: Double
            if bits == 8 {
                l = Double(raw.load(fromByteOffset: first, as: UInt8.self)) * 100 / 255
                a = Double(raw.load(fromByteOffset: first + 1, as: Int8.self))
                b = Double(raw.load(fromByteOffset: first + 2, as: Int8.self))
            } else {
                l = Double(raw.loadUnaligned(fromByteOffset: 2 * first, as: UInt16.self)) * 100 / 65535
                a = Double(raw.loadUnaligned(fromByteOffset: 2 * first + 2, as: Int16.self)) / 256
                b = Double(raw.loadUnaligned(fromByteOffset: 2 * first + 4, as: Int16.self)) / 256
            }
            func f(_ t: Double) -> Double { t > 6.0 / 29 ? t * t * t : 3 * (6.0 / 29) * (6.0 / 29) * (t - 4.0 / 29) }
            let fy = (l + 16) / 116
            let x = 0.9642 * f(fy + a / 500)
            let y = f(fy)
            let z = 0.8249 * f(fy - b / 200)
            // D50 XYZ → linear sRGB (Bradford adaptation folded in)
            let r = 3.1339 * x - 1.6169 * y - 0.4906 * z
            let g = -0.9788 * x + 1.9161 * y + 0.0335 * z
            let bl = 0.0719 * x - 0.2290 * y + 1.4052 * z
            func encode(_ v: Double) -> UInt8 {
                UInt8((SRGBTransfer.fromLinear(max(0, min(1, v))) * 255).rounded())
            }
            return (encode(bl), encode(g), encode(r))
        }

        /// Sample `index` scaled to 8 bits (floats from their nominal 0…1).
        private func sample(_ raw: UnsafeRawPointer, _ index: Int) -> UInt8 {
            if isFloat {
                let v = raw.loadUnaligned(fromByteOffset: 4 * index, as: Float.self)
                return v.isNaN ? 0 : UInt8(max(0, min(255, (v * 255).rounded())))
            }
            var v = integer(raw, index)
            if isSigned && v >> UInt32(bits - 1) & 1 == 1 { v = 0 }
            switch bits {
            case 8: return UInt8(v)
            case 16: return UInt8((v * 255 + 32767) / 65535)
            case 32: return UInt8((UInt64(v) * 255 + 0x7FFF_FFFF) / 0xFFFF_FFFF)
            default: return UInt8(v * 255 / ((1 << UInt32(bits)) - 1))
            }
        }
    }
}
