import DarkroomTestSupport
import Foundation
import Testing

@testable import DarkroomImage

/// The one walk over a JPEG's marker segments that the colour reader, the EXIF reader and the EXIF-thumbnail finder
/// share: tolerant as libjpeg is, checked against Pillow's own list of APPn segments on real photos.
@Suite struct JPEGSegmentsTests {
    static func walk(_ bytes: [UInt8], limit: Int = .max) -> [(marker: UInt8, payload: [UInt8])] {
        bytes.withUnsafeBytes { raw in
            JPEGSegments(raw, limit: limit).map { ($0.marker, Array(bytes[$0.payload])) }
        }
    }

    @Test func fillBytesStandaloneMarkersAndStrayBytesAreSkippedUpToTheFirstScan() {
        // Given SOI, fill bytes, APP0, a stray byte, RST0, APP1, a repeated SOI, DQT, then a scan and more segments
        let bytes: [UInt8] =
            [0xFF, 0xD8, 0xFF, 0xFF, 0xFF, 0xE0, 0x00, 0x04, 0x4A, 0x46, 0x00, 0xFF, 0xD0]
            + [0xFF, 0xE1, 0x00, 0x03, 0x45, 0xFF, 0xD8, 0xFF, 0xDB, 0x00, 0x02]
            + [0xFF, 0xDA, 0x00, 0x02, 0x12, 0x34, 0xFF, 0xE2, 0x00, 0x02, 0xFF, 0xD9]
        // When walked
        let segments = Self.walk(bytes)
        // Then the three segments before the scan come out with their payloads, and nothing after it
        #expect(segments.map(\.marker) == [0xE0, 0xE1, 0xDB])
        #expect(segments.map(\.payload) == [[0x4A, 0x46], [0x45], []])
    }

    @Test func aSegmentPastTheBytesOrTheLimitOrALengthBelowTwoEndsTheWalk() {
        let app0: [UInt8] = [0xFF, 0xE0, 0x00, 0x04, 0x01, 0x02]
        // Given a segment that runs past the end, one with length 1, and bytes that are not a JPEG
        let overrun: [UInt8] = [0xFF, 0xD8] + app0 + [0xFF, 0xE1, 0x00, 0x10, 0x01]
        let short: [UInt8] = [0xFF, 0xD8] + app0 + [0xFF, 0xE1, 0x00, 0x01] + app0
        let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47] + app0
        // When walked, Then the walk ends before each bad segment, and a PNG has none
        #expect(Self.walk(overrun).map(\.marker) == [0xE0])
        #expect(Self.walk(short).map(\.marker) == [0xE0])
        #expect(Self.walk(png).isEmpty)
        // And a limit stops the walk at the first segment that starts at or past it
        let two: [UInt8] = [0xFF, 0xD8] + app0 + app0
        #expect(Self.walk(two, limit: 8).map(\.marker) == [0xE0])
        #expect(Self.walk(two, limit: 9).map(\.marker) == [0xE0, 0xE0])
    }

    @Test func appSegmentsAreThoseThatPillowLists() throws {
        // Given real photos (EXIF, ICC, orientation) and Pillow's list of their APPn segments
        let paths =
            try SamplePhotos.require("jpeg") + SamplePhotos.require("orientation", suffix: ".jpg")
            + SamplePhotos.require("icc", suffix: ".jpg")
        let output = try PythonReference.run(
            """
            import json, sys
            from PIL import Image
            apps = [[[int(m[3:]), len(b)] for m, b in Image.open(p).applist if m.startswith("APP")] for p in sys.argv[1:]]
            print(json.dumps(apps))
            """, paths)
        let pillow = try JSONDecoder().decode([[[Int]]].self, from: output)
        for (path, reference) in zip(paths, pillow) {
            // When walked
            let segments = Self.walk(try SamplePhotos.bytes(path)).filter { (0xE0...0xEF).contains($0.marker) }
            // Then the same APPn segments, in order, with the same payload lengths
            #expect(segments.map { [Int($0.marker) - 0xE0, $0.payload.count] } == reference, "\(path)")
        }
        #expect(paths.count == pillow.count && paths.count >= 10)
    }
}
