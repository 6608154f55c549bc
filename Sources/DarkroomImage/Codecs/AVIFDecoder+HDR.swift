import CAVIF

extension AVIFDecoder {
    /// What an image's colour says of HDR: its CICP PQ or HLG, or, when it has an ICC profile (which takes
    /// precedence over CICP), the PQ or HLG signal the profile describes (``ICCHDRSignal``, read for 10- and 12-bit
    /// colour images only); nil for SDR. The one reading the decode follows: a probe that says tone-mapped is decoded
    /// by ``decodeHDR``.
    static func hdrDetails(_ image: avifImage, lightLevel: (maxCLL: Int, maxFALL: Int)?, limits: DecodeLimits)
        -> HDRDetails?
    {
        if image.icc.size > 0, image.depth > 8, image.yuvFormat != AVIF_PIXEL_FORMAT_YUV400,
            image.icc.size <= limits.maxColorProfileBytes, let data = image.icc.data,
            let signal = ICCHDRSignal.cicp(UnsafeRawBufferPointer(start: data, count: image.icc.size))
        {
            return HDRDetails(
                primaries: signal.primaries, transfer: signal.transfer, hasICC: false, lightLevel: lightLevel)
        }
        // CICP's PQ or HLG, not tone-mapped when an SDR profile takes precedence
        return HDRDetails(
            primaries: Int(image.colorPrimaries), transfer: Int(image.transferCharacteristics),
            hasICC: image.icc.size > 0, lightLevel: lightLevel)
    }

    /// Decodes a PQ or HLG image to SDR sRGB at the plan's size, through an ``HDRReducedImage`` at the strongest
    /// shrink denominator (8, 4 or 2) that keeps the shrink-on-load margin, as JPEG's DCT scaling. An opaque image
    /// without a clean aperture is reduced from its planes; others through libavif's 16-bit RGB conversion, 16 rows
    /// at a time.
    func decodeHDR(
        _ container: Container, hdr: HDRDetails, probe: ImageProbe, plan: DecodePlan, options: DecodeOptions,
        allocate: BitmapAllocator
    ) throws(DarkroomImageError) -> CodecOutput {
        let full = container.image
        // The signal as the probe read it (CICP, or an ICC profile's), the YCbCr coding as the file states it
        let cicp = EmbeddedColor.CICP(
            primaries: hdr.primaries, transfer: hdr.cicp.transfer, matrix: Int(full.matrixCoefficients),
            fullRange: full.yuvRange == AVIF_RANGE_FULL)
        return try HDRReducedImage.decode(
            sourceWidth: probe.width, sourceHeight: probe.height, isOpaque: !probe.hasAlpha, signal: cicp, plan: plan,
            options: options, allocate: allocate, what: "AVIF"
        ) { reduced, rows throws(DarkroomImageError) in
            try reduce(
                container, hasAlpha: probe.hasAlpha, rows: rows, width: probe.width, height: probe.height,
                into: reduced)
        }
    }

