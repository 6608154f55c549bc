import CAVIF

extension ImageEncoder {
    /// AVIF through libavif (libaom by default): 4:2:0 YUV, full range, BT.601 matrix; one thread, since callers
    /// encode on their own bounded pools. Quality maps to the AV1 quantizer as libavif 1.x maps its `quality`
    /// (`q = ((100 − quality) × 63 + 50) / 100`; alpha too, so 100 is lossless alpha). Without a profile the file
    /// declares sRGB with CICP 1/13/6.
    static func encodeAVIF(_ source: Bitmap, _ options: EncodeOptions) throws(DarkroomImageError) -> [UInt8] {
        var bitmap = try encodable(source)
        if bitmap.format == .gray8 { bitmap = try bitmap.converted(to: .bgra8Premultiplied) }
        let profile = options.colorProfile.flatMap { $0.isEmpty ? nil : $0 }
        let image = try makeAVIFImage(
            width: bitmap.width, height: bitmap.height, depth: 8, format: AVIF_PIXEL_FORMAT_YUV420,
            cicp: profile == nil
                ? (
                    Int(AVIF_COLOR_PRIMARIES_BT709), Int(AVIF_TRANSFER_CHARACTERISTICS_SRGB),
                    Int(AVIF_MATRIX_COEFFICIENTS_BT601)
                ) : nil)
        defer { avifImageDestroy(image) }
        if let profile {
            profile.withUnsafeBufferPointer { avifImageSetProfileICC(image, $0.baseAddress, $0.count) }
        }
        var rgb = avifRGBImage()
        avifRGBImageSetDefaults(&rgb, image)
        rgb.format = AVIF_RGB_FORMAT_BGRA
        rgb.depth = 8
        rgb.alphaPremultiplied = AVIF_TRUE
        rgb.ignoreAlpha = bitmap.isOpaque ? AVIF_TRUE : AVIF_FALSE
        rgb.pixels = bitmap.storage.baseAddress.assumingMemoryBound(to: UInt8.self)
        rgb.rowBytes = UInt32(bitmap.bytesPerRow)
        try check(avifImageRGBToYUV(image, &rgb), "converting to YUV")
        return try write(image, options)
    }

    /// A full-range image for the encoder, declaring `cicp` (primaries, transfer, matrix) when given; the caller
    /// destroys it.
    static func makeAVIFImage(
        width: Int, height: Int, depth: Int, format: avifPixelFormat,
        cicp: (primaries: Int, transfer: Int, matrix: Int)?
    ) throws(DarkroomImageError) -> UnsafeMutablePointer<avifImage> {
        guard let image = avifImageCreate(UInt32(width), UInt32(height), UInt32(depth), format) else {
            throw DarkroomImageError(.outOfMemory, "could not create an AVIF image")
        }
        image.pointee.yuvRange = AVIF_RANGE_FULL
        if let (primaries, transfer, matrix) = cicp {
            image.pointee.colorPrimaries = UInt16(primaries)
            image.pointee.transferCharacteristics = UInt16(transfer)
            image.pointee.matrixCoefficients = UInt16(matrix)
        }
        return image
    }

    /// Encodes a filled `image` at the options' quality and speed, on one thread.
    static func write(_ image: UnsafeMutablePointer<avifImage>, _ options: EncodeOptions) throws(DarkroomImageError)
        -> [UInt8]
    {
        guard (0...10).contains(options.speed) else {
            throw DarkroomImageError(.invalidArgument, "AVIF speed must be 0...10, got \(options.speed)")
        }
        guard let encoder = avifEncoderCreate() else {
            throw DarkroomImageError(.outOfMemory, "could not create an AVIF encoder")
        }
        defer { avifEncoderDestroy(encoder) }
        let quantizer = Int32(((100 - options.quality) * 63 + 50) / 100)
        encoder.pointee.maxThreads = 1
        encoder.pointee.speed = Int32(options.speed)
        encoder.pointee.minQuantizer = quantizer
        encoder.pointee.maxQuantizer = quantizer
        encoder.pointee.minQuantizerAlpha = quantizer
        encoder.pointee.maxQuantizerAlpha = quantizer
        var output = avifRWData()
        defer { avifRWDataFree(&output) }
        try check(avifEncoderWrite(encoder, image, &output), "encoding")
        guard let data = output.data, output.size > 0 else {
            throw DarkroomImageError(.encodeFailed, "AVIF encoding produced no data")
        }
        return Array(UnsafeBufferPointer(start: data, count: output.size))
    }

    static func check(_ result: avifResult, _ what: String) throws(DarkroomImageError) {
        guard result != AVIF_RESULT_OK else { return }
        throw DarkroomImageError(
            .encodeFailed, "AVIF encoding failed (\(what))", codecMessage: String(cString: avifResultToString(result)))
    }
}
