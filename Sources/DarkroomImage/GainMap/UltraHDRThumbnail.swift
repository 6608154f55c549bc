import DarkroomSupport
import Foundation

/// What an output does with an HDR source's extra range.
public enum HDROutputMode: String, Sendable, Hashable, CaseIterable, Codable {
    /// SDR only: PQ and HLG tone-mapped, a gain map's base image alone. The default, and what every reader shows.
    case sdr
    /// Keep the HDR: a JPEG of an Ultra HDR source or an iPhone HEIC is itself Ultra HDR (its gain map resized
    /// alongside and its parameters carried), so HDR displays show it in HDR and others its SDR base; an AVIF of a PQ or HLG source
    /// is a 10-bit AVIF in its own transfer (PQ of its light, HLG of its scene light). Other sources, and outputs it cannot
    /// follow (a crop, a cover or fill that crops, another output format, transparency), are written SDR.
    case keep
    /// Apply the HDR for an HDR display: always a 10-bit PQ AVIF, an Ultra HDR photo's gain map applied for the
    /// display's headroom, an SDR image's light kept at SDR white. See
    /// ``ImageEncoder/encodeHDRDisplayThumbnail(_:options:displayHeadroom:encode:)-(UnsafeRawBufferPointer,_,_,_)``.
    case apply
}

extension ImageEncoder {
    /// Encodes a JPEG of an Ultra HDR JPEG or an iPhone HEIC that is Ultra HDR: the base image decoded by `options`
    /// (its colour profile kept and written, since the gain map applies in its colour space) and the gain map decoded
    /// to the same fraction of the output's size as it is of the source's, oriented as the base, each encoded as JPEG
    /// at `encode`'s quality, with the parameters as an ISO 21496-1 record and `hdrgm` XMP. An iPhone's map is
    /// recoded for ISO 21496-1: each sample `s` becomes `log2(1 + (headroom − 1) · sRGB_EOTF(s)) / log2 headroom`,
    /// gains 0 to log2 headroom, gamma 1, no offsets, which gives Apple's gain at every 8-bit sample.
    ///
    /// Cost: a second, smaller decode and encode (the gain map is usually a quarter of the base on each side, an
    /// iPhone's a half, decoded whole) and a copy of both outputs.
    ///
    /// - Returns: nil when `bytes` has no usable gain map or `options` crops (``HDROutputMode/keep``'s fallback:
    ///   encode the SDR image as usual).
    /// - Throws: ``DarkroomImageError`` from decoding either image or encoding.
    public static func encodeUltraHDRThumbnail(
        _ bytes: UnsafeRawBufferPointer, options: DecodeOptions, encode: EncodeOptions = EncodeOptions()
    ) throws(DarkroomImageError) -> [UInt8]? {
        guard options.geometry.isWholeImage else { return nil }
        guard let source = GainMapSource.locate(in: bytes, limits: options.limits),
            let metadata = source.usableMetadata
        else { return nil }
        let details = source.details

        var baseOptions = options
        baseOptions.colorSpace = .original
        baseOptions.geometry.pixelFormat = .exactly(.bgra8Premultiplied)
        let decoder = ImageDecoder()
        let base = try decoder.decode(bytes, options: baseOptions)

        // The map's output size in stored orientation, the base's output size in the same proportion.
        let (orientation, storedWidth, storedHeight) = base.storedFrame(options)
        let mapWidth = max(1, Int((Double(storedWidth * details.width) / Double(base.probe.width)).rounded()))
        let mapHeight = max(1, Int((Double(storedHeight * details.height) / Double(base.probe.height)).rounded()))
        let map = try source.decodeMap(
            bytes, width: mapWidth, height: mapHeight, coding: .iso21496, colorFormat: .bgra8Premultiplied,
            filter: options.filter, limits: options.limits)
        let orientedMap = try map.applying(orientation)

        var baseEncode = encode
        baseEncode.colorProfile = base.colorProfile?.data
        var mapEncode = encode
        mapEncode.colorProfile = nil
        mapEncode.quality = max(encode.quality, 95)  // the map is small, and its errors are errors of light
        return UltraHDRWriter.assemble(
            primary: try ImageEncoder.encode(base.bitmap, as: .jpeg, options: baseEncode),
            gainMap: try ImageEncoder.encode(orientedMap, as: .jpeg, options: mapEncode), metadata: metadata)
    }

    /// Encodes an Ultra HDR thumbnail of a byte array. See
    /// ``encodeUltraHDRThumbnail(_:options:encode:)-(UnsafeRawBufferPointer,_,_)``.
    public static func encodeUltraHDRThumbnail(
        _ bytes: [UInt8], options: DecodeOptions, encode: EncodeOptions = EncodeOptions()
    ) throws(DarkroomImageError) -> [UInt8]? {
        try bytes.withBytes { (raw) throws(DarkroomImageError) in
            try encodeUltraHDRThumbnail(raw, options: options, encode: encode)
        }
    }
}
