/// Row converters between the two working formats decoders produce (BGRA premultiplied, Gray8) and every
/// ``PixelFormat``. Each is one pass over a row, no allocation.
enum PixelConversion {
    /// Rec. 601 luma in 8.8 fixed point: 0.299 R + 0.587 G + 0.114 B.
    @inline(__always)
    static func luma(b: UInt8, g: UInt8, r: UInt8) -> UInt8 {
        UInt8(truncatingIfNeeded: (Int(r) * 77 + Int(g) * 150 + Int(b) * 29 + 128) >> 8)
    }

    /// Converts `width` pixels from `from` to `to`. Supported sources: ``PixelFormat/bgra8Premultiplied``,
    /// ``PixelFormat/gray8`` and ``PixelFormat/rgba8``; every destination.
    static func convertRow(
        _ src: UnsafeRawPointer, from: PixelFormat, _ dst: UnsafeMutableRawPointer,
        to: PixelFormat, width: Int
    ) {
        if from == to {
            dst.copyMemory(from: src, byteCount: width * from.bytesPerPixel)
            return
        }
        let s = src.assumingMemoryBound(to: UInt8.self)
        let d = dst.assumingMemoryBound(to: UInt8.self)
        switch (from, to) {
        case (.gray8, .bgra8Premultiplied), (.gray8, .rgba8):
            for x in 0..<width {
                let g = s[x]
                d[4 * x] = g
                d[4 * x + 1] = g
                d[4 * x + 2] = g
                d[4 * x + 3] = 255
            }
        case (.gray8, .rgb565):
            let d16 = dst.assumingMemoryBound(to: UInt16.self)
            for x in 0..<width { d16[x] = rgb565(r: s[x], g: s[x], b: s[x]) }
        case (.gray8, .alpha8):
            for x in 0..<width { d[x] = 255 }
        case (.bgra8Premultiplied, .rgba8):
            for x in 0..<width {
                let a = s[4 * x + 3]
                d[4 * x] = unpremultiply(s[4 * x + 2], a)
                d[4 * x + 1] = unpremultiply(s[4 * x + 1], a)
                d[4 * x + 2] = unpremultiply(s[4 * x], a)
                d[4 * x + 3] = a
            }
        case (.rgba8, .bgra8Premultiplied):
            for x in 0..<width {
                let a = s[4 * x + 3]
                d[4 * x] = premultiply(s[4 * x + 2], a)
                d[4 * x + 1] = premultiply(s[4 * x + 1], a)
                d[4 * x + 2] = premultiply(s[4 * x], a)
                d[4 * x + 3] = a
            }
        case (.bgra8Premultiplied, .gray8):
            // Premultiplied color: the gray of the image composited over black.
            for x in 0..<width { d[x] = luma(b: s[4 * x], g: s[4 * x + 1], r: s[4 * x + 2]) }
        case (.rgba8, .gray8):
            for x in 0..<width {
                let a = s[4 * x + 3]
                d[x] = luma(
                    b: premultiply(s[4 * x + 2], a), g: premultiply(s[4 * x + 1], a), r: premultiply(s[4 * x], a))
            }
        case (.bgra8Premultiplied, .rgb565):
            let d16 = dst.assumingMemoryBound(to: UInt16.self)
            for x in 0..<width { d16[x] = rgb565(r: s[4 * x + 2], g: s[4 * x + 1], b: s[4 * x]) }
        case (.rgba8, .rgb565):
            let d16 = dst.assumingMemoryBound(to: UInt16.self)
            for x in 0..<width {
                let a = s[4 * x + 3]
                d16[x] = rgb565(
                    r: premultiply(s[4 * x], a), g: premultiply(s[4 * x + 1], a), b: premultiply(s[4 * x + 2], a))
            }
        case (.bgra8Premultiplied, .alpha8), (.rgba8, .alpha8):
            for x in 0..<width { d[x] = s[4 * x + 3] }
        default:
            preconditionFailure("no row conversion from \(from) to \(to)")
        }
    }

    @inline(__always)
    static func premultiply(_ c: UInt8, _ a: UInt8) -> UInt8 {
        let t = Int(c) * Int(a) + 128
        return UInt8(truncatingIfNeeded: (t + (t >> 8)) >> 8)
    }

    @inline(__always)
    static func unpremultiply(_ c: UInt8, _ a: UInt8) -> UInt8 {
        if a == 255 { return c }
        if a == 0 { return 0 }
        return UInt8(min(255, (Int(c) * 255 + Int(a) / 2) / Int(a)))
    }

    @inline(__always)
    static func rgb565(r: UInt8, g: UInt8, b: UInt8) -> UInt16 {
        (UInt16(r >> 3) << 11) | (UInt16(g >> 2) << 5) | UInt16(b >> 3)
    }
}

extension Bitmap {
    /// Returns the pixels converted to `format`. Cost: a new bitmap and one pass; returns `self` when the
    /// format already matches. Supported sources: BGRA8 premultiplied, RGBA8 and Gray8.
    /// - Throws: `.invalidArgument` for a source format that cannot be converted, `.outOfMemory`.
    public func converted(to format: PixelFormat) throws(DarkroomImageError) -> Bitmap {
        try converted(to: format, allocate: Bitmap.allocateOnHeap)
    }

    /// ``converted(to:)`` into memory from `allocate` (called once unless the format already matches).
    func converted(to format: PixelFormat, allocate: BitmapAllocator) throws(DarkroomImageError) -> Bitmap {
        if format == self.format { return self }
        guard [.bgra8Premultiplied, .rgba8, .gray8].contains(self.format) else {
            throw DarkroomImageError(.invalidArgument, "cannot convert from \(self.format.rawValue)")
        }
        let opaque = isOpaque || !format.hasAlpha
        let out = try Bitmap.allocate(width, height, format, opaque, using: allocate)
        for y in 0..<height {
            PixelConversion.convertRow(row(y), from: self.format, out.row(y), to: format, width: width)
        }
        return out
    }
}
