import Foundation

/// Where an image's gain map is and how its samples become gains: located once from the container's index and
/// metadata (no pixels), then carried to whatever decodes the map — the probe, an HDR rendition, an Ultra HDR
/// thumbnail.
enum GainMapSource: Sendable {
    /// An Ultra HDR JPEG: a second JPEG listed by the primary's Multi-Picture Format index.
    case ultraHDR(UltraHDRLayout)
    /// An iPhone HEIC: Apple's auxiliary gain map image, its headroom from the EXIF maker note.
    case appleHEIF(GainMapDetails)

    /// The gain map `bytes` (a whole file) carries, or nil when it marks none. Cost: the container's index and
    /// metadata records, bounded by ``DecodeLimits/maxGainMapMetadataBytes``; no pixels.
    static func locate(in bytes: UnsafeRawBufferPointer, limits: DecodeLimits) -> GainMapSource? {
        switch ImageProber.format(of: bytes) {
        case .jpeg: UltraHDRLayout.locate(in: bytes, limits: limits).map(GainMapSource.ultraHDR)
        case .heic: HEIFDecoder.gainMap(bytes, limits: limits).map(GainMapSource.appleHEIF)
        default: nil
        }
    }

    /// What the probe reports.
    var details: GainMapDetails {
        switch self {
        case .ultraHDR(let layout): layout.details
        case .appleHEIF(let details): details
        }
    }

    /// The parameters, when a decode can apply the map (``GainMapDetails/isUsable``); nil otherwise.
    var usableMetadata: GainMapMetadata? {
        details.isUsable ? details.metadata : nil
    }

    /// How a stored sample becomes a log2 gain.
    var curve: GainMapApplier.Curve {
        switch self {
        case .ultraHDR: .iso21496
        case .appleHEIF: .apple
        }
    }

    /// How ``decodeMap(_:width:height:coding:colorFormat:filter:limits:)`` hands back the samples.
    enum SampleCoding {
        /// As stored: ``curve`` turns them into gains.
        case stored
        /// As ISO 21496-1 samples of ``details``' metadata (an Apple map recoded by ``HEIFDecoder/isoCoded(_:headroom:)``),
        /// for a writer of Ultra HDR.
        case iso21496
    }

    /// Decodes the map, in its stored orientation, to `width` × `height` (a larger size upsamples): gray8 for a
    /// one-channel map, else `colorFormat`. Cost: one decode of the map (a JPEG's scaled in the DCT, a HEIC's whole)
    /// and a resample, counted against ``DecodeLimits``.
    /// - Throws: ``DarkroomImageError`` when the map cannot be found again or decoded.
    func decodeMap(
        _ bytes: UnsafeRawBufferPointer, width: Int, height: Int, coding: SampleCoding = .stored,
        colorFormat: PixelFormat = .rgba8, filter: ResamplingFilter = .triangle, limits: DecodeLimits
    ) throws(DarkroomImageError) -> Bitmap {
        switch self {
        case .ultraHDR(let layout):
            guard let range = layout.gainMap else {
                throw DarkroomImageError(.unsupportedFeature, "the gain map cannot be applied: it is incomplete")
            }
            return try ImageDecoder().decode(
                UnsafeRawBufferPointer(rebasing: bytes[range]),
                options: DecodeOptions(
                    size: .stretch(width: width, height: height),
                    pixelFormat: .exactly(layout.details.channels == 1 ? .gray8 : colorFormat), allowsUpscaling: true,
                    appliesOrientation: false, filter: filter, limits: limits, colorSpace: .original)
            ).bitmap
        case .appleHEIF(let details):
            let map = try HEIFDecoder.decodeGainMap(bytes, width: width, height: height, filter: filter, limits: limits)
            guard coding == .iso21496, let metadata = details.metadata else { return map }
            return try HEIFDecoder.isoCoded(map, headroom: exp2(metadata.alternateHeadroom))
        }
    }
}
