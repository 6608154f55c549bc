import DarkroomSupport
import DarkroomTestSupport
import Foundation
import Testing

@testable import DarkroomImage

/// Ultra HDR JPEGs: the gain map found and its parameters read in both metadata forms, the SDR decode left the base
/// image, and the gain map applied as libultrahdr applies it. The files come from two writers Darkroom did not
/// write (``GainMapSamples``: libultrahdr 1.4 through imagecodecs, ISO 21496-1 metadata only; pyultrahdr, hdrgm XMP
/// and a hand-built MPF index), with libultrahdr's own decodes beside them.
@Suite(.serialized) struct GainMapTests {
    static func path(_ writer: String, _ suffix: String = ".jpg") throws -> String {
        try GainMapSamples.path(writer, suffix)
    }

    static func floats(_ path: String) throws -> [Float] {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        return data.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
    }

    struct Reference: Decodable {
        let width: Int
        let height: Int
        let maxGainStops: Double
    }

    static func reference(_ writer: String) throws -> Reference {
        try JSONDecoder().decode(Reference.self, from: Data(contentsOf: URL(fileURLWithPath: path(writer, ".json"))))
    }

    // MARK: Reading

    @Test(arguments: ["iso", "xmp"])
    func theGainMapAndItsParametersAreRead(_ writer: String) throws {
        // Given an Ultra HDR JPEG from libultrahdr (ISO 21496-1) or pyultrahdr (XMP), its gain map at 1/4 size
        let bytes = try SamplePhotos.bytes(Self.path(writer))
        // When it is probed for a gain map
        let details = try #require(ImageProber.gainMap(of: bytes))
        // Then the MPF index led to it, its size is read and its parameters come from the form the writer used
        #expect(details.container == "jpeg-mpf")
        #expect(details.metadataFormat == (writer == "iso" ? "iso21496-1" : "xmp"))
        #expect(details.width == 160 && details.height == 100, "\(details.width)×\(details.height)")
        #expect(details.warning == nil)
        #expect(details.isUsable)
        let metadata = try #require(details.metadata)
        // and the largest gain libultrahdr applies lies within the range the metadata gives
        let reference = try Self.reference(writer)
        #expect(metadata.gainMapMin[0] <= 0.001)
        #expect(metadata.gainMapMax[0] >= reference.maxGainStops - 0.05, "\(metadata.gainMapMax) \(reference)")
        #expect(metadata.alternateHeadroom > 0 && !metadata.baseIsHDR)
        if writer == "xmp" {
            // pyultrahdr writes HDRCapacityMax = log2(1000 / 203) and the gain map's own maximum
            #expect(abs(metadata.alternateHeadroom - log2(1000.0 / 203)) < 1e-4)
            #expect(abs(metadata.gainMapMax[0] - reference.maxGainStops) < 0.02)
        }
    }

    @Test func anSDRJPEGHasNoGainMap() throws {
        // Given a plain camera JPEG, and one with an MPF index but no gain-map metadata (a camera's preview)
        let plain = try SamplePhotos.bytes(SamplePhotos.path("jpeg-12mp/fallenleaf-4032x3024.jpg"))
        // When either is probed for a gain map, Then there is none
        #expect(ImageProber.gainMap(of: plain) == nil)
        let withPreview = try Self.replacing(
            SamplePhotos.bytes(Self.path("xmp")), Array("hdr-gain-map".utf8), with: Array("hdr-gain-max".utf8))
        #expect(ImageProber.gainMap(of: withPreview) == nil)
    }

    // MARK: Decoding

