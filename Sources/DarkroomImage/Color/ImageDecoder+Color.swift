/// What the colour step made of a codec's output.
struct ColorOutcome {
    var bitmap: Bitmap
    var profile: ColorProfile?
    var converted = false
    var problem: String?
}

extension ImageDecoder {
    /// How much a transform may magnify input steps before a JPEG is shrunk on load only to twice the output:
    /// Display P3 stays under it (left alone), Adobe RGB and ProPhoto exceed it (their agreement with Pillow +
    /// ImageCms either way is in docs/PERFORMANCE.md, "Colour").
    static let wideGamutAmplification = 4.0

    /// For a JPEG with an embedded profile converted to sRGB: reads the colour description before decoding and,
    /// when its transform magnifies errors (``wideGamutAmplification``), raises the shrink-on-load margin to 2.
    /// Returns the reading so it is not read twice; nil for everything else (read after decoding, if needed).
    static func readColorEarly(
        _ bytes: UnsafeRawBufferPointer, probe: ImageProbe,
        options: inout DecodeOptions
    ) -> ColorReading? {
        guard probe.format == .jpeg, probe.hasICCProfile, !probe.isCMYK, !probe.isGrayscale,
            options.colorSpace == .sRGB
        else { return nil }
        let reading = EmbeddedColor.readJPEG(bytes, maxBytes: options.limits.maxColorProfileBytes)
        if let color = reading.color,
            case .transform(let transform) = ColorTransformCache.shared.conversion(for: color, layout: .bgra),
            transform.amplification >= wideGamutAmplification
        {
            options.shrinkOnLoadMargin = max(options.shrinkOnLoadMargin, 2)
        }
        return reading
    }

    /// Applies ``DecodeOptions/colorSpace`` to a codec's output, which is already at the output size: the cost of
    /// a conversion scales with the thumbnail, not the source. RGB and gray bitmaps convert in place; CMYK
    /// converts into a new BGRA bitmap from `allocate`, through its profile or, without one, the plain
    /// device-CMYK formula browsers use for profile-less CMYK. An unusable description never fails the decode:
    /// the pixels are left as they are (treated as sRGB) and the reason is returned.
    static func manageColor(
        _ output: CodecOutput, bytes: UnsafeRawBufferPointer, probe: ImageProbe,
        options: DecodeOptions, allocate: BitmapAllocator
    ) throws(DarkroomImageError) -> ColorOutcome {
        let bitmap = output.bitmap
        guard
            probe.hasICCProfile || output.isCMYK || output.colorReading != nil || probe.format == .png
                || probe.format == .heic || probe.format == .avif
        else {
            return ColorOutcome(bitmap: bitmap)
        }
        let reading = output.colorReading ?? EmbeddedColor.read(bytes, format: probe.format, limits: options.limits)
        if output.isCMYK {
            return try convertCMYK(bitmap, reading: reading, allocate: allocate)
        }
        guard let color = reading.color else { return ColorOutcome(bitmap: bitmap, problem: reading.problem) }
        if reading.convertedByCodec { return ColorOutcome(bitmap: bitmap, converted: true) }
        // A colour source decoded to gray (asked for Gray8) was converted to luma by the codec: nothing to manage.
        let layout: ColorLayout
        switch bitmap.format {
        case .gray8 where probe.isGrayscale: layout = .gray
        case .bgra8Premultiplied where !probe.isGrayscale: layout = bitmap.isOpaque ? .bgra : .bgraPremultiplied
        default: return ColorOutcome(bitmap: bitmap)
        }
        if options.colorSpace == .original {
            guard case .icc(let data) = color else { return ColorOutcome(bitmap: bitmap) }
            return ColorOutcome(bitmap: bitmap, profile: ColorProfile(data: data))
        }
        switch ColorTransformCache.shared.conversion(for: color, layout: layout) {
        case .identity:
            return ColorOutcome(bitmap: bitmap)
        case .unusable(let reason):
            return ColorOutcome(bitmap: bitmap, problem: reason)
        case .transform(let transform):
            transform.convertInPlace(bitmap)
            return ColorOutcome(bitmap: bitmap, converted: true)
        }
    }

    private static func convertCMYK(
        _ cmyk: Bitmap, reading: ColorReading,
        allocate: BitmapAllocator
    ) throws(DarkroomImageError) -> ColorOutcome {
        let out = try Bitmap.allocate(cmyk.width, cmyk.height, .bgra8Premultiplied, true, using: allocate)
        var problem = reading.problem
        var transform: ColorTransform?
        if let color = reading.color {
            switch ColorTransformCache.shared.conversion(for: color, layout: .cmyk(inverted: reading.adobeInverted)) {
            case .transform(let t): transform = t
            case .identity: break
            case .unusable(let reason): problem = reason
            }
        }
        for y in 0..<cmyk.height {
            let source = cmyk.row(y).assumingMemoryBound(to: UInt8.self)
            let destination = out.row(y).assumingMemoryBound(to: UInt8.self)
            if let transform {
                transform.convert(source, destination, count: cmyk.width)
                // lcms2 writes no alpha from a source without one: the output is opaque.
                for x in 0..<cmyk.width { destination[4 * x + 3] = 255 }
            } else {
                JPEGDecoder.convertCMYK(source, destination, width: cmyk.width, inverted: reading.adobeInverted)
            }
        }
        return ColorOutcome(bitmap: out, converted: transform != nil, problem: problem)
    }
}
