import DarkroomTestSupport
import Foundation
import Testing

@testable import DarkroomImage

/// The one reader of TIFF-structured metadata (EXIF, Apple's maker note, the EXIF kept in thumbnails), checked
/// against IFDs Pillow writes in both byte orders.
@Suite struct IFDReaderTests {
    /// Pillow's `ImageFileDirectory_v2` with one entry of each numeric type, after a TIFF header in `order`.
    static let writer = """
        import io, sys
        from PIL import TiffImagePlugin as T
        prefix = sys.argv[1].encode()
        ifd = T.ImageFileDirectory_v2(prefix=prefix)
        for tag, kind, value in [(0x1000, 3, 513), (0x1001, 4, 70000), (0x1002, 5, T.IFDRational(7, 4)),
                                 (0x1003, 10, T.IFDRational(-3, 8)), (0x1004, 11, 0.25), (0x1005, 12, -1.5),
                                 (0x1006, 9, -42), (0x1007, 2, "Ada Lovelace")]:
            ifd.tagtype[tag] = kind
            ifd[tag] = value
        out = io.BytesIO()
        out.write(prefix + (b"\\x2a\\x00\\x08\\x00\\x00\\x00" if prefix == b"II" else b"\\x00\\x2a\\x00\\x00\\x00\\x08"))
        ifd.save(out)
        sys.stdout.buffer.write(out.getvalue())
        """

    @Test(arguments: ["II", "MM"]) func everyNumericTypeReadsAsPillowWroteIt(order: String) throws {
        // Given a TIFF block Pillow wrote in this byte order
        let tiff = [UInt8](try PythonReference.run(Self.writer, [order]))
        try tiff.withUnsafeBytes { raw in
            // When its IFD0 is read
            let ifd = try #require(IFDReader(tiff: raw))
            #expect(ifd.littleEndian == (order == "II"))
            let ifd0 = try ifd.firstIFD()
            func number(_ tag: Int) throws -> Double? {
                try ifd.entry(tag, inIFDAt: ifd0).flatMap { try ifd.number(at: $0) }
            }
            // Then each entry's value is the one written: SHORT, LONG, RATIONAL, SRATIONAL, FLOAT, DOUBLE, SLONG
            #expect(try number(0x1000) == 513 && number(0x1001) == 70000)
            #expect(try number(0x1002) == 1.75 && number(0x1003) == -0.375)
            #expect(try number(0x1004) == 0.25 && number(0x1005) == -1.5 && number(0x1006) == -42)
            #expect(try ifd.entry(0x1000, inIFDAt: ifd0).flatMap { try ifd.integer(at: $0) } == 513)
            // And the ASCII value is found past the table, an absent tag is nil, and text is not a number
            let text = try #require(try ifd.entry(0x1007, inIFDAt: ifd0))
            let range = try #require(try ifd.valueRange(of: text, size: 1))
            #expect(Array(tiff[range]) == Array("Ada Lovelace\0".utf8))
            #expect(try ifd.entry(0x2000, inIFDAt: ifd0) == nil && number(0x1007) == nil)
        }
    }

    @Test func damagedStructuresAreRefusedNotReadPastTheirEnd() throws {
        let tiff = [UInt8](try PythonReference.run(Self.writer, ["II"]))
        // Given the block cut inside its entry table, one without a TIFF header, and an offset past the end
        let cut = Array(tiff.prefix(8 + 2 + 12 * 3))
        var farValue = tiff
        farValue[8 + 2 + 12 * 2 + 8] = 0xFF  // the RATIONAL's value offset
        farValue[8 + 2 + 12 * 2 + 11] = 0x7F
        // When they are read, Then the reader answers nil or throws, never reading out of bounds
        try cut.withUnsafeBytes { raw in
            let ifd = try #require(IFDReader(tiff: raw))
            #expect(throws: ProbeStop.self) { try ifd.requireIFD(at: ifd.firstIFD()) }
            #expect(throws: ProbeStop.self) { try ifd.entry(0x1007, inIFDAt: ifd.firstIFD()) }
        }
        #expect(Array("JUNKJUNK".utf8).withUnsafeBytes { IFDReader(tiff: $0) } == nil)
        try farValue.withUnsafeBytes { raw in
            let ifd = try #require(IFDReader(exifPayload: raw))
            let entry = try #require(try ifd.entry(0x1002, inIFDAt: ifd.firstIFD()))
            #expect(throws: ProbeStop.self) { try ifd.number(at: entry) }
            #expect(try ifd.valueRange(of: entry, size: 8) == nil)
        }
        // And the "Exif\0\0" preamble is skipped
        try (Array("Exif\0\0".utf8) + tiff).withUnsafeBytes { raw in
            let ifd = try #require(IFDReader(exifPayload: raw))
            #expect(try ifd.entry(0x1000, inIFDAt: ifd.firstIFD()).flatMap { try ifd.integer(at: $0) } == 513)
        }
    }
}
