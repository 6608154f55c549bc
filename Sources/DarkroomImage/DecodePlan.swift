/// The geometry of one decode, worked out from the header before any pixel memory is allocated.
///
/// Everything is expressed in the *stored* orientation (the way the codec delivers rows); the orientation
/// transform is applied to the small result afterwards.
struct DecodePlan: Sendable, Hashable {
    /// Output size in the stored orientation.
    var outputWidth: Int
    var outputHeight: Int
    /// The part of the full-resolution stored image that maps onto the output.
    var sourceRect: SourceRect
    /// Source size as stored.
    var sourceWidth: Int
    var sourceHeight: Int

    /// Works out the output size and crop for `probe` under `options`.
    /// - Throws: `.invalidArgument` for non-positive target sizes.
    init(probe: ImageProbe, options: DecodeOptions) throws(DarkroomImageError) {
        let transposed = options.applyOrientation && probe.orientation.swapsDimensions
        let uprightWidth = Double(transposed ? probe.height : probe.width)
        let uprightHeight = Double(transposed ? probe.width : probe.height)
        // The crop (upright pixels) is the source every size below is worked out from
        let region =
            try options.crop?.rect(width: uprightWidth, height: uprightHeight)
            ?? SourceRect(x: 0, y: 0, width: uprightWidth, height: uprightHeight)
        let ow = region.width  // oriented source size
        let oh = region.height
        // A vector document has no native resolution: it is drawn at the size asked for, larger or smaller
        let cap = options.allowUpscaling || probe.format == .svg ? Double.infinity : 1.0
        var outW: Int
        var outH: Int
        var cropW = ow
        var cropH = oh
        func scaled(_ v: Double, _ s: Double) -> Int { max(1, Int((v * s).rounded())) }
        var size = options.size
        if case .auto(let w, let h) = size {
            size = (w >= h) == (ow >= oh) ? .fill(width: w, height: h) : .fit(width: w, height: h)
        }
        switch size {
        case .original:
            outW = Int(ow)
            outH = Int(oh)
        case .maxPixelSize(let n):
            guard n > 0 else { throw DarkroomImageError(.invalidArgument, "max pixel size must be positive, got \(n)") }
            let s = min(Double(n) / max(ow, oh), cap)
            outW = scaled(ow, s)
            outH = scaled(oh, s)
            if max(outW, outH) > n { if outW >= outH { outW = n } else { outH = n } }
        case .fit(let w, let h):
            guard w > 0, h > 0 else {
                throw DarkroomImageError(.invalidArgument, "fit size must be positive, got \(w)×\(h)")
            }
            var s = min(min(Double(w) / ow, Double(h) / oh), cap)
            var grown = false
            if let minimum = options.minimumSize {
                // At least the minimum on each side it names (never past the cap); what then overflows the box is
                // cropped from the centre (imgproxy's min-width/min-height)
                let needed = min(max(Double(minimum.width ?? 0) / ow, Double(minimum.height ?? 0) / oh), cap)
                grown = needed > s
                s = max(s, needed)
            }
            outW = min(w, scaled(ow, s))
            outH = min(h, scaled(oh, s))
            if grown {
                cropW = min(ow, Double(outW) / s)
                cropH = min(oh, Double(outH) / s)
            }
        case .fill(var w, var h), .fillDown(var w, var h):
            guard w > 0, h > 0 else {
                throw DarkroomImageError(.invalidArgument, "fill size must be positive, got \(w)×\(h)")
            }
            let cover = max(Double(w) / ow, Double(h) / oh)
            if case .fillDown = size, cover > cap {
                // Too small to fill the box: the box shrinks (keeping its aspect) until the source covers it.
                w = max(1, Int((Double(w) / cover).rounded(.down)))
                h = max(1, Int((Double(h) / cover).rounded(.down)))
            }
            let s = min(max(Double(w) / ow, Double(h) / oh), cap)
            outW = min(w, scaled(ow, s))
            outH = min(h, scaled(oh, s))
            cropW = min(ow, Double(outW) / s)
            cropH = min(oh, Double(outH) / s)
        case .cover(let w, let h):
            guard w > 0, h > 0 else {
                throw DarkroomImageError(.invalidArgument, "cover size must be positive, got \(w)×\(h)")
            }
            let s = min(max(Double(w) / ow, Double(h) / oh), cap)
            outW = scaled(ow, s)
            outH = scaled(oh, s)
        case .stretch(let w, let h):
            guard w > 0, h > 0 else {
                throw DarkroomImageError(.invalidArgument, "stretch size must be positive, got \(w)×\(h)")
            }
            outW = options.allowUpscaling ? w : min(w, Int(ow))
            outH = options.allowUpscaling ? h : min(h, Int(oh))
        case .auto: preconditionFailure("auto is resolved to fill or fit above")
        }
        let upright = SourceRect(
            x: region.x + (ow - cropW) / 2, y: region.y + (oh - cropH) / 2, width: cropW, height: cropH)
        let orientation = options.applyOrientation ? probe.orientation : .up
        sourceRect = orientation.storedRect(upright, uprightWidth: uprightWidth, uprightHeight: uprightHeight)
        (outputWidth, outputHeight) = transposed ? (outH, outW) : (outW, outH)
        sourceWidth = probe.width
        sourceHeight = probe.height
    }

