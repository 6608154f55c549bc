import DarkroomTestSupport
import Foundation
import Testing

@testable import DarkroomImage

/// An APNG's default image (its `IDAT`) is either the animation's first frame or an image of its own for decoders
/// that know nothing of APNG. A still must show what APNG decoders show — the animation's first frame — checked on
/// every combination against Pillow's APNG reader. Pillow lists a default image that is not part of the animation
/// as a frame of its own (`info["default_image"]`, counted in `n_frames`), so its first animation frame is then
/// `seek(1)`.
@Suite struct APNGDefaultImageTests {
    static func solid(_ c: (UInt8, UInt8, UInt8), _ w: Int, _ h: Int) -> [UInt8] {
        (0..<(w * h)).flatMap { _ in [c.0, c.1, c.2, 255] }
    }

    @Test(arguments: [(false, 1), (false, 3), (true, 1), (true, 3)])
    func theStillIsTheAnimationsFirstFrame(hidden: Bool, frameCount: Int) throws {
        // Given an APNG whose frames are green, blue, red…, with (or without) a magenta default image outside the
        // animation
        let w = 24
        let h = 16
        let colors: [(UInt8, UInt8, UInt8)] = [(20, 200, 40), (30, 40, 210), (220, 30, 30)]
        let frames = (0..<frameCount).map {
            AnimationFiles.APNGFrame(width: w, height: h, rgba: Self.solid(colors[$0], w, h))
        }
        let bytes = AnimationFiles.apng(
            width: w, height: h, frames: frames, hiddenDefault: hidden ? Self.solid((250, 0, 250), w, h) : nil)
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try TemporaryDirectory.write(bytes, to: directory.file("a.png"))
        // When Darkroom decodes the still (full size and a thumbnail), and Pillow reads the first animation frame
        let still = try ImageDecoder().decode(bytes, options: DecodeOptions(pixelFormat: .exactly(.rgba8))).bitmap
        let small = try ImageDecoder().decode(
            bytes, options: DecodeOptions(size: .maxPixelSize(8), pixelFormat: .exactly(.rgba8))
        ).bitmap
        let output = try PythonReference.run(
            """
            import sys
            from PIL import Image
            im = Image.open(sys.argv[1])
            hidden = bool(im.info.get("default_image"))
            im.seek(1 if hidden else 0)
            print(*im.convert("RGBA").getpixel((5, 5)), getattr(im, "n_frames", 1) - (1 if hidden else 0))
            """, [directory.file("a.png")])
        let reference = String(decoding: output, as: UTF8.self).split(separator: " ").compactMap {
            Int($0.trimmingCharacters(in: .whitespacesAndNewlines))
        }
        try #require(reference.count == 5)
        // Then both show the first frame, as Pillow does; the default image never shows when it is not a frame
        let expected = [Int(colors[0].0), Int(colors[0].1), Int(colors[0].2), 255]
        #expect(Array(reference.prefix(4)) == expected)
        for bitmap in [still, small] {
            let p = bitmap.row(bitmap.height / 2).assumingMemoryBound(to: UInt8.self) + 4 * (bitmap.width / 2)
            #expect([Int(p[0]), Int(p[1]), Int(p[2]), Int(p[3])] == expected)
        }
        #expect(still.width == w && still.height == h)
        // And the frame count is the animation's (Pillow's without the default image)
        #expect(try ImageProber.probe(bytes).frameCount == reference[4])
    }

    @Test func aHiddenDefaultImageWithAPartialFirstFrameIsCorrupt() throws {
        // Given an APNG whose default image is hidden and whose first frame does not cover the canvas
        let bytes = AnimationFiles.apng(
            width: 8, height: 8,
            frames: [AnimationFiles.APNGFrame(x: 2, y: 2, width: 4, height: 4, rgba: Self.solid((1, 2, 3), 4, 4))],
            hiddenDefault: Self.solid((250, 0, 250), 8, 8))
        // Then the still is refused with a typed error, not shown as the default image
        #expect {
            _ = try ImageDecoder().decode(bytes)
        } throws: { ($0 as? DarkroomImageError)?.code == .corrupt }
    }
}
