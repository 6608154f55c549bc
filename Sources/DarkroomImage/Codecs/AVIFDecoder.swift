import CAVIF

/// AVIF (AV1 in HEIF) through libavif (dav1d or libaom underneath).
///
/// AV1 has no scaled decode, so the full frame's YUV planes are decoded (counted against
/// ``DecodeLimits/maxDecodedBytes`` before decoding), then converted to BGRA 16 rows at a time (nearest chroma
/// upsampling: the resample that follows averages far more than it could add) and streamed through the
/// resampler: no full-size RGB buffer. 10/12-bit images come out as 8-bit; alpha is premultiplied. `clap` crops the
/// coded rows and columns as they stream (``CleanAperture``; the probe reports the aperture's size), then
/// `irot`/`imir` become an ``ExifOrientation`` applied to the small result — the order the HEIF specification
/// gives. EXIF orientation itself is ignored, as the specification requires.
package struct AVIFDecoder: CodecDecoder {
    let format = ImageFileFormat.avif
    static let stripRows = 16

    /// A parsed file. Only what `avifDecoderParse` reads (the container) until ``decodeFirst()``.
    final class Container {
        let decoder: UnsafeMutablePointer<avifDecoder>

        init(_ bytes: UnsafeRawBufferPointer, limits: DecodeLimits) throws(DarkroomImageError) {
            guard let decoder = avifDecoderCreate() else {
                throw DarkroomImageError(.outOfMemory, "could not create an AVIF decoder")
            }
            self.decoder = decoder
            decoder.pointee.maxThreads = 1
            decoder.pointee.ignoreExif = AVIF_TRUE
            decoder.pointee.ignoreXMP = AVIF_TRUE
            decoder.pointee.imageSizeLimit = UInt32(clamping: limits.maxSourcePixels)
            decoder.pointee.imageCountLimit = UInt32(clamping: limits.maxFrames)
            try AVIFDecoder.check(
                avifDecoderSetIOMemory(decoder, bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), bytes.count),
                decoder, "reading")
            try AVIFDecoder.check(avifDecoderParse(decoder), decoder, "parsing the container")
        }

        deinit { avifDecoderDestroy(decoder) }

        var image: avifImage { decoder.pointee.image.pointee }

        /// The `clap` box's rectangle of the coded image, or nil when there is none (or it is unusable).
        var cleanAperture: CleanAperture? {
            let image = self.image
            guard image.transformFlags & UInt32(AVIF_TRANSFORM_CLAP.rawValue) != 0 else { return nil }
            return CleanAperture(image.clap, codedWidth: Int(image.width), codedHeight: Int(image.height))
        }

        /// The orientation `irot` and `imir` describe (rotation first, then mirroring, as the boxes are ordered).
        var orientation: ExifOrientation {
            let image = self.image
            let flags = image.transformFlags
            var quarterTurns = flags & UInt32(AVIF_TRANSFORM_IROT.rawValue) != 0 ? Int(image.irot.angle & 3) : 0
            var flip = false
            if flags & UInt32(AVIF_TRANSFORM_IMIR.rawValue) != 0 {
                flip = true
                if image.imir.mode == 0 { quarterTurns = (quarterTurns + 2) % 4 }  // top-bottom = 180° + left-right
            }
            // (anticlockwise quarter turns, then a left-right flip) → the EXIF orientation that makes it upright.
            switch (quarterTurns, flip) {
            case (0, false): return .up
            case (0, true): return .upMirrored
            case (2, false): return .down
            case (2, true): return .downMirrored
            case (3, true): return .leftMirrored
            case (3, false): return .right
            case (1, true): return .rightMirrored
            default: return .left
            }
        }
    }

    /// Reads the container: size, orientation, alpha, depth and image count; no pixels decoded.
    static func probe(_ bytes: UnsafeRawBufferPointer, isComplete: Bool, limits: DecodeLimits) throws(ProbeStop)
        -> ImageProbe
    {
        let container: Container
        do { container = try Container(bytes, limits: limits) } catch {
            if !isComplete { throw .needMoreData(atLeast: bytes.count * 2) }  // a prefix: boxes run past it
            throw .failed(error)
        }
        let image = container.image
        let orientation = container.orientation
        let aperture = container.cleanAperture
        let width = aperture?.width ?? Int(image.width)
        let height = aperture?.height ?? Int(image.height)
        let details = HEIFDetails(
            codedWidth: Int(image.width), codedHeight: Int(image.height),
            hasTransformations: orientation != .up || aperture != nil,
            imageCount: Int(container.decoder.pointee.imageCount), thumbnailSizes: [], codec: "av1")
        var probe = ImageProbe(
            format: .avif, width: width, height: height, orientation: orientation,
            hasAlpha: container.decoder.pointee.alphaPresent != 0,
            isGrayscale: image.yuvFormat == AVIF_PIXEL_FORMAT_YUV400,
            frameCount: max(1, Int(container.decoder.pointee.imageCount)), hasICCProfile: image.icc.size > 0,
            bitDepth: Int(image.depth), heif: details)
        probe.hdr = Self.hdrDetails(image, lightLevel: ISOBMFFBoxes.contentLightLevel(bytes), limits: limits)
        return probe
    }

    /// The `colr` box: an ICC profile, else CICP.
    static func readColor(_ bytes: UnsafeRawBufferPointer, limits: DecodeLimits) -> ColorReading {
        guard let container = try? Container(bytes, limits: limits) else { return .none }
        return readColor(container.image, limits: limits)
    }

    static func readColor(_ image: avifImage, limits: DecodeLimits) -> ColorReading {
        if image.icc.size > 0, let data = image.icc.data {
            guard image.icc.size <= limits.maxColorProfileBytes else {
                return ColorReading(
                    color: nil,
                    problem:
                        "the ICC profile of \(image.icc.size) bytes exceeds maxColorProfileBytes (\(limits.maxColorProfileBytes))"
                )
            }
            return ColorReading(color: .icc(Array(UnsafeBufferPointer(start: data, count: image.icc.size))))
        }
        let cicp = EmbeddedColor.CICP(
            primaries: Int(image.colorPrimaries), transfer: Int(image.transferCharacteristics),
            matrix: Int(image.matrixCoefficients), fullRange: image.yuvRange == AVIF_RANGE_FULL)
        return cicp.isSRGB ? ColorReading(color: nil, srgbSource: .cicp) : ColorReading(color: .cicp(cicp))
    }

    func decode(
        _ bytes: UnsafeRawBufferPointer, probe: ImageProbe, plan: DecodePlan, working: PixelFormat,
        options: DecodeOptions, allocate: BitmapAllocator
    ) throws(DarkroomImageError) -> CodecOutput {
        let container = try Container(bytes, limits: options.limits)
        // The displayed rectangle (the clean aperture, else the whole frame) within the coded frame.
        let aperture = container.cleanAperture
        let width = probe.width
        let height = probe.height
        let codedWidth = Int(container.image.width)
        let codedHeight = Int(container.image.height)
        guard width == aperture?.width ?? codedWidth, height == aperture?.height ?? codedHeight else {
            throw DarkroomImageError(.corrupt, "the AVIF container changed between the probe and the decode")
        }
        let left = aperture?.x ?? 0
        let top = aperture?.y ?? 0
        let planeBytes = Self.planeBytes(
            width: codedWidth, height: codedHeight, hasAlpha: probe.hasAlpha, bitDepth: probe.bitDepth,
            isGrayscale: probe.isGrayscale)
        guard planeBytes + plan.outputBytes(working) <= options.limits.maxDecodedBytes else {
            throw DarkroomImageError(
                .limitExceeded,
                "decoding a \(width)×\(height) AVIF needs \(planeBytes) bytes of planes, over maxDecodedBytes (\(options.limits.maxDecodedBytes))"
            )
        }
        let meter = PixelMemory.allocated(planeBytes)  // the decoder's planes, counted while they exist
        defer { PixelMemory.released(planeBytes, meter: meter) }
        try Self.check(avifDecoderNextImage(container.decoder), container.decoder, "decoding")
        var image = container.image
        guard Int(image.width) == codedWidth, Int(image.height) == codedHeight else {
            throw DarkroomImageError(
                .corrupt,
                "the AV1 frame is \(image.width)×\(image.height), the container says \(codedWidth)×\(codedHeight)")
        }
        if options.colorSpace == .sRGB, let hdr = probe.hdr, hdr.toneMapped {
            return try decodeHDR(container, hdr: hdr, probe: probe, plan: plan, options: options, allocate: allocate)
        }
        let destination = try RowDestination(
            plan: plan, sourceWidth: width, sourceHeight: height, format: .bgra8Premultiplied,
            isOpaque: !probe.hasAlpha, filter: options.filter, allocate: allocate)
        let stripStride = codedWidth * 4
        let strip = try ScratchBuffer<UInt8>(count: stripStride * Self.stripRows, zeroed: false)
        // Rows in the aperture's coordinates, and the coded rows that hold them.
        let needed = destination.requiredRows.clamped(to: 0..<height)
        let codedNeeded = (needed.lowerBound + top)..<(needed.upperBound + top)
        // Strips start on even coded rows so that 4:2:0 chroma rows line up; each is a view into the planes.
        var y = codedNeeded.lowerBound & ~1
        let chromaShift = image.yuvFormat == AVIF_PIXEL_FORMAT_YUV420 ? 1 : 0
        let full = image
        while y < codedNeeded.upperBound {
            let rows = min(Self.stripRows, codedHeight - y)
            var view = Self.rows(of: full, from: y, count: rows, chromaShift: chromaShift)
            try Self.convert(
                &view, format: AVIF_RGB_FORMAT_BGRA, depth: 8, into: strip.pointer, rowBytes: stripStride,
                container.decoder)
            for i in 0..<rows where codedNeeded.contains(y + i) {
                destination.consume(row: strip.pointer + i * stripStride + left * 4, y: y + i - top)
            }
            y += rows
        }
        image = container.image
        return CodecOutput(bitmap: destination.finish(), colorReading: Self.readColor(image, limits: options.limits))
    }

    /// Converts a view of the planes to premultiplied RGB(A) rows (nearest chroma upsampling: the resample that
    /// follows averages far more than it could add).
    static func convert(
        _ view: inout avifImage, format: avifRGBFormat, depth: UInt32, into pixels: UnsafeMutableRawPointer,
        rowBytes: Int, _ decoder: UnsafeMutablePointer<avifDecoder>
    ) throws(DarkroomImageError) {
        var rgb = avifRGBImage()
        avifRGBImageSetDefaults(&rgb, &view)
        rgb.format = format
        rgb.depth = depth
        rgb.chromaUpsampling = AVIF_CHROMA_UPSAMPLING_NEAREST
        rgb.alphaPremultiplied = AVIF_TRUE
        rgb.pixels = pixels.assumingMemoryBound(to: UInt8.self)
        rgb.rowBytes = UInt32(rowBytes)
        try check(avifImageYUVToRGB(&view, &rgb), decoder, "converting to RGB")
    }

    /// The decoded planes of a `width × height` image, bounded as 4:4:4 (two bytes a sample above 8 bits).
    package static func planeBytes(width: Int, height: Int, hasAlpha: Bool, bitDepth: Int, isGrayscale: Bool) -> Int {
        let sample = bitDepth > 8 ? 2 : 1
        return width * height * sample * ((isGrayscale ? 1 : 3) + (hasAlpha ? 1 : 0))
    }

    /// Maps a libavif result to a typed error.
    static func check(_ result: avifResult, _ decoder: UnsafeMutablePointer<avifDecoder>?, _ what: String)
        throws(DarkroomImageError)
    {
        guard result != AVIF_RESULT_OK else { return }
        var codec = String(cString: avifResultToString(result))
        if let decoder {
            let detail = withUnsafeBytes(of: decoder.pointee.diag.error) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            if !detail.isEmpty { codec += ": " + detail }
        }
        switch result {
        case AVIF_RESULT_TRUNCATED_DATA, AVIF_RESULT_NO_CONTENT:
            throw DarkroomImageError(.truncated, "the AVIF data ends early (\(what))", codecMessage: codec)
        case AVIF_RESULT_NOT_IMPLEMENTED, AVIF_RESULT_NO_CODEC_AVAILABLE:
            throw DarkroomImageError(
                .unsupportedFeature, "this AVIF variant is not supported (\(what))", codecMessage: codec)
        case AVIF_RESULT_OUT_OF_MEMORY:
            throw DarkroomImageError(.outOfMemory, "libavif ran out of memory (\(what))", codecMessage: codec)
        default:
            throw DarkroomImageError(.corrupt, "the AVIF data is corrupt (\(what))", codecMessage: codec)
        }
    }
}