    /// Whether the whole source is used.
    var isFullSource: Bool {
        sourceRect.x == 0 && sourceRect.y == 0
            && sourceRect.width == Double(sourceWidth) && sourceRect.height == Double(sourceHeight)
    }

    /// The source rectangle in the coordinates of a source the codec already shrank to `width × height`.
    func sourceRect(scaledTo width: Int, _ height: Int) -> SourceRect {
        let sx = Double(width) / Double(sourceWidth)
        let sy = Double(height) / Double(sourceHeight)
        if isFullSource { return SourceRect(x: 0, y: 0, width: Double(width), height: Double(height)) }
        return SourceRect(
            x: sourceRect.x * sx, y: sourceRect.y * sy,
            width: min(sourceRect.width * sx, Double(width)), height: min(sourceRect.height * sy, Double(height)))
    }

    /// Whether a source already at `width × height` is the output as is (no resample, no crop).
    func isIdentity(width: Int, height: Int) -> Bool {
        isFullSource && width == outputWidth && height == outputHeight
    }

    /// The strongest shrink-on-load denominator among `denominators` (e.g. JPEG's 8, 4, 2) that keeps the
    /// cropped source at least `margin ×` the output on both axes; 1 when none does.
    func shrinkDenominator(from denominators: [Int], margin: Double) -> Int {
        for d in denominators.sorted(by: >) where d > 1 {
            let w = sourceRect.width / Double(d)
            let h = sourceRect.height / Double(d)
            if w >= Double(outputWidth) * margin && h >= Double(outputHeight) * margin { return d }
        }
        return 1
    }

    /// Bytes of the output bitmap in `format`.
    func outputBytes(_ format: PixelFormat) -> Int {
        Bitmap.alignedBytesPerRow(width: outputWidth, format: format) * outputHeight
    }
}

extension DecodePlan {
    /// The same output from a smaller (or larger) rendition of the source that is `width × height` (an icon
    /// entry, a camera's embedded preview, a TIFF pyramid level): the source rectangle scaled to it.
    func retargeted(sourceWidth width: Int, sourceHeight height: Int) -> DecodePlan {
        var plan = self
        let sx = Double(width) / Double(sourceWidth)
        let sy = Double(height) / Double(sourceHeight)
        plan.sourceRect = SourceRect(
            x: sourceRect.x * sx, y: sourceRect.y * sy,
            width: min(sourceRect.width * sx, Double(width)), height: min(sourceRect.height * sy, Double(height)))
        plan.sourceWidth = width
        plan.sourceHeight = height
        return plan
    }

    /// Whether a `width × height` rendition of the whole source still has at least `margin ×` the output's pixels
    /// on both axes across the part of the source the output shows.
    func isCovered(byWidth width: Int, height: Int, margin: Double) -> Bool {
        let m = max(margin, 1)
        return Double(width) * sourceRect.width / Double(sourceWidth) >= Double(outputWidth) * m - 0.5
            && Double(height) * sourceRect.height / Double(sourceHeight) >= Double(outputHeight) * m - 0.5
    }

    /// Of renditions of the whole source (sizes), the smallest that covers the output (``isCovered``), else the
    /// largest: the index into `sizes`, nil when empty.
    func bestRendition(_ sizes: [(width: Int, height: Int)], margin: Double) -> Int? {
        let covering = sizes.indices.filter {
            isCovered(byWidth: sizes[$0].width, height: sizes[$0].height, margin: margin)
        }
        if let smallest = covering.min(by: { sizes[$0].width * sizes[$0].height < sizes[$1].width * sizes[$1].height })
        {
            return smallest
        }
        return sizes.indices.max { sizes[$0].width * sizes[$0].height < sizes[$1].width * sizes[$1].height }
    }
}