    @Test(arguments: ["iso", "xmp"])
    func theSDRDecodeIsTheBaseImage(_ writer: String) throws {
        // Given an Ultra HDR JPEG and its base image as Pillow decodes it
        let bytes = try SamplePhotos.bytes(Self.path(writer))
        let base = try ImageDecoder().decode(
            SamplePhotos.bytes(Self.path(writer, "-base.png")),
            options: DecodeOptions(pixelFormat: .exactly(.rgba8), colorSpace: .original))
        // When it is decoded as stored
        let decoded = try ImageDecoder().decode(
            bytes, options: DecodeOptions(pixelFormat: .exactly(.rgba8), colorSpace: .original))
        // Then it is the base image, no mix with the gain map
        let psnr = PixelCompare.psnr(decoded.bitmap, base.bitmap)
        #expect(psnr >= 50, "\(writer): \(psnr) dB")
    }

    @Test(arguments: ["iso", "xmp"])
    func theGainMapAppliesAsLibultrahdrAppliesIt(_ writer: String) throws {
        // Given an Ultra HDR JPEG and libultrahdr's own gains (its HDR decode over its SDR decode, per pixel)
        let bytes = try SamplePhotos.bytes(Self.path(writer))
        let reference = try Self.reference(writer)
        let referenceGain = try Self.floats(Self.path(writer, "-gain.f32"))
        let metadata = try #require(ImageProber.gainMap(of: bytes)?.metadata)
        // When its HDR rendition is decoded at full size for a display with the full headroom, and with none
        let (hdr, sdr) = try bytes.withUnsafeBytes { raw in
            (
                try ImageDecoder().decodeHDRRendition(
                    raw, options: DecodeOptions(), displayHeadroom: metadata.alternateHeadroom),
                try ImageDecoder().decodeHDRRendition(raw, options: DecodeOptions(), displayHeadroom: 0)
            )
        }
        #expect(hdr.weight == 1 && sdr.weight == 0)
        #expect(hdr.width == reference.width && hdr.height == reference.height)
        // Then each pixel's gain agrees with libultrahdr's (the map sampled as it samples it)
        var errors: [Double] = []
        for i in 0..<hdr.pixels.count where sdr.pixels[i] > 0.01 {
            errors.append(abs(Double(log2(hdr.pixels[i] / sdr.pixels[i])) - Double(referenceGain[i])))
        }
        errors.sort()
        let mean = errors.reduce(0, +) / Double(errors.count)
        let p99 = errors[errors.count * 99 / 100]
        #expect(mean < 0.01, "\(writer): mean \(mean) stops")
        #expect(p99 < 0.02, "\(writer): p99 \(p99) stops")
        // and the light itself agrees, PQ-coded at 203 nits per SDR white
        let referenceLight = try Self.floats(Self.path(writer, "-hdr.f32"))
        var squared = 0.0
        for i in 0..<hdr.pixels.count {
            let a = HDRTransfer.nitsToPQ(Double(hdr.pixels[i]) * HDRTransfer.referenceWhiteNits)
            let b = HDRTransfer.nitsToPQ(Double(referenceLight[i]) * HDRTransfer.referenceWhiteNits)
            squared += (a - b) * (a - b)
        }
        let psnr = 10 * log10(1 / (squared / Double(hdr.pixels.count)))
        print("gain map \(writer): gain error mean \(mean), p99 \(p99) stops; HDR light \(psnr) dB (PQ)")
        #expect(psnr >= 50, "\(writer): \(psnr) dB")
        // and at headroom 0 the rendition is the base image in linear light
        #expect(sdr.pixels.max()! <= 1.0001)
        #expect(hdr.pixels.max()! > 2)
    }

    // MARK: Keeping the gain map

    struct ThumbnailCheck: Decodable {
        let width: Int
        let height: Int
        let gainMapWidth: Int
        let gainMapHeight: Int
        /// nil for an iPhone HEIC source, whose map is coded by another rule.
        let gainMapPSNR: Double?
        let hdrPSNR: Double
        let sdrPSNR: Double
    }

