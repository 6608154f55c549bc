extension Bitmap {
    /// Returns the bitmap transformed so that an image stored with `orientation` shows upright.
    ///
    /// Cost: one new bitmap of the same cost and one pass over the pixels; returns `self` for ``ExifOrientation/up``.
    public func applying(_ orientation: ExifOrientation) throws(DarkroomImageError) -> Bitmap {
        try applying(orientation, allocate: Bitmap.allocateOnHeap)
    }

    /// ``applying(_:)`` into memory from `allocate` (called once unless the orientation is ``ExifOrientation/up``).
    package func applying(_ orientation: ExifOrientation, allocate: BitmapAllocator) throws(DarkroomImageError)
        -> Bitmap
    {
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
            let (sx0, sy0, stepX, stepY) = o.sourceWalk(row: dy, sourceWidth: sw, sourceHeight: sh)
            var p = sy0 * srcStride + sx0
            let step = stepY * srcStride + stepX
            for dx in 0..<out.width {
                dst[dx] = src[p]
                p += step
            }
        }
    }
}

extension ExifOrientation {
    /// For upright row `dy` of an image stored `sourceWidth × sourceHeight`: the stored pixel its first pixel
    /// comes from, and the step through the stored image for each pixel further along the row (the EXIF transform
    /// inverted).
    @inline(__always)
    func sourceWalk(row dy: Int, sourceWidth sw: Int, sourceHeight sh: Int) -> (
        x: Int, y: Int, stepX: Int, stepY: Int
    ) {
        switch self {
        case .up: (0, dy, 1, 0)
        case .upMirrored: (sw - 1, dy, -1, 0)
        case .down: (sw - 1, sh - 1 - dy, -1, 0)
        case .downMirrored: (0, sh - 1 - dy, 1, 0)
        case .leftMirrored: (dy, 0, 0, 1)
        case .right: (dy, sh - 1, 0, -1)
        case .rightMirrored: (sw - 1 - dy, sh - 1, 0, -1)
        case .left: (sw - 1 - dy, 0, 0, 1)
        }
    }

    /// `pixels` (`width × height`, `channels` values a pixel, row by row) turned upright: the upright image's
    /// values, and its width and height (swapped for a quarter turn). Cost: one copy.
    func applied<Value>(to pixels: [Value], width: Int, height: Int, channels: Int) -> (
        pixels: [Value], width: Int, height: Int
    ) {
        if self == .up { return (pixels, width, height) }
        let (w, h) = swapsDimensions ? (height, width) : (width, height)
        var out = pixels
        for dy in 0..<h {
            let walk = sourceWalk(row: dy, sourceWidth: width, sourceHeight: height)
            var p = (walk.y * width + walk.x) * channels
            let step = (walk.stepY * width + walk.stepX) * channels
            var o = dy * w * channels
            for _ in 0..<w {
                for c in 0..<channels { out[o + c] = pixels[p + c] }
                p += step
                o += channels
            }
        }
        return (out, w, h)
    }
}
