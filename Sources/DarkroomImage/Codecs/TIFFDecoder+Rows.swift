import CDarkroomTIFF

extension TIFFDecoder {
    /// How a contiguous TIFF row is laid out, and its conversion to premultiplied BGRA (or C, M, Y, K bytes).
    /// Nil from ``init(_:)`` for layouts left to libtiff's RGBA interface.
    struct RowLayout {
        enum Kind { case gray, palette, rgb, cmyk }
        let kind: Kind
        let bits: Int
        let samples: Int
        let colorSamples: Int
        /// 0 none, 1 associated (premultiplied), 2 unassociated.
        let alpha: Int
        let isFloat: Bool
        let whiteIsZero: Bool

        var hasAlpha: Bool { alpha != 0 && kind != .cmyk }

        init?(_ image: dr_tiff_image) {
            guard image.planar_config == 1 else { return nil }
            let format = Int(image.sample_format)
            bits = Int(image.bits_per_sample)
            samples = Int(image.samples_per_pixel)
            isFloat = format == 3
            whiteIsZero = image.photometric == 0
            guard (format == 1 && [1, 2, 4, 8, 16].contains(bits)) || (isFloat && bits == 32) else { return nil }
            switch image.photometric {
            case 0, 1: (kind, colorSamples) = (.gray, 1)
            case 2 where bits >= 8: (kind, colorSamples) = (.rgb, 3)
            case 3 where !isFloat && bits <= 8: (kind, colorSamples) = (.palette, 1)
            case 5 where image.ink_set == 1 && !isFloat && bits >= 8: (kind, colorSamples) = (.cmyk, 4)
            default: return nil
            }
            guard samples >= colorSamples else { return nil }
            alpha = samples > colorSamples ? Int(image.alpha) : 0
        }

        /// One stored row to premultiplied BGRA (CMYK: the four samples as they are).
        func convert(
            _ source: UnsafePointer<UInt8>, _ out: UnsafeMutablePointer<UInt8>, width: Int, palette: [UInt32]
        ) {
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
                if kind == .gray {
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

        /// Sample `index` of the row as stored (bits below 8 packed from the high bit).
        private func integer(_ raw: UnsafeRawPointer, _ index: Int) -> UInt32 {
            switch bits {
            case 8: return UInt32(raw.load(fromByteOffset: index, as: UInt8.self))
            case 16: return UInt32(raw.loadUnaligned(fromByteOffset: 2 * index, as: UInt16.self))
            default:
                let bit = index * bits
                let byte = raw.load(fromByteOffset: bit >> 3, as: UInt8.self)
                return UInt32(byte >> UInt8(8 - bits - (bit & 7))) & ((1 << UInt32(bits)) - 1)
            }
        }

        /// Sample `index` scaled to 8 bits (floats from their nominal 0…1).
        private func sample(_ raw: UnsafeRawPointer, _ index: Int) -> UInt8 {
            if isFloat {
                let v = raw.loadUnaligned(fromByteOffset: 4 * index, as: Float.self)
                return v.isNaN ? 0 : UInt8(max(0, min(255, (v * 255).rounded())))
            }
            let v = integer(raw, index)
            switch bits {
            case 8: return UInt8(v)
            case 16: return UInt8((v * 255 + 32767) / 65535)
            default: return UInt8(v * 255 / ((1 << UInt32(bits)) - 1))
            }
        }
    }
}