    @Test(arguments: ["iso", "xmp"])
    func aKeptThumbnailIsUltraHDRThatLibultrahdrReads(_ writer: String) throws {
        // Given an Ultra HDR JPEG from either writer
        let source = try Self.path(writer)
        let bytes = try SamplePhotos.bytes(source)
        let sourceDetails = try #require(ImageProber.gainMap(of: bytes))
        // When a 256 px JPEG thumbnail keeps its HDR
        let thumbnail = try #require(
            try bytes.withUnsafeBytes { raw in
                try ImageEncoder.encodeUltraHDRThumbnail(raw, options: DecodeOptions(size: .maxPixelSize(256)))
            })
        // Then Darkroom reads it back as Ultra HDR, the gain map at the source's proportion, the parameters the same
        let details = try #require(ImageProber.gainMap(of: thumbnail))
        #expect(details.isUsable && details.metadataFormat == "iso21496-1")
        #expect(details.width == 64 && details.height == 40, "\(details.width)×\(details.height)")
        #expect(details.channels == sourceDetails.channels)
        let metadata = try #require(details.metadata)
        let expected = try #require(sourceDetails.metadata)
        #expect(Self.close(metadata, expected), "\(metadata) vs \(expected)")
        // and its XMP form says the same once the ISO record is hidden
        let xmpOnly = try Self.replacing(
            thumbnail, Array("urn:iso:std:iso:ts:21496:-1".utf8), with: Array("urn:xxx:std:iso:ts:21496:-1".utf8))
        let fromXMP = try #require(ImageProber.gainMap(of: xmpOnly)?.metadata)
        #expect(ImageProber.gainMap(of: xmpOnly)?.metadataFormat == "xmp")
        #expect(Self.close(fromXMP, expected), "\(fromXMP) vs \(expected)")
        // and libultrahdr decodes it as Ultra HDR: its HDR rendition is the source's, reduced, as closely as its
        // SDR rendition is (the floor that resampling and re-encoding set)
        let path = try TemporaryDirectory.make("gainmap-keep") + "/thumb.jpg"
        try TemporaryDirectory.write(thumbnail, to: path)
        let check = try JSONDecoder().decode(
            ThumbnailCheck.self,
            from: PythonReference.script("scripts/check-ultrahdr-thumbnail.py", [path, source]))
        #expect(check.width == 256 && check.height == 160)
        #expect(check.gainMapWidth == 64 && check.gainMapHeight == 40)
        #expect((check.gainMapPSNR ?? 0) >= 28, "\(writer): gain map \(String(describing: check.gainMapPSNR)) dB")
        #expect(check.sdrPSNR >= 30, "\(writer): SDR \(check.sdrPSNR) dB")
        #expect(
            check.hdrPSNR >= 30 && check.hdrPSNR >= check.sdrPSNR - 4,
            "\(writer): HDR \(check.hdrPSNR) dB, SDR \(check.sdrPSNR) dB")
        print("gain map keep \(writer): \(check)")
    }

    @Test func keepFallsBackWhereTheMapCannotFollow() throws {
        // Given an Ultra HDR JPEG and a plain one
        let bytes = try SamplePhotos.bytes(Self.path("xmp"))
        let plain = try SamplePhotos.bytes(SamplePhotos.path("jpeg/colorfulcups-2560x1600.jpg"))
        // When either is asked for an Ultra HDR thumbnail that crops, or the plain one at all
        let cropped = try bytes.withUnsafeBytes { raw in
            try ImageEncoder.encodeUltraHDRThumbnail(raw, options: DecodeOptions(size: .cover(width: 64, height: 64)))
        }
        let none = try plain.withUnsafeBytes { raw in
            try ImageEncoder.encodeUltraHDRThumbnail(raw, options: DecodeOptions(size: .maxPixelSize(64)))
        }
        // Then there is none, and the caller writes the SDR thumbnail
        #expect(cropped == nil && none == nil)
    }

    static func close(_ a: GainMapMetadata, _ b: GainMapMetadata) -> Bool {
        let x =
            a.gainMapMin + a.gainMapMax + a.gamma + a.baseOffset + a.alternateOffset + [
                a.baseHeadroom, a.alternateHeadroom,
            ]
        let y =
            b.gainMapMin + b.gainMapMax + b.gamma + b.baseOffset + b.alternateOffset + [
                b.baseHeadroom, b.alternateHeadroom,
            ]
        return zip(x, y).allSatisfy { abs($0 - $1) < 1e-5 } && a.baseIsHDR == b.baseIsHDR
    }

    // MARK: Damaged files

    @Test func aFileCutAfterItsPrimaryImageWarnsAndDecodesTheBase() throws {
        // Given an Ultra HDR JPEG cut where its gain map starts (a transfer that stopped early)
        let bytes = try SamplePhotos.bytes(Self.path("xmp"))
        let start = try #require(Self.secondJPEG(in: bytes))
        let cut = Array(bytes[..<start])
        // When it is probed and decoded
        let details = try #require(ImageProber.gainMap(of: cut))
        let decoded = try ImageDecoder().decode(cut, options: DecodeOptions(pixelFormat: .exactly(.rgba8)))
        let whole = try ImageDecoder().decode(bytes, options: DecodeOptions(pixelFormat: .exactly(.rgba8)))
        // Then the probe warns, and the decode is the base image, the same as the whole file's
        #expect(details.warning?.contains("MPF index lists no gain map") == true, "\(details.warning ?? "")")
        #expect(!details.isUsable)
        #expect(decoded.bitmap.pixelsEqual(whole.bitmap))
        #expect(throws: DarkroomImageError.self) {
            try cut.withUnsafeBytes {
                try ImageDecoder().decodeHDRRendition($0, options: DecodeOptions(), displayHeadroom: 3)
            }
        }
    }

    @Test func damagedParametersWarn() throws {
        // Given the XMP file with a GainMapMax that is not a number, and the ISO file with a zero denominator
        let xmp = try SamplePhotos.bytes(Self.path("xmp"))
        let badXMP = try Self.replacing(
            xmp, Array("hdrgm:GainMapMax=\"2".utf8), with: Array("hdrgm:GainMapMax=\"x".utf8))
        let iso = try SamplePhotos.bytes(Self.path("iso"))
        let record = try #require(Self.lastRange(of: GainMapMetadata.isoSignature, in: iso))
        var badISO = iso
        // The base headroom's denominator: after the version pair, the flags byte and its numerator
        for i in 0..<4 { badISO[record.upperBound + 4 + 1 + 4 + i] = 0 }
        // When they are probed
        let xmpDetails = try #require(ImageProber.gainMap(of: badXMP))
        let isoDetails = try #require(ImageProber.gainMap(of: badISO))
        // Then each warns of its fault and cannot be applied; the SDR decode is untouched
        #expect(xmpDetails.warning?.contains("not a number") == true, "\(xmpDetails.warning ?? "")")
        #expect(isoDetails.warning?.contains("zero denominator") == true, "\(isoDetails.warning ?? "")")
        #expect(!xmpDetails.isUsable && !isoDetails.isUsable)
        let decoded = try ImageDecoder().decode(badISO, options: DecodeOptions(pixelFormat: .exactly(.rgba8)))
        let whole = try ImageDecoder().decode(iso, options: DecodeOptions(pixelFormat: .exactly(.rgba8)))
        #expect(decoded.bitmap.pixelsEqual(whole.bitmap))
    }

    @Test(arguments: ["iso", "xmp"])
    func gainMapsAndRecordsOverTheLimitsWarnAndDecodeTheBase(_ writer: String) throws {
        // Given an Ultra HDR JPEG, its gain map and its metadata as read under the default limits
        let bytes = try SamplePhotos.bytes(Self.path(writer))
        let read = try #require(ImageProber.gainMap(of: bytes))
        #expect(read.isUsable && read.width * read.height > 1)
        // When it is probed with a gain-map pixel limit one under its map, and with a metadata limit of 50 bytes
        // (over a primary's version-only ISO record, under the gain map's full record and every XMP packet)
        var pixels = DecodeLimits()
        pixels.maxGainMapPixels = read.width * read.height - 1
        var metadata = DecodeLimits()
        metadata.maxGainMapMetadataBytes = 50
        let overPixels = try #require(ImageProber.gainMap(of: bytes, limits: pixels))
        let overMetadata = try #require(ImageProber.gainMap(of: bytes, limits: metadata))
        // Then each warns naming its limit and cannot be applied, and the decode is the base image as before
        #expect(overPixels.warning?.contains("maxGainMapPixels") == true, "\(overPixels.warning ?? "")")
        #expect(overMetadata.warning?.contains("maxGainMapMetadataBytes") == true, "\(overMetadata.warning ?? "")")
        #expect(!overPixels.isUsable && !overMetadata.isUsable)
        let whole = try ImageDecoder().decode(bytes, options: DecodeOptions(pixelFormat: .exactly(.rgba8)))
        for limits in [pixels, metadata] {
            let options = DecodeOptions(pixelFormat: .exactly(.rgba8), limits: limits)
            let decoded = try ImageDecoder().decode(bytes, options: options)
            #expect(decoded.bitmap.pixelsEqual(whole.bitmap))
            #expect(throws: DarkroomImageError.self) {
                try bytes.withUnsafeBytes {
                    _ = try ImageDecoder().decodeHDRRendition($0, options: options, displayHeadroom: 3)
                }
            }
        }
    }

    @Test func everyPrefixAndEveryDamagedByteIsRefusedOrRead() throws {
        // Given both files cut at many lengths and with bytes flipped through their metadata
        for writer in ["iso", "xmp"] {
            let bytes = try SamplePhotos.bytes(Self.path(writer))
            let second = try #require(Self.secondJPEG(in: bytes))
            // When each is probed for a gain map, Then none crashes, and a usable map always lies in the file
            for length in Array(stride(from: 2, to: bytes.count, by: 997)) + Array(second - 8...second + 600) {
                let prefix = Array(bytes[..<min(length, bytes.count)])
                if let details = ImageProber.gainMap(of: prefix), details.isUsable {
                    #expect(details.byteCount <= prefix.count)
                }
            }
            for position in Array(0..<2_000) + Array(second..<second + 600) {
                var damaged = bytes
                damaged[position] ^= 0x5A
                _ = ImageProber.gainMap(of: damaged)
            }
        }
    }

    // MARK: Metadata parsers

    @Test func isoRecordsWithACommonDenominatorAndThreeChannelsAreRead() throws {
        // Given an ISO 21496-1 record with the multichannel, base-colour-space and common-denominator flags
        var record: [UInt8] = [0, 0, 0, 0, 0x80 | 0x40 | 0x08]
        func u32(_ v: Int32) { record += withUnsafeBytes(of: UInt32(bitPattern: v).bigEndian, Array.init) }
        u32(1000)  // the common denominator
        u32(0)  // base headroom 0
        u32(2500)  // alternate headroom 2.5
        for channel in 0..<3 {
            u32(Int32(-500 + channel * 100))  // min
            u32(Int32(3000 + channel))  // max
            u32(1000)  // gamma 1
            u32(16)  // base offset 0.016
            u32(-8)  // alternate offset −0.008
        }
        // When it is parsed
        let metadata = try #require(try record.withUnsafeBytes { try GainMapMetadata.parseISO($0) })
        // Then every value is the fraction over the common denominator, per channel
        #expect(metadata.alternateHeadroom == 2.5 && metadata.baseHeadroom == 0)
        #expect(metadata.gainMapMin == [-0.5, -0.4, -0.3])
        #expect(metadata.gainMapMax == [3.0, 3.001, 3.002])
        #expect(metadata.alternateOffset == [-0.008, -0.008, -0.008])
        #expect(metadata.isMultichannel && metadata.usesBaseColorSpace && !metadata.baseIsHDR)
        // and the version-only record of a primary image is no metadata, while a cut record is an error
        let versionOnly: [UInt8] = [0, 0, 0, 0]
        let primaryRecord = try versionOnly.withUnsafeBytes { raw in try GainMapMetadata.parseISO(raw) }
        #expect(primaryRecord == nil)
        let cut = Array(record.prefix(20))
        #expect(throws: GainMapMetadataError.self) {
            _ = try cut.withUnsafeBytes { raw in try GainMapMetadata.parseISO(raw) }
        }
    }

    @Test func xmpPropertiesAsElementsAndSequencesAreRead() throws {
        // Given hdrgm properties written as elements, one of them an rdf:Seq of three, under another prefix
        let packet = """
            <x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">
            <rdf:Description xmlns:g="http://ns.adobe.com/hdr-gain-map/1.0/" g:Version="1.0">
            <g:GainMapMax><rdf:Seq><rdf:li>2.5</rdf:li><rdf:li>2.0</rdf:li><rdf:li>1.5</rdf:li></rdf:Seq></g:GainMapMax>
            <g:HDRCapacityMax>2.5</g:HDRCapacityMax><g:BaseRenditionIsHDR>False</g:BaseRenditionIsHDR>
            </rdf:Description></rdf:RDF></x:xmpmeta>
            """
        // When it is parsed
        let metadata = try #require(try GainMapMetadata.parseXMP(packet[...])?.metadata)
        // Then the sequence gives three channels and the rest take the specification's defaults
        #expect(metadata.gainMapMax == [2.5, 2.0, 1.5])
        #expect(metadata.gainMapMin == [0, 0, 0] && metadata.gamma == [1, 1, 1])
        let defaultOffset: Double = 1.0 / 64
        #expect(metadata.baseOffset == [defaultOffset, defaultOffset, defaultOffset])
        #expect(metadata.alternateHeadroom == 2.5 && metadata.isMultichannel)
        // and a packet that only names the version marks a gain map without parameters
        let primary = #"<rdf:Description xmlns:hdrgm="http://ns.adobe.com/hdr-gain-map/1.0/" hdrgm:Version="1.0"/>"#
        let reading = try #require(try GainMapMetadata.parseXMP(primary[...]))
        #expect(reading.metadata == nil)
    }

    @Test func theWeightFollowsTheDisplayHeadroom() {
        // Given parameters that apply from 1 to 3 stops of headroom
        let metadata = GainMapMetadata(gainMapMin: [0], gainMapMax: [3], baseHeadroom: 1, alternateHeadroom: 3)
        // When displays of several headrooms ask, Then the weight is 0 below, 1 above and linear between
        #expect(metadata.weight(displayHeadroom: 0) == 0)
        #expect(metadata.weight(displayHeadroom: 2) == 0.5)
        #expect(metadata.weight(displayHeadroom: 5) == 1)
    }

    // MARK: Helpers

    static func secondJPEG(in bytes: [UInt8]) -> Int? {
        lastRange(of: [0xFF, 0xD8, 0xFF], in: bytes).flatMap { $0.lowerBound > 0 ? $0.lowerBound : nil }
    }

    static func lastRange(of needle: [UInt8], in bytes: [UInt8]) -> Range<Int>? {
        guard bytes.count >= needle.count else { return nil }
        for start in stride(from: bytes.count - needle.count, through: 0, by: -1)
        where bytes[start..<start + needle.count].elementsEqual(needle) {
            return start..<start + needle.count
        }
        return nil
    }

    static func replacing(_ bytes: [UInt8], _ old: [UInt8], with new: [UInt8]) throws -> [UInt8] {
        precondition(old.count == new.count)
        var out = bytes
        var found = false
        var i = 0
        while i + old.count <= out.count {
            if out[i..<i + old.count].elementsEqual(old) {
                out.replaceSubrange(i..<i + old.count, with: new)
                found = true
                i += old.count
            } else {
                i += 1
            }
        }
        guard found else {
            throw TestSupportError("the sample does not contain \(String(decoding: old, as: UTF8.self))")
        }
        return out
    }
}
