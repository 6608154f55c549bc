import DarkroomTestSupport
import Testing

@testable import DarkroomImage

@Suite("JPEG scan counting as bytes arrive")
struct JPEGScanCounterTests {
    @Test(
        "Fed in chunks of any size, a scan counts once the marker after it arrives",
        arguments: [
            "jpeg/summer_1am-2560x1600.jpg", "jpeg-12mp/kite-4032x3024-progressive.jpg", "jpeg/kite-2560x1600.jpg",
        ])
    func chunks(sample: String) throws {
        // Given a JPEG and where its scans start
        let bytes = try SamplePhotos.bytes(sample)
        let (offsets, progressive) = try JPEGLayout.scans(bytes)
        try #require(!offsets.isEmpty)
        for chunk in [1, 7, 4096, bytes.count] {
            // When it is fed a chunk at a time, noting the count as each scan's marker arrives
            var counter = JPEGScanCounter()
            var countAtScanStarts: [Int] = []
            var fed = 0
            while fed < bytes.count {
                let next = min(bytes.count, fed + chunk)
                for marker in offsets.map({ $0 + 2 }) where marker > fed && marker <= next {
                    // the count once this scan's marker has arrived (fed in two pieces if need be)
                    var probe = counter
                    bytes[0..<marker].withUnsafeBytes { probe.advance($0) }
                    countAtScanStarts.append(probe.completeScans)
                }
                fed = next
                bytes[0..<fed].withUnsafeBytes { counter.advance($0) }
            }

            // Then scan k is complete once the marker of scan k + 1 has arrived, and every scan is complete at the end
            #expect(countAtScanStarts == Array(0..<offsets.count), "chunk \(chunk)")
            #expect(counter.completeScans == offsets.count, "chunk \(chunk)")
            #expect(counter.isProgressive == progressive && counter.hasFrameHeader && counter.isJPEG == true)
            // and the whole scans end where the end-of-image marker starts
            #expect(counter.endOfCompleteScans == bytes.count - 2 && Array(bytes.suffix(2)) == [0xFF, 0xD9])
        }
    }

    @Test("Bytes that are not a JPEG count nothing, and a broken segment stops the count")
    func notJPEG() {
        // Given a PNG signature and a JPEG whose second segment has no marker
        var png = JPEGScanCounter()
        [0x89, 0x50, 0x4E, 0x47].withUnsafeBytes { png.advance($0) }
        var broken = JPEGScanCounter()
        let bytes: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x04, 0x00, 0x00, 0x12, 0x34, 0xFF, 0xDA]

        // When they are read
        bytes.withUnsafeBytes { broken.advance($0) }

        // Then neither counts a scan
        #expect(png.isJPEG == false && png.completeScans == 0)
        #expect(broken.isBroken && broken.completeScans == 0)
    }
}
