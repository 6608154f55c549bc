import DarkroomImage
import DarkroomTestSupport
import Foundation
import Testing

/// The page of a multi-page file through the command line: `darkroom probe --json` reports the count, `darkroom
/// thumb --page N` and `darkroom fetch --page N` decode that page, and a page the file does not have fails the file
/// with a typed error instead of drawing page 0. Run as child processes; the file is written by Pillow.
@Suite("Pages on the command line")
struct PageCommandTests {
    /// Runs `darkroom ARGUMENTS`; returns its exit status and standard output.
    static func darkroom(_ arguments: [String]) throws -> (status: Int32, output: String, errors: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try SamplePhotos.darkroomBinary())
        process.arguments = arguments
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let out = output.fileHandleForReading.readDataToEndOfFile()
        let err = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: out, as: UTF8.self), String(decoding: err, as: UTF8.self))
    }

    @Test("probe --json reports pageCount; thumb --page N writes that page; a missing page fails, never page 0")
    func pages() throws {
        let directory = try TemporaryDirectory("pages")
        defer { directory.remove() }
        // Given a three-page TIFF
        let file = directory.file("pages.tif")
        try PageFiles.writeThreePages(to: file, compression: "tiff_deflate")
        // When it is probed
        let probe = try Self.darkroom(["probe", "--json", file])
        let json = try #require(try JSONSerialization.jsonObject(with: Data(probe.output.utf8)) as? [String: Any])
        // Then the count is there
        #expect(probe.status == 0 && json["pageCount"] as? Int == 3, "\(probe.output)")
        // When each page is thumbnailed
        for page in 0..<3 {
            let out = directory.file("page\(page)")
            let run = try Self.darkroom([
                "thumb", file, "--max-pixel-size", "60", "--format", "png", "--page", "\(page)", "--out", out,
            ])
            // Then the thumbnail is that page's colour
            #expect(run.status == 0, "page \(page): \(run.errors)")
            #expect(try PageFiles.page(shownBy: SamplePhotos.bytes(out + "/pages.png")) == page, "page \(page)")
        }
        // When a page the file does not have is asked for
        let missing = try Self.darkroom([
            "thumb", file, "--max-pixel-size", "60", "--page", "3", "--out", directory.file("page3"),
        ])
        // Then the file fails with the decoder's typed error and nothing is written
        #expect(missing.status != 0)
        #expect(
            missing.errors.contains("invalid_argument") || missing.output.contains("invalid_argument"), "\(missing)")
        #expect(!FileManager.default.fileExists(atPath: directory.file("page3") + "/pages.jpg"))
        // And fetch takes the page too
        let fetched = try Self.darkroom(["fetch", file, "--page", "2", "--out", directory.file("fetched")])
        #expect(fetched.status == 0, "\(fetched.errors)")
    }
}
