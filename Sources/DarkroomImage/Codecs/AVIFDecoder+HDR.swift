import CAVIF

extension AVIFDecoder {
    /// The HDR transfer of an image to tone-map to SDR sRGB, or nil to decode it as SDR: a CICP PQ or HLG image,
    /// without an ICC profile (which would take precedence), whose primaries ``HDRToneMapper`` knows, asked for in
    /// sRGB.
    static func hdrTransfer(_ image: avifImage, options: DecodeOptions) -> HDRTransfer? {
        guard options.colorSpace == .sRGB, image.icc.size == 0 else { return nil }
        return HDRTransfer.toneMapped(
            cicp: Int(image.transferCharacteristics), primaries: Int(image.colorPrimaries))
    }

    /// Decodes a PQ or HLG image to SDR sRGB at the plan's size, through an ``HDRReducedImage`` at the strongest
    /// shrink denominator (8, 4 or 2) that keeps the shrink-on-load margin, as JPEG's DCT scaling. An opaque image
    /// without a clean aperture is reduced from its planes; others through libavif's 16-bit RGB conversion, 16 rows
    /// at a time.
    func decodeHDR(
        _ container: Container, transfer: HDRTransfer, probe: ImageProbe, plan: DecodePlan,
        options: DecodeOptions, allocate: BitmapAllocator
    ) throws(DarkroomImageError) -> CodecOutput {
        let full = container.image
        let aperture = container.cleanAperture
        let width = probe.width
        let height = probe.height
        let d = plan.shrinkOnLoadDenominator(options)
        let reduced = try HDRReducedImage(
            sourceWidth: width, sourceHeight: height, d: d, limits: options.limits, what: "AVIF")
        let destination = try RowDestination(
            plan: plan, sourceWidth: reduced.width, sourceHeight: reduced.height, format: .bgra8Premultiplied,
            isOpaque: !probe.hasAlpha, filter: options.filter, allocate: allocate)
        let rows = destination.requiredRows.clamped(to: 0..<reduced.height)
        let needed = (rows.lowerBound * d)..<min(rows.upperBound * d, height)
        if let coefficients = YUVCoefficients(full), aperture == nil, !probe.hasAlpha {
            let (planes, strides) = withUnsafeBytes(of: full.yuvPlanes) { p in
                withUnsafeBytes(of: full.yuvRowBytes) { s in
                    (
                        p.bindMemory(to: UnsafeMutablePointer<UInt8>?.self).map { $0 },
                        s.bindMemory(to: UInt32.self).map { Int($0) }
                    )
                }
            }
            let plane = { (i: Int) in planes[i].map { YCbCrRows.Plane(base: UnsafePointer($0), stride: strides[i]) } }
            guard let y = plane(0) else { throw DarkroomImageError(.corrupt, "the AV1 frame has no luma plane") }
            let gray = full.yuvFormat == AVIF_PIXEL_FORMAT_YUV400
            let sx = full.yuvFormat == AVIF_PIXEL_FORMAT_YUV420 || full.yuvFormat == AVIF_PIXEL_FORMAT_YUV422 ? 1 : 0
            let sy = full.yuvFormat == AVIF_PIXEL_FORMAT_YUV420 ? 1 : 0
            reduced.reducePlanes(
                y: y, cb: gray ? nil : plane(1), cr: gray ? nil : plane(2), bitDepth: Int(full.depth), shiftX: sx,
                shiftY: sy, coefficients: coefficients, rows: needed, sourceWidth: width, sourceHeight: height)
        } else {
            try reduceRGB(container, rows: needed, aperture: aperture, width: width, height: height, into: reduced)
        }
        guard
            try reduced.toneMap(transfer: transfer, primaries: Int(full.colorPrimaries), rows: rows, into: destination)
        else {
            throw DarkroomImageError(.unsupportedFeature, "the HDR primaries \(full.colorPrimaries) are not supported")
        }
        let cicp = EmbeddedColor.CICP(
            primaries: Int(full.colorPrimaries), transfer: Int(full.transferCharacteristics),
            matrix: Int(full.matrixCoefficients), fullRange: full.yuvRange == AVIF_RANGE_FULL)
        var reading = ColorReading(color: .cicp(cicp))
        reading.convertedByCodec = true
        return CodecOutput(bitmap: destination.finish(), shrinkDenominator: d, colorReading: reading)
    }

    /// Reduces through libavif's conversion to 16-bit RGBA (premultiplied), 16 rows at a time: for images with
    /// alpha or a clean aperture, and matrices ``YUVCoefficients`` does not cover.
    private func reduceRGB(
        _ container: Container, rows needed: Range<Int>, aperture: CleanAperture?, width: Int, height: Int,
        into reduced: HDRReducedImage
    ) throws(DarkroomImageError) {
        let full = container.image
        let left = aperture?.x ?? 0
        let top = aperture?.y ?? 0
        let codedWidth = Int(full.width)
        let codedHeight = Int(full.height)
        let sums = try ScratchBuffer<UInt32>(count: reduced.width * 4, zeroed: true)
        let stripStride = codedWidth * 4
        let strip = try ScratchBuffer<UInt16>(count: stripStride * Self.stripRows, zeroed: false)
        let codedNeeded = (needed.lowerBound + top)..<(needed.upperBound + top)
        var y = codedNeeded.lowerBound & ~1
        let chromaShift = full.yuvFormat == AVIF_PIXEL_FORMAT_YUV420 ? 1 : 0
        var blockRows = 0
        while y < codedNeeded.upperBound {
            let rows = min(Self.stripRows, codedHeight - y)
            var view = Self.rows(of: full, from: y, count: rows, chromaShift: chromaShift)
            try Self.convert(
                &view, format: AVIF_RGB_FORMAT_RGBA, depth: 16, into: strip.pointer, rowBytes: stripStride * 2,
                container.decoder)
            for i in 0..<rows where codedNeeded.contains(y + i) {
                reduced.accumulate(strip.pointer + i * stripStride + left * 4, sourceWidth: width, into: sums.pointer)
                blockRows += 1
                let ay = y + i - top
                if blockRows == reduced.d || ay == height - 1 {
                    reduced.finishRow(ay / reduced.d, sums: sums.pointer, rows: blockRows, sourceWidth: width)
                    blockRows = 0
                }
            }
            y += rows
        }
    }

    /// A view of `count` coded rows of `image` starting at `y` (even, so 4:2:0 chroma rows line up).
    static func rows(of image: avifImage, from y: Int, count: Int, chromaShift: Int) -> avifImage {
        var view = image
        view.height = UInt32(count)
        withUnsafeMutableBytes(of: &view.yuvPlanes) { planes in
            let p = planes.bindMemory(to: UnsafeMutablePointer<UInt8>?.self)
            withUnsafeBytes(of: image.yuvRowBytes) { strides in
                let s = strides.bindMemory(to: UInt32.self)
                for i in 0..<p.count where p[i] != nil {
                    p[i] = p[i]! + (i == 0 ? y : y >> chromaShift) * Int(s[i])
                }
            }
        }
        if let alpha = image.alphaPlane { view.alphaPlane = alpha + y * Int(image.alphaRowBytes) }
        return view
    }
}
