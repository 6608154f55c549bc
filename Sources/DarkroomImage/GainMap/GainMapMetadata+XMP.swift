import Foundation

extension GainMapMetadata {
    /// The namespace of Adobe's gain-map XMP properties (`hdrgm:`), as Ultra HDR JPEGs write them.
    static let xmpNamespace = "http://ns.adobe.com/hdr-gain-map/1.0/"

    /// The signature that opens an XMP packet in a JPEG APP1 segment.
    package static let xmpPacketSignature: [UInt8] = Array("http://ns.adobe.com/xap/1.0/\0".utf8)

    /// What an XMP packet says about a gain map.
    struct XMPReading: Sendable, Equatable {
        /// The metadata, when the packet holds the full set (the gain map image's packet; some writers repeat it
        /// in the primary's); nil when it only names the version (a primary image's packet).
        var metadata: GainMapMetadata?
        /// The byte length the packet's `Container:Directory` gives the gain-map item, when it lists one.
        var containerItemLength: Int?
    }

    /// Reads the `hdrgm` properties of an XMP packet, written as attributes (`hdrgm:GainMapMax="2.5"`) or as
    /// elements, each value a real or an `rdf:Seq` of three. Nil when the packet does not use the namespace.
    /// Defaults follow Adobe's gain-map specification (gamma 1, offsets 1/64, capacity min 0, SDR base).
    ///
    /// A scan for names and values, not an XML parser: the properties are flat, and an XMP packet in a JPEG
    /// segment is at most 64 KiB, so it costs one pass over at most that.
    ///
    /// - Throws: ``GainMapMetadataError`` when the namespace is used but a value is not a number, or the packet
    ///   names `GainMapMax` without `HDRCapacityMax`.
    static func parseXMP(_ text: Substring) throws(GainMapMetadataError) -> XMPReading? {
        guard let prefix = XMPScanner.prefix(boundTo: xmpNamespace, in: text) else { return nil }
        let scanner = XMPScanner(text: text)
        var reading = XMPReading()
        if let length = scanner.containerItems().first(where: { $0.semantic == "GainMap" })?.length {
            reading.containerItemLength = length
        }
        guard let maximum = try scanner.numbers(prefix + ":GainMapMax") else { return reading }
        guard let capacityMax = try scanner.numbers(prefix + ":HDRCapacityMax")?.first else {
            throw GainMapMetadataError("the gain-map XMP gives GainMapMax but no HDRCapacityMax")
        }
        let baseIsHDR = scanner.value(prefix + ":BaseRenditionIsHDR").map { $0.lowercased() == "true" } ?? false
        reading.metadata = GainMapMetadata(
            gainMapMin: try scanner.numbers(prefix + ":GainMapMin") ?? [0], gainMapMax: maximum,
            gamma: try scanner.numbers(prefix + ":Gamma") ?? [1],
            baseOffset: try scanner.numbers(prefix + ":OffsetSDR") ?? [1.0 / 64],
            alternateOffset: try scanner.numbers(prefix + ":OffsetHDR") ?? [1.0 / 64],
            baseHeadroom: try scanner.numbers(prefix + ":HDRCapacityMin")?.first ?? 0,
            alternateHeadroom: capacityMax, baseIsHDR: baseIsHDR)
        return reading
    }
}

extension XMPScanner {
    /// The numbers of `name`: one for a single value, three for an `rdf:Seq` of `rdf:li` items.
    func numbers(_ name: String) throws(GainMapMetadataError) -> [Double]? {
        var items: [String]
        if let attribute = attributeValue(name) {
            items = [attribute]
        } else if let open = text.range(of: "<" + name + ">"),
            let close = text[open.upperBound...].range(of: "</" + name + ">")
        {
            let body = text[open.upperBound..<close.lowerBound]
            items = Self.listItems(body)
            if items.isEmpty { items = [String(body)] }
        } else {
            return nil
        }
        var values: [Double] = []
        for item in items {
            guard let value = Double(item.trimmingCharacters(in: .whitespacesAndNewlines)), value.isFinite else {
                throw GainMapMetadataError("the gain-map XMP value \(name) is \"\(item.prefix(40))\", not a number")
            }
            values.append(value)
        }
        guard values.count == 1 || values.count == 3 else {
            throw GainMapMetadataError("the gain-map XMP value \(name) has \(values.count) items, not 1 or 3")
        }
        return values
    }
}
