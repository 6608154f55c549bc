import Foundation

/// How a gain map turns its base image into the other rendition (ISO 21496-1; Adobe's `hdrgm` XMP says the same
/// in other words): per colour channel, the range of log2 gains the map's 0…1 samples span, the gamma they are
/// coded with and the offsets added before and after the gain, and the display headrooms (log2 of peak over SDR
/// white) at which the map starts and stops applying.
///
/// A value type of a few dozen numbers, parsed from at most one metadata segment. Every array holds 3 values, one
/// per channel (R, G, B); single-channel metadata repeats its value.
public struct GainMapMetadata: Sendable, Hashable, Codable {
    /// The log2 gain a gain-map sample of 0 stands for, per channel.
    public var gainMapMin: [Double]
    /// The log2 gain a gain-map sample of 1 stands for, per channel.
    public var gainMapMax: [Double]
    /// The gamma the gain-map samples are coded with, per channel: a sample `s` stands for `s^(1/gamma)`.
    public var gamma: [Double]
    /// The offset added to the base image's linear light before the gain, per channel (`OffsetSDR` in XMP).
    public var baseOffset: [Double]
    /// The offset subtracted from the result after the gain, per channel (`OffsetHDR` in XMP).
    public var alternateOffset: [Double]
    /// The display headroom (log2) up to which the base image is shown unchanged (`HDRCapacityMin`).
    public var baseHeadroom: Double
    /// The display headroom (log2) from which the gain map applies in full (`HDRCapacityMax`).
    public var alternateHeadroom: Double
    /// Whether the base image is the HDR rendition and the map leads down to SDR (`BaseRenditionIsHDR`).
    public var baseIsHDR: Bool
    /// Whether the gain applies in the base image's colour space (else in the alternate one's, ISO 21496-1 only).
    public var usesBaseColorSpace: Bool
    /// Whether the three channels have their own values (a colour gain map).
    public var isMultichannel: Bool {
        gainMapMin.count == 3
            && !(allEqual(gainMapMin) && allEqual(gainMapMax)
                && allEqual(gamma) && allEqual(baseOffset) && allEqual(alternateOffset))
    }

    /// Creates metadata; each per-channel array takes 1 value (all channels) or 3.
    public init(
        gainMapMin: [Double], gainMapMax: [Double], gamma: [Double] = [1], baseOffset: [Double] = [1.0 / 64],
        alternateOffset: [Double] = [1.0 / 64], baseHeadroom: Double = 0, alternateHeadroom: Double,
        baseIsHDR: Bool = false, usesBaseColorSpace: Bool = true
    ) {
        func three(_ values: [Double]) -> [Double] {
            values.count == 3 ? values : Array(repeating: values.first ?? 0, count: 3)
        }
        self.gainMapMin = three(gainMapMin)
        self.gainMapMax = three(gainMapMax)
        self.gamma = three(gamma)
        self.baseOffset = three(baseOffset)
        self.alternateOffset = three(alternateOffset)
        self.baseHeadroom = baseHeadroom
        self.alternateHeadroom = alternateHeadroom
        self.baseIsHDR = baseIsHDR
        self.usesBaseColorSpace = usesBaseColorSpace
    }

    /// How much of the gain applies on a display with `headroom` (log2 of its peak over SDR white), 0…1: 0 at or
    /// below ``baseHeadroom``, 1 at or above ``alternateHeadroom``, linear in between (ISO 21496-1's weighting).
    /// For an HDR base the weight runs the other way.
    public func weight(displayHeadroom headroom: Double) -> Double {
        let span = alternateHeadroom - baseHeadroom
        guard span != 0 else { return headroom >= alternateHeadroom ? 1 : 0 }
        let w = min(max((headroom - baseHeadroom) / span, 0), 1)
        return baseIsHDR ? 1 - w : w
    }

    /// Why these values cannot be applied (a non-finite number, a gamma ≤ 0, max below min), or nil when they can.
    var problem: String? {
        let all = gainMapMin + gainMapMax + gamma + baseOffset + alternateOffset + [baseHeadroom, alternateHeadroom]
        if all.contains(where: { !$0.isFinite }) { return "a gain-map value is not a finite number" }
        if gamma.contains(where: { $0 <= 0 }) { return "a gain-map gamma is \(gamma.min() ?? 0), not above 0" }
        if zip(gainMapMin, gainMapMax).contains(where: { $0 > $1 }) {
            return "GainMapMax \(gainMapMax) is below GainMapMin \(gainMapMin)"
        }
        if alternateHeadroom < baseHeadroom {
            return "HDRCapacityMax \(alternateHeadroom) is below HDRCapacityMin \(baseHeadroom)"
        }
        if all.contains(where: { abs($0) > 64 }) { return "a gain-map value lies beyond ±64 stops" }
        return nil
    }