    /// The whole of a PQ or HLG image reduced by `d` in linear light for an HDR output (``HDRLightImage``, rolled
    /// off to `target`'s peak), or nil when the probe says it is not one the tone mapper reads (SDR, an SDR ICC
    /// profile, primaries not covered).
    /// - Throws: ``DarkroomImageError`` `.limitExceeded` past ``DecodeLimits/maxDecodedBytes``, or from libavif.
    func reduceHDRLight(
        _ bytes: UnsafeRawBufferPointer, probe: ImageProbe, d: Int, target: HDRLightTarget, options: DecodeOptions
    ) throws(DarkroomImageError) -> (light: HDRLightImage, primaries: Int)? {
        let limits = options.limits
        let container = try Container(bytes, limits: limits)
        guard let hdr = probe.hdr, hdr.toneMapped,
            let transfer = HDRTransfer.toneMapped(cicp: hdr.cicp.transfer, primaries: hdr.primaries)
        else { return nil }
        let planeBytes = Self.planeBytes(
            width: Int(container.image.width), height: Int(container.image.height), hasAlpha: probe.hasAlpha,
            bitDepth: probe.bitDepth, isGrayscale: probe.isGrayscale)
        guard planeBytes <= limits.maxDecodedBytes else {
            throw DarkroomImageError(
                .limitExceeded,
                "decoding a \(probe.width)×\(probe.height) AVIF needs \(planeBytes) bytes of planes, over maxDecodedBytes (\(limits.maxDecodedBytes))"
            )
        }
        let meter = PixelMemory.allocated(planeBytes)
        defer { PixelMemory.released(planeBytes, meter: meter) }
        var remaining = limits  // the reduced light beside the decoder's planes
        remaining.maxDecodedBytes -= planeBytes
        guard
            let light = try HDRLightImage(
                sourceWidth: probe.width, sourceHeight: probe.height, d: d, transfer: transfer,
                primaries: hdr.primaries, target: target, limits: remaining, what: "AVIF")
        else { return nil }
        try Self.check(avifDecoderNextImage(container.decoder), container.decoder, "decoding")
        let frame = container.image
        guard probe.width == container.cleanAperture?.width ?? Int(frame.width),
            probe.height == container.cleanAperture?.height ?? Int(frame.height)
        else { throw DarkroomImageError(.corrupt, "the AVIF container changed between the probe and the decode") }
        try reduce(
            container, hasAlpha: probe.hasAlpha, rows: 0..<probe.height, width: probe.width, height: probe.height,
            into: light)
        return (light, hdr.primaries)
    }

    /// Reduces source rows `needed` of the decoded frame into `reduced`: an opaque image without a clean aperture
    /// from its planes, others through libavif's 16-bit RGB conversion.
    private func reduce(
        _ container: Container, hasAlpha: Bool, rows needed: Range<Int>, width: Int, height: Int,
        into reduced: some HDRBlockReducer
    ) throws(DarkroomImageError) {
        let full = container.image
        let aperture = container.cleanAperture
        if let coefficients = YUVCoefficients(full), aperture == nil, !hasAlpha {
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
                shiftY: sy, coefficients: coefficients, rows: needed)
        } else {
            try reduceRGB(container, rows: needed, aperture: aperture, width: width, height: height, into: reduced)
        }
    }

    /// Reduces through libavif's conversion to 16-bit RGBA (premultiplied), 16 rows at a time: for images with
    /// alpha or a clean aperture, and matrices ``YUVCoefficients`` does not cover.
    private func reduceRGB(
        _ container: Container, rows needed: Range<Int>, aperture: CleanAperture?, width: Int, height: Int,
        into reduced: some HDRBlockReducer
    ) throws(DarkroomImageError) {
        let full = container.image
        let left = aperture?.x ?? 0
        let top = aperture?.y ?? 0
        let codedWidth = Int(full.width)
        let codedHeight = Int(full.height)
        let stripStride = codedWidth * 4
        let strip = try ScratchBuffer<UInt16>(count: stripStride * Self.stripRows, zeroed: false)
        let codedNeeded = (needed.lowerBound + top)..<(needed.upperBound + top)
        var y = codedNeeded.lowerBound & ~1
        let chromaShift = full.yuvFormat == AVIF_PIXEL_FORMAT_YUV420 ? 1 : 0
        while y < codedNeeded.upperBound {
            let rows = min(Self.stripRows, codedHeight - y)
            var view = Self.rows(of: full, from: y, count: rows, chromaShift: chromaShift)
            try Self.convert(
                &view, format: AVIF_RGB_FORMAT_RGBA, depth: 16, into: strip.pointer, rowBytes: stripStride * 2,
                container.decoder)
            for i in 0..<rows where codedNeeded.contains(y + i) {
                reduced.addRGBA16(strip.pointer + i * stripStride + left * 4, sourceRow: y + i - top)
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
