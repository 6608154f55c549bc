/// One decode's plan, worked out by ``OutputGeometry/plan(for:)`` from the header before any pixel memory is
/// allocated: the output size and the part of the source it shows.
///
/// Everything is expressed in the *stored* orientation (the way the codec delivers rows); the orientation
/// transform is applied to the small result afterwards.
package struct DecodePlan: Sendable, Hashable {
    /// Output size in the stored orientation.
    package var outputWidth: Int
    package var outputHeight: Int
    /// The part of the full-resolution stored image that maps onto the output.
    package var sourceRect: SourceRect
    /// Source size as stored.
    var sourceWidth: Int
    var sourceHeight: Int

    init(outputWidth: Int, outputHeight: Int, sourceRect: SourceRect, sourceWidth: Int, sourceHeight: Int) {
        (self.outputWidth, self.outputHeight) = (outputWidth, outputHeight)
        self.sourceRect = sourceRect
        (self.sourceWidth, self.sourceHeight) = (sourceWidth, sourceHeight)
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
    package func shrinkDenominator(from denominators: [Int], margin: Double) -> Int {
        for d in denominators.sorted(by: >) where d > 1 {
            let w = sourceRect.width / Double(d)
            let h = sourceRect.height / Double(d)
            if w >= Double(outputWidth) * margin && h >= Double(outputHeight) * margin { return d }
        }
        return 1
    }

    /// The 8, 4 or 2 (else 1) a decoder that can shrink by powers of two on load uses: JPEG's DCT scaling, the HDR
    /// decoders' block averages. Keeps the cropped source at least ``DecodeOptions/shrinkOnLoadMargin`` × the output.
    package func shrinkOnLoadDenominator(_ options: DecodeOptions) -> Int {
        shrinkDenominator(from: [8, 4, 2], margin: max(options.shrinkOnLoadMargin, 1))
    }

    /// Bytes of the output bitmap in `format`.
    package func outputBytes(_ format: PixelFormat) -> Int {
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
