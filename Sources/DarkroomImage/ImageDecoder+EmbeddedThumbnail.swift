import DarkroomSupport

extension ImageDecoder {
    /// Decodes the small picture a file carries beside its image — the EXIF thumbnail of a camera or phone JPEG
    /// (IFD1), a HEIF thumbnail item — at the size the whole image would have under `options`, upright as the image
    /// is shown: a cheap, blurrier stand-in to show while the image itself decodes.
    ///
    /// Returns nil when the file has none, or none of the image's shape (within a pixel of rounding, so a letterboxed
    /// or unrelated thumbnail is never shown in its place), and when the geometry crops or asks for a page (a
    /// thumbnail holds neither). Colour is the thumbnail's own, untagged sRGB. Cost: a header walk and a decode of the
    /// thumbnail (a few tens of thousands of pixels), whatever the image's size; allocates the output bitmap.
    /// ``DecodedImage/usedEmbeddedThumbnail`` is true and ``DecodedImage/probe`` describes the whole image. With an
    /// ``isolation``, the thumbnail is decoded there (the file's bytes copied there once).
    /// - Throws: ``DarkroomImageError`` when the image's own header is unreadable or over a limit, or the
    ///   thumbnail is corrupt.
    public func decodeEmbeddedThumbnail(_ bytes: UnsafeRawBufferPointer, options: DecodeOptions)
        throws(DarkroomImageError) -> DecodedImage?
    {
        guard options.geometry.crop == nil, options.geometry.page == 0, !bytes.isEmpty,
            bytes.count <= options.limits.maxInputBytes
        else { return nil }
        if let isolation { return try isolation.decodeEmbeddedThumbnail(bytes, options: options) }
        let probe = try ImageProber.probe(bytes, limits: options.limits)
        try Self.checkSource(probe, options.limits)
        switch probe.format {
        case .jpeg:
            guard let range = ExifThumbnail.range(in: bytes) else { return nil }
            let thumbnail = UnsafeRawBufferPointer(rebasing: bytes[range])
            guard var thumbnailProbe = try? ImageProber.probe(thumbnail, limits: options.limits),
                thumbnailProbe.format == .jpeg, thumbnailProbe.width < probe.width,
                HEIFDecoder.hasSameShape(thumbnailProbe.width, thumbnailProbe.height, as: probe.width, probe.height)
            else { return nil }
            // The thumbnail is stored as the image is (its IFD1 has no orientation of its own): the image's
            // orientation turns both upright. Decoded to the image's output size, centre-cropped as a fill would be.
            thumbnailProbe.orientation = probe.orientation
            let plan = try options.geometry.plan(for: probe)
            let swaps = options.geometry.appliesOrientation && probe.orientation.swapsDimensions
            var thumbnailOptions = options
            thumbnailOptions.geometry.size =
                swaps
                ? .fill(width: plan.outputHeight, height: plan.outputWidth)
                : .fill(width: plan.outputWidth, height: plan.outputHeight)
            thumbnailOptions.geometry.minimumSize = nil
            thumbnailOptions.geometry.allowsUpscaling = true
            var decoded = try decode(
                .bytes(thumbnail, JPEGDecoder()), probe: thumbnailProbe, options: thumbnailOptions,
                into: Bitmap.allocateOnHeap)
            decoded.probe = probe
            decoded.usedEmbeddedThumbnail = true
            return decoded
        case .heic:
            guard
                let sizes = probe.heif?.thumbnailSizes,
                sizes.contains(where: { $0.count == 2 && HEIFDecoder.canStandIn($0[0], $0[1], for: probe) })
            else { return nil }
            var thumbnailOptions = options
            thumbnailOptions.embeddedThumbnailOnly = true
            var decoded = try decode(
                .bytes(bytes, HEIFDecoder()), probe: probe, options: thumbnailOptions, into: Bitmap.allocateOnHeap)
            decoded.usedEmbeddedThumbnail = true
            return decoded
        default:
            return nil
        }
    }

    /// Decodes the embedded thumbnail of a byte array. See ``decodeEmbeddedThumbnail(_:options:)-(UnsafeRawBufferPointer,_)``.
    public func decodeEmbeddedThumbnail(_ bytes: [UInt8], options: DecodeOptions) throws(DarkroomImageError)
        -> DecodedImage?
    {
        try bytes.withBytes { (raw) throws(DarkroomImageError) in try decodeEmbeddedThumbnail(raw, options: options) }
    }
}
