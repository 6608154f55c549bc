extension Bitmap {
    /// Returns the bitmap transformed so that an image stored with `orientation` shows upright.
    ///
    /// Cost: one new bitmap of the same cost and one pass over the pixels; returns `self` for ``ExifOrientation/up``.
    public func applying(_ orientation: ExifOrientation) throws(DarkroomImageError) -> Bitmap {
        try applying(orientation, allocate: Bitmap.allocateOnHeap)
    }

    /// ``applying(_:)`` into memory from `allocate` (called once unless the orientation is ``ExifOrientation/up``).
    func applying(_ orientation: ExifOrientation, allocate: BitmapAllocator) throws(DarkroomImageError) -> Bitmap {
        if orientation == .up { return self }
        let w = orientation.swapsDimensions ? height : width
        let h = orientation.swapsDimensions ? width : height
        let out = try Bitmap.allocate(w, h, format, isOpaque, using: allocate)
        switch format.bytesPerPixel {
        case 4: transform(into: out, orientation, UInt32.self)
        case 2: transform(into: out, orientation, UInt16.self)
        default: transform(into: out, orientation, UInt8.self)
        }
        return out
    }

    /// Writes every destination pixel from its source pixel. For destination (dx, dy) the stored source pixel
    /// is found by inverting the EXIF transform.
    private func transform<P: FixedWidthInteger>(into out: Bitmap, _ o: ExifOrientation, _: P.Type) {
        let sw = width
        let sh = height
        let srcStride = bytesPerRow / MemoryLayout<P>.stride
        let src = UnsafePointer(storage.baseAddress.assumingMemoryBound(to: P.self))
        for dy in 0..<out.height {
            let dst = out.row(dy).assumingMemoryBound(to: P.self)
            // Source position of (0, dy) and the step in source memory per +1 in dx.
            let (sx0, sy0, stepX, stepY): (Int, Int, Int, Int)
            switch o {
            case .up: (sx0, sy0, stepX, stepY) = (0, dy, 1, 0)
            case .upMirrored: (sx0, sy0, stepX, stepY) = (sw - 1, dy, -1, 0)
            case .down: (sx0, sy0, stepX, stepY) = (sw - 1, sh - 1 - dy, -1, 0)
            case .downMirrored: (sx0, sy0, stepX, stepY) = (0, sh - 1 - dy, 1, 0)
            case .leftMirrored: (sx0, sy0, stepX, stepY) = (dy, 0, 0, 1)
            case .right: (sx0, sy0, stepX, stepY) = (dy, sh - 1, 0, -1)
            case .rightMirrored: (sx0, sy0, stepX, stepY) = (sw - 1 - dy, sh - 1, 0, -1)
            case .left: (sx0, sy0, stepX, stepY) = (sw - 1 - dy, 0, 0, 1)
            }
            var p = sy0 * srcStride + sx0
            let step = stepY * srcStride + stepX
            for dx in 0..<out.width {
                dst[dx] = src[p]
                p += step
            }
        }
    }
}
