import DarkroomImage
import DarkroomTestSupport
import Foundation
import Testing

/// `darkroom thumb` on animations, run as a child process and read back by Pillow.
@Suite struct ThumbCommandAnimationTests {
    static func thumb(_ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try SamplePhotos.darkroomBinary())
        process.arguments = ["thumb"] + arguments
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        try #require(process.terminationStatus == 0, "darkroom thumb \(arguments) exited \(process.terminationStatus)")
    }

    @Test func animationsStayAnimatedUnlessAStillIsAskedFor() throws {
        // Given the 48-frame GIF
        let input = SamplePhotos.path("animated/pan-kite-640x400-48f.gif")
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        // When it is thumbnailed by default, as GIF with its first 5 frames, and as a still
        try Self.thumb([input, "--max-pixel-size", "96", "--out", directory.path + "/webp"])
        try Self.thumb([
            input, "--max-pixel-size", "96", "--format", "gif", "--frames", "5", "--out", directory.path + "/gif",
        ])
        try Self.thumb([input, "--max-pixel-size", "96", "--still", "--out", directory.path + "/still"])
        // Then the default keeps every frame as animated WebP with the source's timing
        let webp = try PillowFrames(path: directory.path + "/webp/pan-kite-640x400-48f.webp")
        #expect(webp.frames.count == 48 && webp.width == 96 && webp.height == 60)
        #expect(webp.durations == [Int](repeating: 40, count: 48) && webp.loop == 0)
        // And --format gif --frames 5 writes a 5-frame GIF
        let gif = try PillowFrames(path: directory.path + "/gif/pan-kite-640x400-48f.gif")
        #expect(gif.frames.count == 5 && gif.durations == [40, 40, 40, 40, 40])
        // And --still writes the first frame as a JPEG
        let still = try ImageProber.probe(fileAt: directory.path + "/still/pan-kite-640x400-48f.jpg")
        #expect(still.format == .jpeg && still.frameCount == 1 && still.width == 96)
    }
}
