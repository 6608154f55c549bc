/// Where an Ultra HDR JPEG keeps its gain map and its parameters.
///
/// The primary JPEG marks the gain map with an `hdrgm` XMP packet or an ISO 21496-1 record (version only) and
/// lists the gain map JPEG in its Multi-Picture Format index; the gain map JPEG carries the parameters, as an ISO
/// 21496-1 record, an `hdrgm` XMP packet or both (the ISO record wins, as libultrahdr reads them). Some writers
/// put the full XMP in the primary only: that is read last. Without an MPF index, a `Container:Directory`
/// `GainMap` item of known length at the end of the file is used.
struct UltraHDRLayout: Sendable {
    /// The gain map JPEG's bytes within the file; nil when it could not be found.
    var gainMap: Range<Int>?
    /// What the probe reports.
    var details: GainMapDetails

    /// The layout of `bytes` (a whole JPEG), or nil when its primary marks no gain map.
    static func locate(in bytes: UnsafeRawBufferPointer, limits: DecodeLimits) -> UltraHDRLayout? {
        let primary = MetadataSegments(bytes, range: 0..<bytes.count, limits: limits)
        guard primary.marksGainMap else { return nil }

        var details = GainMapDetails(
            container: "jpeg-mpf", metadataFormat: nil, width: 0, height: 0, channels: 0, byteCount: 0,
            metadata: nil, warning: nil)
        var problems: [String] = primary.problems

        // The gain map JPEG: the first secondary MPF image that is a JPEG marking gain-map metadata.
        var found: (range: Range<Int>, segments: MetadataSegments)?
        if let index = primary.multiPicture {
            for entry in index.entries.dropFirst() where entry.range.lowerBound > 0 {
                let segments = MetadataSegments(bytes, range: entry.range, limits: limits)
                if segments.isJPEG, segments.marksGainMap {
                    found = (entry.range, segments)
                    break
                }
            }
            if found == nil { problems.append("the MPF index lists no gain map JPEG") }
        } else if let length = primary.xmp?.containerItemLength, length > 0, length < bytes.count {
            let range = (bytes.count - length)..<bytes.count
            let segments = MetadataSegments(bytes, range: range, limits: limits)
            if segments.isJPEG { found = (range, segments) }
            if found == nil { problems.append("the XMP container's GainMap item is not a JPEG at the end of the file") }
        } else {
            problems.append("the file marks a gain map but has no MPF index to find it by")
        }

        // The parameters: the gain map's ISO record, its XMP, else the primary's XMP.
        let candidates: [(GainMapMetadata?, String)] = [
            (found?.segments.isoMetadata, "iso21496-1"), (found?.segments.xmp?.metadata, "xmp"),
            (primary.xmp?.metadata, "xmp"),
        ]
        if let (metadata, format) = candidates.first(where: { $0.0 != nil }) {
            details.metadata = metadata
            details.metadataFormat = format
            if let problem = metadata?.problem { problems.append(problem) }
            if metadata?.baseIsHDR == true {
                problems.append("an HDR base image (BaseRenditionIsHDR) is not supported")
            }
        } else {
            problems.append(contentsOf: found?.segments.problems ?? [])
            problems.append("no gain-map parameters (ISO 21496-1 or hdrgm XMP) were found")
        }

        var layout = UltraHDRLayout(gainMap: nil, details: details)
        if let found {
            layout.gainMap = found.range
            layout.details.byteCount = found.range.count
            let slice = UnsafeRawBufferPointer(rebasing: bytes[found.range])
            do {
                let probe = try ImageProber.probe(slice, limits: limits)
                layout.details.width = probe.width
                layout.details.height = probe.height
                layout.details.channels = probe.isGrayscale ? 1 : 3
                if probe.width * probe.height > limits.maxGainMapPixels {
                    problems.append(
                        "the gain map (\(probe.width)×\(probe.height)) is over maxGainMapPixels (\(limits.maxGainMapPixels))"
                    )
                } else if let base = try? ImageProber.probe(bytes, limits: limits),
                    probe.width > base.width || probe.height > base.height
                {
                    problems.append(
                        "the gain map (\(probe.width)×\(probe.height)) is larger than its base image "
                            + "(\(base.width)×\(base.height))")
                }
            } catch {
                problems.append("the gain map JPEG cannot be read: \(error.message)")
            }
        }
        layout.details.warning = problems.isEmpty ? nil : problems.joined(separator: "; ")
        return layout
    }
}

/// The gain-map-related segments of one JPEG within a file: its XMP packet, its ISO 21496-1 record and its MPF
/// index.
private struct MetadataSegments {
    var isJPEG = false
    var xmp: GainMapMetadata.XMPReading?
    /// The full ISO 21496-1 record; nil when absent or version-only.
    var isoMetadata: GainMapMetadata?
    var hasISORecord = false
    var multiPicture: MultiPictureIndex?
    var problems: [String] = []

    var marksGainMap: Bool { xmp != nil || hasISORecord }

    private static let xmpSignature = GainMapMetadata.xmpPacketSignature

    /// Reads the segments of the JPEG at `range` of `file`; metadata records over
    /// ``DecodeLimits/maxGainMapMetadataBytes`` are not parsed (a problem says so).
    init(_ file: UnsafeRawBufferPointer, range: Range<Int>, limits: DecodeLimits) {
        let bytes = UnsafeRawBufferPointer(rebasing: file[range])
        isJPEG = bytes.count >= 3 && bytes[0] == 0xFF && bytes[1] == 0xD8 && bytes[2] == 0xFF
        guard isJPEG else { return }
        let maxBytes = limits.maxGainMapMetadataBytes
        func overLimit(_ what: String, _ payload: UnsafeRawBufferPointer) -> Bool {
            guard payload.count > maxBytes else { return false }
            problems.append("the \(what) of \(payload.count) bytes is over maxGainMapMetadataBytes (\(maxBytes))")
            return true
        }
        for segment in JPEGSegments(bytes) {
            let payload = UnsafeRawBufferPointer(rebasing: bytes[segment.payload])
            if segment.marker == 0xE1, xmp == nil, payload.starts(with: Self.xmpSignature) {
                // A large packet that is not about a gain map (an editor's history) is left alone
                if payload.count > maxBytes, payload.firstRange(of: Array("hdrgm".utf8)) != nil {
                    xmp = GainMapMetadata.XMPReading()
                    _ = overLimit("gain-map XMP packet", payload)
                    continue
                }
                guard payload.count <= maxBytes else { continue }
                let text = String(decoding: payload.dropFirst(Self.xmpSignature.count), as: UTF8.self)
                do { xmp = try GainMapMetadata.parseXMP(text[...]) } catch {
                    xmp = GainMapMetadata.XMPReading()
                    problems.append(error.message)
                }
            } else if segment.marker == 0xE2, !hasISORecord, payload.starts(with: GainMapMetadata.isoSignature) {
                hasISORecord = true
                guard !overLimit("ISO 21496-1 record", payload) else { continue }
                do {
                    isoMetadata = try GainMapMetadata.parseISO(
                        UnsafeRawBufferPointer(rebasing: payload.dropFirst(GainMapMetadata.isoSignature.count)))
                } catch {
                    problems.append(error.message)
                }
            } else if segment.marker == 0xE2, multiPicture == nil, payload.starts(with: MultiPictureIndex.signature) {
                multiPicture = MultiPictureIndex(
                    payload: payload, payloadOffset: range.lowerBound + segment.payload.lowerBound,
                    fileLength: file.count)
            }
        }
    }
}
