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
        var tiff = payload
        if payload.count >= 6, payload.prefix(6).elementsEqual("Exif\0\0".utf8) {
            tiff = UnsafeRawBufferPointer(rebasing: payload[6...])
        }
        guard let values = Self.read(tiff) else { return nil }
        (maker33, maker48) = values
    }

    package init(maker33: Double, maker48: Double) {
        self.maker33 = maker33
        self.maker48 = maker48
    }

    private static let makerNoteTag = 0x927C
    private static let exifIFDTag = 0x8769
    /// "Apple iOS\0", then a version (2 bytes) and "MM": the maker note's IFD starts 14 bytes in, its offsets
    /// counted from the maker note's first byte, big-endian whatever the EXIF's byte order.
    private static let signature = Array("Apple iOS\0".utf8)

    private static func read(_ tiff: UnsafeRawBufferPointer) -> (Double, Double)? {
        let reader = ByteReader(tiff)
        do throws(ProbeStop) {
            let littleEndian: Bool
            switch try reader.u16be(0) {
            case 0x4949: littleEndian = true
            case 0x4D4D: littleEndian = false
            default: return nil
            }
            let exif = IFDWalk(reader: reader, littleEndian: littleEndian)
            guard try exif.u16(2) == 42, let pointer = try exif.entry(exifIFDTag, inIFDAt: try exif.u32(4)),
                let note = try exif.entry(makerNoteTag, inIFDAt: try exif.u32(pointer + 8))
            else { return nil }
            let start = try exif.u32(note + 8)
            let length = try exif.u32(note + 4)
            guard length >= 16, start >= 0, start + length <= tiff.count,
                UnsafeRawBufferPointer(rebasing: tiff[start..<(start + signature.count)]).elementsEqual(signature)
            else { return nil }
            let maker = IFDWalk(
                reader: ByteReader(UnsafeRawBufferPointer(rebasing: tiff[start..<(start + length)])),
                littleEndian: false)
            guard let e33 = try maker.entry(0x21, inIFDAt: 14), let e48 = try maker.entry(0x30, inIFDAt: 14),
                let m33 = try maker.number(at: e33), let m48 = try maker.number(at: e48)
            else { return nil }
            return (m33, m48)
        } catch {
            return nil
        }
    }

    /// Reads entries of one IFD.
    private struct IFDWalk {
        let reader: ByteReader
        let littleEndian: Bool

        func u16(_ offset: Int) throws(ProbeStop) -> Int {
            littleEndian ? try reader.u16le(offset) : try reader.u16be(offset)
        }

        func u32(_ offset: Int) throws(ProbeStop) -> Int {
            littleEndian ? try reader.u32le(offset) : try reader.u32be(offset)
        }

        /// The offset of the entry for `tag` in the IFD at `ifd`; nil when it has none. Entries are 12 bytes: tag,
        /// type, count, value-or-offset; a count of up to 65,535 bounds the loop.
        func entry(_ tag: Int, inIFDAt ifd: Int) throws(ProbeStop) -> Int? {
            let count = try u16(ifd)
            for index in 0..<count where try u16(ifd + 2 + 12 * index) == tag { return ifd + 2 + 12 * index }
            return nil
        }

        /// A single number: a (signed) rational, a float, a double or an integer; nil for other types or counts.
        func number(at entry: Int) throws(ProbeStop) -> Double? {
            guard try u32(entry + 4) == 1 else { return nil }
            switch try u16(entry + 2) {
            case 3: return Double(try u16(entry + 8))
            case 4: return Double(try u32(entry + 8))
            case 9: return Double(Int32(truncatingIfNeeded: try u32(entry + 8)))
            case 11: return Double(Float(bitPattern: UInt32(try u32(entry + 8))))
            case 5, 10:
                let at = try u32(entry + 8)
                let signed = try u16(entry + 2) == 10
                let (n, d) = (try u32(at), try u32(at + 4))
                let numerator = signed ? Double(Int32(truncatingIfNeeded: n)) : Double(n)
                let denominator = signed ? Double(Int32(truncatingIfNeeded: d)) : Double(d)
                return denominator == 0 ? nil : numerator / denominator
            case 12:
                let at = try u32(entry + 8)
                let bits =
                    UInt64(try u32(littleEndian ? at + 4 : at)) << 32 | UInt64(try u32(littleEndian ? at : at + 4))
                return Double(bitPattern: bits)
            default: return nil
            }
        }
    }
}
