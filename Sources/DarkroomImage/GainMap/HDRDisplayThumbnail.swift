import DarkroomSupport

extension ImageEncoder {
    /// Encodes a thumbnail for HDR displays (``HDROutputMode/apply``): a 10-bit BT.2100 PQ AVIF (BT.2020 primaries,
    /// 4:4:4, SDR white at BT.2408's 203 nits).
    ///
    /// - An Ultra HDR JPEG or an iPhone HEIC: its gain map applied for a display with `displayHeadroom` (log2 of its
    ///   peak over SDR white) with ISO 21496-1's weighting (Apple's gain scaled the same way, in log2); nil applies
    ///   it in full (the map's alternate headroom).
    /// - A PQ or HLG image (AVIF, HEIF, PNG, JPEG XL or TIFF): its light kept, HLG's as BT.2100's 1,000-nit
    ///   reference display shows it (so HLG becomes PQ); with `displayHeadroom`, light brighter than that display's
    ///   peak rolled off by BT.2390, each pixel's components scaled together. Reduced in blocks and resampled in
    ///   linear light, never through 8 bits.
    /// - Any other SDR image: its light unchanged (its colours converted to sRGB first), SDR white at 203 nits;
    ///   an Ultra HDR file whose map cannot be applied is treated so (its probe says why).
    ///
    /// Cost: the decodes at the output size (two for a gain-map image), one pass in linear light, and a 10-bit AV1
    /// encode; memory, 12 bytes per output pixel besides the decoded bitmaps.
    ///
    /// - Throws: ``DarkroomImageError`` `.unsupportedFeature` for a crop or a size that crops (the map is applied
    ///   to the whole image) or transparency; otherwise what decoding or encoding throws.
    public static func encodeHDRDisplayThumbnail(
        _ bytes: UnsafeRawBufferPointer, options: DecodeOptions, displayHeadroom: Double? = nil,
        encode: EncodeOptions = EncodeOptions()
    ) throws(DarkroomImageError) -> [UInt8] {
        guard options.geometry.isWholeImage else {
            throw DarkroomImageError(
                .unsupportedFeature, "an HDR output is the whole image: ask for a size that fits, without a crop")
        }
        let probe = try ImageProber.probe(bytes, limits: options.limits, page: options.geometry.page)
        let decoder = ImageDecoder()
        if let hdr = probe.hdr, hdr.toneMapped {
            return try encodeHDRAVIF(
                decoder.decodeHDRSignalRendition(
                    bytes, probe: probe, options: options, displayHeadroom: displayHeadroom), options: encode)
        }
        if let source = GainMapSource.locate(in: bytes, limits: options.limits),
            let metadata = source.usableMetadata
        {
            let rendition = try decoder.decodeHDRRendition(
                bytes, source: source, options: options,
                displayHeadroom: displayHeadroom ?? metadata.alternateHeadroom)
            return try encodeHDRAVIF(rendition, options: encode)
        }
        var sdrOptions = options
        sdrOptions.colorSpace = .sRGB
        sdrOptions.geometry.pixelFormat = .exactly(.rgba8)
        let image = try decoder.decode(bytes, options: sdrOptions)
        guard image.bitmap.isOpaque else {
            throw DarkroomImageError(.unsupportedFeature, "an HDR output of an image with transparency is not made yet")
        }
        let levels = SRGBTransfer.linearLevels
        var light = [Float](repeating: 0, count: image.bitmap.width * image.bitmap.height * 3)
        var o = 0
        for y in 0..<image.bitmap.height {
            let row = image.bitmap.row(y).assumingMemoryBound(to: UInt8.self)
            for x in 0..<image.bitmap.width {
                for c in 0..<3 { light[o + c] = levels[Int(row[4 * x + c])] }
                o += 3
            }
        }
        return try encodeHDRAVIF(
            HDRRendition(
                width: image.bitmap.width, height: image.bitmap.height, pixels: light, primaries: .profile(nil),
                weight: 0), options: encode)
    }

    /// Encodes an HDR-display thumbnail of a byte array. See
    /// ``encodeHDRDisplayThumbnail(_:options:displayHeadroom:encode:)-(UnsafeRawBufferPointer,_,_,_)``.
    public static func encodeHDRDisplayThumbnail(
        _ bytes: [UInt8], options: DecodeOptions, displayHeadroom: Double? = nil,
        encode: EncodeOptions = EncodeOptions()
    ) throws(DarkroomImageError) -> [UInt8] {
        try bytes.withBytes { (raw) throws(DarkroomImageError) in
            try encodeHDRDisplayThumbnail(raw, options: options, displayHeadroom: displayHeadroom, encode: encode)
        }
    }
}

extension ImageEncoder {
    /// Encodes an AVIF of a PQ or HLG image that stays HDR (``HDROutputMode/keep``), in the source's own transfer:
    /// a PQ source's light at the output size in a 10-bit BT.2100 PQ AVIF, as
    /// ``encodeHDRDisplayThumbnail(_:options:displayHeadroom:encode:)-(UnsafeRawBufferPointer,_,_,_)`` makes it
    /// with no display headroom; an HLG source's relative scene light, averaged and resampled as such, in a 10-bit
    /// BT.2100 HLG AVIF (CICP 9/18/9), so the display renders it as HLG is meant to be.
    ///
    /// Cost: one probe, then one decode of the whole image in linear light and a 10-bit AV1 encode.
    ///
    /// - Returns: nil when `bytes` is not a PQ or HLG image that Darkroom tone-maps, has transparency, or
    ///   `options` crops (``HDROutputMode/keep``'s fallback: encode the SDR image as usual).
    /// - Throws: ``DarkroomImageError`` from decoding or encoding.
    public static func encodeHDRSignalThumbnail(
        _ bytes: UnsafeRawBufferPointer, options: DecodeOptions, encode: EncodeOptions = EncodeOptions()
    ) throws(DarkroomImageError) -> [UInt8]? {
        guard options.geometry.isWholeImage else { return nil }
        let probe = try ImageProber.probe(bytes, limits: options.limits, page: options.geometry.page)
        guard let hdr = probe.hdr, hdr.toneMapped, !probe.hasAlpha else { return nil }
        return try encodeHDRAVIF(
            ImageDecoder().decodeHDRSignalRendition(
                bytes, probe: probe, options: options, displayHeadroom: nil, keepsHLG: true),
            options: encode)
    }

    /// Encodes an HDR AVIF of a PQ or HLG byte array. See
    /// ``encodeHDRSignalThumbnail(_:options:encode:)-(UnsafeRawBufferPointer,_,_)``.
    public static func encodeHDRSignalThumbnail(
        _ bytes: [UInt8], options: DecodeOptions, encode: EncodeOptions = EncodeOptions()
    ) throws(DarkroomImageError) -> [UInt8]? {
        try bytes.withBytes { (raw) throws(DarkroomImageError) in
            try encodeHDRSignalThumbnail(raw, options: options, encode: encode)
        }
    }
}
