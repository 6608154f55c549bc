extension ImageEncoder {
    /// Encodes a thumbnail for HDR displays (``HDROutputMode/apply``): a 10-bit BT.2100 PQ AVIF (BT.2020 primaries,
    /// 4:4:4, SDR white at BT.2408's 203 nits).
    ///
    /// - An Ultra HDR JPEG: its gain map applied for a display with `displayHeadroom` (log2 of its peak over SDR
    ///   white) with ISO 21496-1's weighting; nil applies it in full (the map's alternate headroom).
    /// - Any other SDR image: its light unchanged (its colours converted to sRGB first), SDR white at 203 nits;
    ///   an Ultra HDR file whose map cannot be applied is treated so (its probe says why).
    ///
    /// Cost: the decodes at the output size (two for a gain-map image), one pass in linear light, and a 10-bit AV1
    /// encode; memory, 12 bytes per output pixel besides the decoded bitmaps.
    ///
    /// - Throws: ``DarkroomImageError`` `.unsupportedFeature` for a crop or a size that crops (the map is applied
    ///   to the whole image), a PQ or HLG source (only its SDR tone map is made), or transparency; otherwise what
    ///   decoding or encoding throws.
    public static func encodeHDRDisplayThumbnail(
        _ bytes: UnsafeRawBufferPointer, options: DecodeOptions, displayHeadroom: Double? = nil,
        encode: EncodeOptions = EncodeOptions()
    ) throws(DarkroomImageError) -> [UInt8] {
        guard options.geometry.isWholeImage else {
            throw DarkroomImageError(
                .unsupportedFeature, "an HDR output is the whole image: ask for a size that fits, without a crop")
        }
        let probe = try ImageProber.probe(bytes, limits: options.limits)
        if let hdr = probe.hdr {
            throw DarkroomImageError(
                .unsupportedFeature,
                "an HDR output of a \(hdr.transfer.uppercased()) image is not made yet; its SDR tone map is")
        }
        let decoder = ImageDecoder()
        if let layout = UltraHDRLayout.locate(in: bytes, limits: options.limits), layout.details.isUsable,
            let metadata = layout.details.metadata
        {
            let rendition = try decoder.decodeHDRRendition(
                bytes, layout: layout, options: options,
                displayHeadroom: displayHeadroom ?? metadata.alternateHeadroom)
            return try encodePQAVIF(
                light: rendition.pixels, width: rendition.width, height: rendition.height,
                profile: rendition.colorProfile, options: encode)
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
        return try encodePQAVIF(
            light: light, width: image.bitmap.width, height: image.bitmap.height, profile: nil, options: encode)
    }

    /// Encodes an HDR-display thumbnail of a byte array. See
    /// ``encodeHDRDisplayThumbnail(_:options:displayHeadroom:encode:)-(UnsafeRawBufferPointer,_,_,_)``.
    public static func encodeHDRDisplayThumbnail(
        _ bytes: [UInt8], options: DecodeOptions, displayHeadroom: Double? = nil,
        encode: EncodeOptions = EncodeOptions()
    ) throws(DarkroomImageError) -> [UInt8] {
        try bytes.withUnsafeBytes { raw in
            Result { () throws(DarkroomImageError) in
                try encodeHDRDisplayThumbnail(raw, options: options, displayHeadroom: displayHeadroom, encode: encode)
            }
        }.get()
    }
}
