import Foundation

/// The headroom of an iPhone HEIC's HDR gain map, from the two values Apple's camera writes in its maker note
/// (tags 0x0021 and 0x0030, which ExifTool calls HDRHeadroom and HDRGain), by the rule Apple publishes in
/// "Applying Apple HDR effect to your photos":
///
///     stops = maker33 < 1 ? (maker48 <= 0.01 ? −20·maker48 + 1.8 : −0.101·maker48 + 1.601)
///                         : (maker48 <= 0.01 ? −70·maker48 + 3.0 : −0.303·maker48 + 2.303)
///     headroom = 2^max(stops, 0)
///
/// and a gain-map sample `s` (8-bit, sRGB-coded) scales the base image's linear light by
/// `1 + (headroom − 1) · sRGB_EOTF(s)`.
///
/// Cost: a walk of EXIF IFD0, the Exif IFD and the maker note's one IFD; nothing is allocated.
package struct AppleHDRHeadroom: Sendable, Hashable {
    /// Maker tag 0x0021.
    package var maker33: Double
    /// Maker tag 0x0030.
    package var maker48: Double

    /// The linear headroom (peak over SDR white), at least 1.
    package var headroom: Double {
        let stops: Double =
            maker33 < 1
            ? (maker48 <= 0.01 ? -20 * maker48 + 1.8 : -0.101 * maker48 + 1.601)
            : (maker48 <= 0.01 ? -70 * maker48 + 3.0 : -0.303 * maker48 + 2.303)
        return exp2(max(stops, 0))
    }

    /// Reads the two tags from TIFF-structured EXIF (starting "II*\0" or "MM\0*", or with the "Exif\0\0"
    /// preamble); nil when there is no Apple maker note, either tag is missing, or the structure is damaged.
    package init?(exif payload: UnsafeRawBufferPointer) {
        guard let exif = IFDReader(exifPayload: payload), let values = Self.read(exif) else { return nil }
        (maker33, maker48) = values
    }

    package init(maker33: Double, maker48: Double) {
        self.maker33 = maker33
        self.maker48 = maker48
    }

    private static func read(_ exif: IFDReader) -> (Double, Double)? {
        do throws(ProbeStop) {
            guard let maker = try AppleMakerNote.ifd(in: exif) else { return nil }
            let at = AppleMakerNote.ifdOffset
            guard let e33 = try maker.entry(0x21, inIFDAt: at), let e48 = try maker.entry(0x30, inIFDAt: at),
                let m33 = try maker.number(at: e33), let m48 = try maker.number(at: e48)
            else { return nil }
            return (m33, m48)
        } catch {
            return nil
        }
    }
}
