import Foundation

/// Assembles an Ultra HDR JPEG from a base JPEG, a gain-map JPEG and their parameters, as Android and Chrome read
/// them: the primary carries a version-only ISO 21496-1 record, an XMP packet naming `hdrgm` and a
/// `Container:Directory`, and the MPF index; the gain map carries the parameters twice, as an ISO 21496-1 record
/// and as `hdrgm` XMP, so readers of either form (libultrahdr, Chrome, Adobe's) apply them.
///
/// Cost: one copy of the two JPEGs plus a few hundred bytes of segments.
package enum UltraHDRWriter {
    /// The Ultra HDR file: `primary` and `gainMap` are whole JPEGs (each starting with SOI).
    package static func assemble(primary: [UInt8], gainMap: [UInt8], metadata: GainMapMetadata) -> [UInt8] {
        let gainMapFile =
            [0xFF, 0xD8] + segment(0xE1, xmpSignature + Array(gainMapXMP(metadata).utf8))
            + segment(0xE2, GainMapMetadata.isoSignature + isoRecord(metadata)) + gainMap.dropFirst(2)
        let head =
            [0xFF, 0xD8] + segment(0xE1, xmpSignature + Array(primaryXMP(gainMapLength: gainMapFile.count).utf8))
            + segment(0xE2, GainMapMetadata.isoSignature + [0, 0, 0, 0])
        // The MPF segment's size does not depend on the numbers in it: lay it out once to learn where the TIFF
        // header lands (offsets in it count from there), then write it with the final numbers.
        let mpfLength = mpfSegment(primarySize: 0, gainMapSize: 0, gainMapOffset: 0).count
        let primarySize = head.count + mpfLength + primary.count - 2
        let tiffStart = head.count + 4 + MultiPictureIndex.signature.count
        let mpf = mpfSegment(
            primarySize: primarySize, gainMapSize: gainMapFile.count, gainMapOffset: primarySize - tiffStart)
        return head + mpf + primary.dropFirst(2) + gainMapFile
    }

    private static let xmpSignature = GainMapMetadata.xmpPacketSignature

    private static func segment(_ marker: UInt8, _ payload: [UInt8]) -> [UInt8] {
        JPEGSegments.segment(marker: marker, payload: payload)
    }

    /// A big-endian MPF index of two images: the primary (a baseline MP primary image) and the gain map.
    private static func mpfSegment(primarySize: Int, gainMapSize: Int, gainMapOffset: Int) -> [UInt8] {
        var tiff: [UInt8] = [0x4D, 0x4D, 0x00, 0x2A, 0, 0, 0, 8]
        func u16(_ v: Int) { tiff.appendBigEndian(UInt16(truncatingIfNeeded: v)) }
        func u32(_ v: Int) { tiff.appendBigEndian(UInt32(truncatingIfNeeded: v)) }
        let entryCount = 3
        let entriesOffset = 8 + 2 + 12 * entryCount + 4
        u16(entryCount)
        u16(0xB000)
        u16(7)
        u32(4)
        tiff += Array("0100".utf8)  // MPFVersion
        u16(0xB001)
        u16(4)
        u32(1)
        u32(2)  // NumberOfImages
        u16(0xB002)
        u16(7)
        u32(32)
        u32(entriesOffset)  // MPEntry: 2 × 16 bytes
        u32(0)  // no next IFD
        u32(0x0003_0000)
        u32(primarySize)
        u32(0)
        u16(0)
        u16(0)
        u32(0)
        u32(gainMapSize)
        u32(gainMapOffset)
        u16(0)
        u16(0)
        return segment(0xE2, MultiPictureIndex.signature + tiff)
    }

    /// The primary's XMP: the `hdrgm` version, and the container directory listing the gain map's length.
    private static func primaryXMP(gainMapLength: Int) -> String {
        """
        <x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">\
        <rdf:Description xmlns:Container="http://ns.google.com/photos/1.0/container/" \
        xmlns:Item="http://ns.google.com/photos/1.0/container/item/" \
        xmlns:hdrgm="\(GainMapMetadata.xmpNamespace)" hdrgm:Version="1.0"><Container:Directory><rdf:Seq>\
        <rdf:li rdf:parseType="Resource"><Container:Item Item:Semantic="Primary" Item:Mime="image/jpeg"/></rdf:li>\
        <rdf:li rdf:parseType="Resource"><Container:Item Item:Semantic="GainMap" Item:Mime="image/jpeg" \
        Item:Length="\(gainMapLength)"/></rdf:li></rdf:Seq></Container:Directory></rdf:Description></rdf:RDF>\
        </x:xmpmeta>
        """
    }

    /// The gain map's XMP: every `hdrgm` parameter, per channel as an `rdf:Seq` when the channels differ.
    static func gainMapXMP(_ m: GainMapMetadata) -> String {
        func number(_ v: Double) -> String { String(format: "%.6f", v) }
        var attributes = "hdrgm:Version=\"1.0\" hdrgm:BaseRenditionIsHDR=\"\(m.baseIsHDR ? "True" : "False")\""
        attributes += " hdrgm:HDRCapacityMin=\"\(number(m.baseHeadroom))\""
        attributes += " hdrgm:HDRCapacityMax=\"\(number(m.alternateHeadroom))\""
        var elements = ""
        for (name, values) in [
            ("GainMapMin", m.gainMapMin), ("GainMapMax", m.gainMapMax), ("Gamma", m.gamma),
            ("OffsetSDR", m.baseOffset), ("OffsetHDR", m.alternateOffset),
        ] {
            if values.allSatisfy({ $0 == values[0] }) {
                attributes += " hdrgm:\(name)=\"\(number(values[0]))\""
            } else {
                let items = values.map { "<rdf:li>\(number($0))</rdf:li>" }.joined()
                elements += "<hdrgm:\(name)><rdf:Seq>\(items)</rdf:Seq></hdrgm:\(name)>"
            }
        }
        return """
            <x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">\
            <rdf:Description xmlns:hdrgm="\(GainMapMetadata.xmpNamespace)" \(attributes)>\(elements)</rdf:Description>\
            </rdf:RDF></x:xmpmeta>
            """
    }

    /// The ISO 21496-1 record (after its signature): version 0, one common denominator of 2^20, one channel's
    /// values or three.
    static func isoRecord(_ m: GainMapMetadata) -> [UInt8] {
        let denominator = 1 << 20
        let channels = m.isMultichannel ? 3 : 1
        var flags: UInt8 = 0x08
        if channels == 3 { flags |= 0x80 }
        if m.usesBaseColorSpace { flags |= 0x40 }
        if m.baseIsHDR { flags |= 0x04 }
        var out: [UInt8] = [0, 0, 0, 0, flags]
        func signed(_ v: Double) {
            out.appendBigEndian(UInt32(bitPattern: Int32(clamping: Int((v * Double(denominator)).rounded()))))
        }
        func unsigned(_ v: Double) {
            out.appendBigEndian(UInt32(clamping: max(0, Int((v * Double(denominator)).rounded()))))
        }
        out.appendBigEndian(UInt32(denominator))
        unsigned(m.baseHeadroom)
        unsigned(m.alternateHeadroom)
        for c in 0..<channels {
            signed(m.gainMapMin[c])
            signed(m.gainMapMax[c])
            unsigned(m.gamma[c])
            signed(m.baseOffset[c])
            signed(m.alternateOffset[c])
        }
        return out
    }
}

extension [UInt8] {
    /// Appends `value`'s bytes, most significant first.
    fileprivate mutating func appendBigEndian<T: FixedWidthInteger>(_ value: T) {
        Swift.withUnsafeBytes(of: value.bigEndian) { append(contentsOf: $0) }
    }
}