    private func allEqual(_ values: [Double]) -> Bool { values.allSatisfy { $0 == values.first } }
}

/// Why gain-map metadata could not be read: a message for the warning a probe reports.
struct GainMapMetadataError: Error, Sendable, Equatable {
    let message: String
    init(_ message: String) { self.message = message }
}

extension GainMapMetadata {
    /// The signature that opens ISO 21496-1 metadata in a JPEG APP2 segment.
    static let isoSignature: [UInt8] = Array("urn:iso:std:iso:ts:21496:-1\0".utf8)

    /// Parses ISO 21496-1 binary metadata (the bytes after ``isoSignature``): a version pair, a flags byte, then
    /// the headrooms and per-channel values as rationals, big-endian, with one common denominator or each its own.
    ///
    /// - Returns: nil for the version-only record a primary image carries (4 bytes: it points at the gain map's).
    /// - Throws: ``GainMapMetadataError`` for a version above 0, a zero denominator or bytes that end early.
    static func parseISO(_ bytes: UnsafeRawBufferPointer) throws(GainMapMetadataError) -> GainMapMetadata? {
        var reader = BigEndianCursor(bytes)
        let minimumVersion = try reader.u16()
        _ = try reader.u16()  // writer version: informative
        guard minimumVersion == 0 else {
            throw GainMapMetadataError("ISO 21496-1 metadata needs a reader of version \(minimumVersion); this reads 0")
        }
        if reader.isAtEnd { return nil }
        let flags = try reader.u8()
        let channels = flags & 0x80 != 0 ? 3 : 1
        let usesBaseColorSpace = flags & 0x40 != 0
        let commonDenominator = flags & 0x08 != 0
        let baseIsHDR = flags & 0x04 != 0

        let common: UInt32? = commonDenominator ? try reader.u32() : nil
        func fraction(signed: Bool) throws(GainMapMetadataError) -> Double {
            let numerator = signed ? Double(Int32(bitPattern: try reader.u32())) : Double(try reader.u32())
            let denominator: UInt32
            if let common { denominator = common } else { denominator = try reader.u32() }
            guard denominator != 0 else { throw GainMapMetadataError("ISO 21496-1 metadata has a zero denominator") }
            return numerator / Double(denominator)
        }
        let baseHeadroom = try fraction(signed: false)
        let alternateHeadroom = try fraction(signed: false)
        var minimum: [Double] = []
        var maximum: [Double] = []
        var gamma: [Double] = []
        var baseOffset: [Double] = []
        var alternateOffset: [Double] = []
        for _ in 0..<channels {
            minimum.append(try fraction(signed: true))
            maximum.append(try fraction(signed: true))
            gamma.append(try fraction(signed: false))
            baseOffset.append(try fraction(signed: true))
            alternateOffset.append(try fraction(signed: true))
        }
        return GainMapMetadata(
            gainMapMin: minimum, gainMapMax: maximum, gamma: gamma, baseOffset: baseOffset,
            alternateOffset: alternateOffset, baseHeadroom: baseHeadroom, alternateHeadroom: alternateHeadroom,
            baseIsHDR: baseIsHDR, usesBaseColorSpace: usesBaseColorSpace)
    }
}

/// Reads big-endian integers from a buffer, throwing when it ends.
private struct BigEndianCursor {
    let bytes: UnsafeRawBufferPointer
    var position = 0
    init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }
    var isAtEnd: Bool { position >= bytes.count }

    mutating func u8() throws(GainMapMetadataError) -> UInt8 {
        guard position < bytes.count else { throw GainMapMetadataError("ISO 21496-1 metadata ends early") }
        defer { position += 1 }
        return bytes[position]
    }
    mutating func u16() throws(GainMapMetadataError) -> UInt16 { UInt16(try u8()) << 8 | UInt16(try u8()) }
    mutating func u32() throws(GainMapMetadataError) -> UInt32 { UInt32(try u16()) << 16 | UInt32(try u16()) }
}
