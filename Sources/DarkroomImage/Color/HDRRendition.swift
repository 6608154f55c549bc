import Foundation

/// An image's HDR rendition, for an HDR output: linear light, RGB, 1.0 at SDR white (203 nits), at the output size,
/// upright. Made by applying a gain map (``ImageDecoder/decodeHDRRendition(_:source:options:displayHeadroom:)``)
/// or from a PQ or HLG signal (``ImageDecoder/decodeHDRSignalRendition(_:probe:options:displayHeadroom:)``).
struct HDRRendition: Sendable {
    /// The colour space linear light is in, to convert it to an output's primaries.
    enum Primaries: Sendable {
        /// An ICC profile's (an RGB matrix/TRC one, as gain-map bases carry); sRGB's when nil.
        case profile(ColorProfile?)
        /// A CICP colour-primaries code with a D65 white (9 BT.2020, 12 Display P3, 1 BT.709).
        case cicp(Int)
    }

    let width: Int
    let height: Int
    /// Linear RGB, row by row, three values per pixel; values above 1 are brighter than SDR white.
    var pixels: [Float]
    /// The primaries `pixels` are in.
    let primaries: Primaries
    /// How much of the source's HDR the rendition holds: for a gain map, the weight it applied with (0 the base
    /// image, 1 the full alternate rendition); for a PQ or HLG signal, 1.
    let weight: Double
    /// Whether `pixels` are an HLG source's relative scene light (1.0 at the signal's peak, before the OOTF), kept
    /// to be coded in HLG again, rather than display light at 1.0 per SDR white.
    var isHLGScene = false
}

/// A codec that reduces a PQ or HLG image to light for an HDR output.
protocol HDRLightReducing {
    /// The whole image reduced by `d` in linear light (``HDRLightImage``, rolled off to `target`'s peak), with its
    /// CICP primaries; nil when it is not one the tone mapper reads (SDR, ICC-described where the codec does not
    /// read HDR profiles, transparency, primaries or a matrix not covered). The page is `options`' (a TIFF's), the
    /// limits are `options`'; the rest of the geometry is applied by the caller.
    func reduceHDRLight(
        _ bytes: UnsafeRawBufferPointer, probe: ImageProbe, d: Int, target: HDRLightTarget, options: DecodeOptions
    ) throws(DarkroomImageError) -> (light: HDRLightImage, primaries: Int)?
}

extension AVIFDecoder: HDRLightReducing {}
extension HEIFDecoder: HDRLightReducing {}
extension JXLDecoder: HDRLightReducing {}
extension PNGDecoder: HDRLightReducing {}
extension TIFFDecoder: HDRLightReducing {}

extension ImageDecoder {
    /// Decodes a PQ or HLG image (AVIF, HEIF, PNG, JPEG XL or TIFF, opaque) to its light for an HDR output: each pixel's
    /// signal turned into light (HLG rendered for BT.2100's 1,000-nit reference display, so it becomes display
    /// light as PQ is) and averaged in blocks at the strongest shrink denominator that keeps the shrink-on-load
    /// margin, at least 2 (``HDRLightImage``), rolled off by BT.2390 to the display's peak where the content is brighter,
    /// resampled in linear light to the output size and turned upright.
    ///
    /// Cost: one decode of the whole image, a conversion per source pixel, and a resample; memory, the codec's
    /// planes and 28 bytes a reduced pixel (checked against ``DecodeLimits/maxDecodedBytes``).
    ///
    /// - Parameters:
    ///   - displayHeadroom: log2 of the display's peak over SDR white; nil keeps the content's light (PQ's 10,000
    ///     nits the only ceiling).
    ///   - keepsHLG: an HLG source stays relative scene light (``HDRRendition/isHLGScene``), to be coded in HLG
    ///     again: no OOTF per source pixel, and the display it is shown on renders it as HLG is meant to be.
    /// - Throws: ``DarkroomImageError`` `.unsupportedFeature` for transparency, a crop, or a signal the tone
    ///   mapper does not read (another format, an ICC profile, primaries not covered); or what decoding throws.
    func decodeHDRSignalRendition(
        _ bytes: UnsafeRawBufferPointer, probe: ImageProbe, options: DecodeOptions, displayHeadroom: Double?,
        keepsHLG: Bool = false
    ) throws(DarkroomImageError) -> HDRRendition {
        guard !probe.hasAlpha else {
            throw DarkroomImageError(.unsupportedFeature, "an HDR output of an image with transparency is not made yet")
        }
        let plan = try options.geometry.plan(for: probe)
        // At least twice the output before the last resample: a box-averaged image left barely larger than the
        // output resamples visibly softer than a full one does, and PQ's range magnifies the difference
        var reduceOptions = options
        reduceOptions.shrinkOnLoadMargin = max(options.shrinkOnLoadMargin, 2)
        let d = plan.shrinkOnLoadDenominator(reduceOptions)
        let target = HDRLightTarget(
            peak: displayHeadroom.map { HDRTransfer.referenceWhiteNits * exp2($0) } ?? 10_000,
            keepsHLGScene: keepsHLG)
        let reducer: (any HDRLightReducing)? =
            switch probe.format {
            case .avif: AVIFDecoder()
            case .heic: HEIFDecoder()
            case .jxl: JXLDecoder()
            case .png: PNGDecoder()
            case .tiff: TIFFDecoder()
            default: nil
            }
        let reduced = try reducer?.reduceHDRLight(
            bytes, probe: probe, d: d, target: target, options: options)
        guard let reduced else {
            throw DarkroomImageError(
                .unsupportedFeature,
                "the image's HDR signal is not one Darkroom reads for an HDR output (an ICC profile, or primaries or a matrix not covered)"
            )
        }
        let light = reduced.light.light()
        let reducedPlan = plan.retargeted(sourceWidth: reduced.light.width, sourceHeight: reduced.light.height)
        let resampled = try LightResampler.resample(
            light, width: reduced.light.width, height: reduced.light.height, sourceRect: reducedPlan.sourceRect,
            outputWidth: plan.outputWidth, outputHeight: plan.outputHeight, filter: options.filter)
        let orientation = options.geometry.appliesOrientation ? probe.orientation : .up
        let upright = orientation.applied(
            to: resampled, width: plan.outputWidth, height: plan.outputHeight, channels: 3)
        return HDRRendition(
            width: upright.width, height: upright.height, pixels: upright.pixels, primaries: .cicp(reduced.primaries),
            weight: 1, isHLGScene: reduced.light.isHLGScene)
    }
}
