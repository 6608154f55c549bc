import DarkroomTestSupport
import Testing

@testable import DarkroomImage

/// Whole-file reads that may leave a file to a reader that takes its path.
@Suite struct FileBytesTests {
    @Test func aFileIsReadWholeUnlessItsFirstBytesSayToLeaveIt() throws {
        // Given a file of 10,000 bytes (longer than the 4 KiB prefix), one shorter than it, and an empty one
        let work = try TemporaryDirectory("file-bytes")
        defer { work.remove() }
        let long = (0..<10_000).map { UInt8(truncatingIfNeeded: $0 * 7 + 3) }
        try TemporaryDirectory.write(long, to: work.file("long"))
        try TemporaryDirectory.write(Array(long.prefix(100)), to: work.file("short"))
        try TemporaryDirectory.write([], to: work.file("empty"))
        // When each is read with a test that leaves nothing unread
        var seen: [Int] = []
        for (name, expected) in [("long", long), ("short", Array(long.prefix(100))), ("empty", [])] {
            let bytes = try FileBytes.read(work.file(name), limit: 1 << 20) { prefix in
                seen.append(prefix.count)
                return false
            }
            // Then the bytes are the file's, the prefix then the rest
            #expect(bytes == expected, "\(name)")
        }
        // And the test saw the first 4 KiB of each (all of a shorter file)
        #expect(seen == [4096, 100, 0])
        // When the test says to leave the file, it is not read, whatever its size
        let left = try FileBytes.read(work.file("long"), limit: 10) { Array($0.prefix(3)) == Array(long.prefix(3)) }
        #expect(left == nil)
        // And a file read whole past the limit is a typed error, as a missing file is
        let over = #expect(throws: DarkroomImageError.self) {
            _ = try FileBytes.read(work.file("long"), limit: 9_999) { _ in false }
        }
        #expect(over?.code == .limitExceeded)
        let missing = #expect(throws: DarkroomImageError.self) {
            _ = try FileBytes.read(work.file("none"), limit: 1 << 20) { _ in false }
        }
        #expect(missing?.code == .notFound)
    }
}
