import DarkroomImage
import DarkroomTestSupport
import Foundation
import Testing

@testable import DarkroomViewer

/// The large view playing motion: a video's clip, a Motion Photo's clip over its still.
extension ViewerWindowTests {
    /// The clip every sample Motion Photo holds: 2 s at 30 fps, 320 × 240, a pan across a photo.
    static let clipSize = (width: 320, height: 240)

    /// PSNR (RGB) between the window's middle `clipSize` rectangle in `shot` (RGBA) and `frame` (BGRA, that size).
    static func middlePSNR(_ shot: Bitmap, _ frame: Bitmap) -> Double {
        let x0 = (ViewerHarness.width - clipSize.width) / 2
        let y0 = (ViewerHarness.height - clipSize.height) / 2
        var squares = 0.0
        for y in 0..<clipSize.height {
            let s = shot.row(y0 + y).assumingMemoryBound(to: UInt8.self)
            let f = frame.row(y).assumingMemoryBound(to: UInt8.self)
            for x in 0..<clipSize.width {
                for (c, b) in [(0, 2), (1, 1), (2, 0)] {
                    let d = Double(Int(s[4 * (x0 + x) + c]) - Int(f[4 * x + b]))
                    squares += d * d
                }
            }
        }
        let mse = squares / Double(3 * clipSize.width * clipSize.height)
        return mse == 0 ? 99 : 10 * log10(255 * 255 / mse)
    }

    /// Every frame of the clip at `path` as ffmpeg decodes it, in order (one ffmpeg run, PNGs in `directory`).
    static func ffmpegFrames(_ path: String, in directory: String) throws -> [Bitmap] {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        _ = try ReferenceTool.run(
            "ffmpeg", ["-v", "error", "-nostdin", "-y", "-i", path, "-pix_fmt", "rgb24", directory + "/f%03d.png"])
        let names = try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasPrefix("f") }.sorted()
        return try names.map {
            try ImageDecoder().decode(
                fileAt: directory + "/" + $0, options: DecodeOptions(pixelFormat: .exactly(.bgra8Premultiplied))
            ).bitmap
        }
    }

    @Test func theLargeViewPlaysAVideoAndAStillsMotionOnce() throws {
        // Given a clip (a 2 s pan) and a Motion Photo holding the same clip, and ffmpeg's decode of its every frame
        let harness = try ViewerHarness("motion")
        defer { harness.work.remove() }
        let clip = try MotionPhotoSamples.path("clip.mp4")
        try TemporaryDirectory.write(try FileBytes.read(clip), to: "\(harness.folder)/a-clip.mp4")
        let motionPhoto = try MotionPhotoSamples.path("google.jpg")
        try TemporaryDirectory.write(try FileBytes.read(motionPhoto), to: "\(harness.folder)/b-motion.jpg")
        let frames = try Self.ffmpegFrames(clip, in: harness.work.file("ffmpeg"))
        try #require(frames.count == 60)
        // When the clip is opened large and captured twice 0.4 s apart, then the Motion Photo while its motion plays
        // and once it has played
        _ = try harness.run(
            """
            settle 20
            key Return
            settle 20
            wait 0.5
            screenshot \(harness.work.file("v1.png"))
            wait 0.4
            screenshot \(harness.work.file("v2.png"))
            key Right
            settle 20
            wait 0.5
            screenshot \(harness.work.file("m1.png"))
            wait 3
            screenshot \(harness.work.file("m2.png"))
            """)
        // Then each capture of the clip is one of its frames as ffmpeg decodes it, and the two are different frames
        // (later in the clip, or the loop started again)
        func bestFrame(_ name: String) throws -> (index: Int, psnr: Double) {
            let shot = try harness.screenshot(name)
            let scores = frames.map { Self.middlePSNR(shot, $0) }
            let best = scores.indices.max { scores[$0] < scores[$1] }!
            return (best, scores[best])
        }
        let v1 = try bestFrame("v1.png")
        let v2 = try bestFrame("v2.png")
        #expect(v1.psnr >= 35, "the first capture is \(v1.psnr) dB from the clip's nearest frame (\(v1.index))")
        #expect(v2.psnr >= 35, "the second capture is \(v2.psnr) dB from the clip's nearest frame (\(v2.index))")
        #expect(abs(v1.index - v2.index) >= 4, "the captures show frames \(v1.index) and \(v2.index)")
        // And the Motion Photo plays its clip over the still, then shows the still again (the 640 × 480 still decoded
        // to fit, as the large view asks)
        let m1 = try bestFrame("m1.png")
        #expect(m1.psnr >= 35, "the motion's capture is \(m1.psnr) dB from the clip's nearest frame")
        let still = try ImageDecoder().decode(
            fileAt: harness.folder + "/b-motion.jpg",
            options: DecodeOptions(
                size: .fit(width: ViewerHarness.width, height: ViewerHarness.height), pixelFormat: .exactly(.rgba8))
        ).bitmap
        let after = try harness.screenshot("m2.png")
        let (sx, sy) = ((ViewerHarness.width - still.width) / 2, (ViewerHarness.height - still.height) / 2)
        var worst = 0
        for (x, y) in [(still.width / 2, still.height / 2), (20, 20), (still.width - 20, still.height - 20)] {
            let seen = ViewerHarness.pixel(after, sx + x, sy + y)
            let want = ViewerHarness.pixel(still, x, y)
            worst = max(
                worst, abs(Int(seen.r) - Int(want.r)), abs(Int(seen.g) - Int(want.g)), abs(Int(seen.b) - Int(want.b)))
        }
        #expect(worst <= 6, "after its motion the still differs by up to \(worst) levels")
        #expect(try bestFrame("m2.png").psnr < 30, "after its motion the large view still shows a frame of the clip")
    }
}
