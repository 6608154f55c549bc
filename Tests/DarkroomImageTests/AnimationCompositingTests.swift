import DarkroomTestSupport
import Testing

@testable import DarkroomImage

/// Each GIF disposal and APNG dispose/blend operation on tiny files written byte by byte, where every composited
/// pixel is known.
@Suite struct AnimationCompositingTests {
    /// Palette: 0 red, 1 green, 2 blue, 3 white, 9 the transparent index.
    static let palette: [(UInt8, UInt8, UInt8)] = [(255, 0, 0), (0, 255, 0), (0, 0, 255), (255, 255, 255)]
    static let red: [UInt8] = [255, 0, 0, 255]
    static let green: [UInt8] = [0, 255, 0, 255]
    static let blue: [UInt8] = [0, 0, 255, 255]
    static let clear: [UInt8] = [0, 0, 0, 0]

    /// Frame pixels as a grid of RGBA quadruples.
    static func grid(_ bytes: [UInt8]) throws -> [[[UInt8]]] {
        let decoder = try AnimatedImageDecoder(bytes, options: DecodeOptions(pixelFormat: .exactly(.rgba8)))
        var frames: [[[UInt8]]] = []
        while let frame = try decoder.nextFrame() {
            let b = frame.bitmap
            frames.append(
                (0..<(b.width * b.height)).map { i in
                    let p = b.row(i / b.width).assumingMemoryBound(to: UInt8.self) + (i % b.width) * 4
                    return [p[0], p[1], p[2], p[3]]
                })
        }
        return frames
    }

    @Test func gifDisposalsAndTransparencyFollowTheBrowsers() throws {
        // Given a 4×2 GIF: a red background (keep), a green 2×1 sprite at (1,0) restored to previous, a blue 1×1 at
        // (3,1) restored to background, a frame whose only pixel is transparent, and an interlaced full frame
        let gif = AnimationFiles.gif(
            width: 4, height: 2, palette: Self.palette, loop: 3,
            frames: [
                .init(width: 4, height: 2, indices: [0, 0, 0, 0, 0, 0, 0, 0], disposal: 1, delay: 5),
                .init(x: 1, y: 0, width: 2, height: 1, indices: [1, 9], disposal: 3, delay: 0, transparent: 9),
                .init(x: 3, y: 1, width: 1, height: 1, indices: [2], disposal: 2, delay: 1),
                .init(x: 0, y: 0, width: 1, height: 1, indices: [9], disposal: 1, transparent: 9),
                .init(width: 4, height: 2, indices: [3, 3, 3, 3, 2, 2, 2, 2], interlaced: true),
            ])
        // When it is decoded
        let frames = try Self.grid(gif)
        let info = try EncodedAnimation(gif).info
        // Then each frame is composited as browsers do
        let r = Self.red
        let g = Self.green
        let b = Self.blue
        #expect(frames.count == 5)
        #expect(frames[0] == [r, r, r, r, r, r, r, r])
        #expect(frames[1] == [r, g, r, r, r, r, r, r])  // transparent index keeps the red under it
        #expect(frames[2] == [r, r, r, r, r, r, r, b])  // the sprite was restored to what it covered
        #expect(frames[3] == [r, r, r, r, r, r, r, Self.clear])  // background disposal clears to transparent
        #expect(
            frames[4] == [
                [255, 255, 255, 255], [255, 255, 255, 255], [255, 255, 255, 255], [255, 255, 255, 255], b, b, b, b,
            ])
        // And the timing is the file's, with the browsers' rule for 0 and 10 ms
        #expect(info.durations == [50, 0, 10, 100, 100])
        #expect((0..<5).map(info.displayDuration(ofFrame:)) == [50, 100, 100, 100, 100])
        #expect(info.loopCount == 3 && info.plays == 4)
    }

    @Test func aGIFWithoutALoopExtensionPlaysOnce() throws {
        let gif = AnimationFiles.gif(
            width: 1, height: 1, palette: Self.palette, loop: nil,
            frames: [.init(width: 1, height: 1, indices: [0]), .init(width: 1, height: 1, indices: [1])])
        let info = try EncodedAnimation(gif).info
        #expect(info.loopCount == nil && info.plays == 1)
    }

    @Test func apngBlendAndDisposeOperationsFollowTheSpecification() throws {
        // Given a 2×2 APNG: opaque red (source, dispose none), a half-transparent blue pixel at (1,0) blended over
        // and restored to previous, a green pixel at (0,1) with source blend then background disposal, and a
        // transparent full frame blended over
        let halfBlue: [UInt8] = [0, 0, 255, 128]
        let apng = AnimationFiles.apng(
            width: 2, height: 2, plays: 2,
            frames: [
                .init(
                    width: 2, height: 2, rgba: Array([Self.red, Self.red, Self.red, Self.red].joined()),
                    delayMilliseconds: 40),
                .init(x: 1, y: 0, width: 1, height: 1, rgba: halfBlue, dispose: 2, blend: 1, delayMilliseconds: 60),
                .init(x: 0, y: 1, width: 1, height: 1, rgba: [0, 255, 0, 64], dispose: 1, blend: 0),
                .init(width: 2, height: 2, rgba: [UInt8](repeating: 0, count: 16), blend: 1),
            ])
        // When it is decoded
        let frames = try Self.grid(apng)
        let info = try EncodedAnimation(apng).info
        // Then "over" is the specification's integer blend, "source" replaces, and each disposal applies
        let r = Self.red
        let over: [UInt8] = {  // u = 128·255, v = 127·255, al = u + v
            let u = 128 * 255
            let v = 127 * 255
            let al = u + v
            return [UInt8((255 * v) / al), 0, UInt8((255 * u) / al), UInt8(al / 255)]
        }()
        #expect(frames.count == 4)
        #expect(frames[0] == [r, r, r, r])
        #expect(frames[1] == [r, over, r, r])
        #expect(frames[2] == [r, r, [0, 255, 0, 64], r])  // restored to previous, then the source-blended pixel
        #expect(frames[3] == [r, r, Self.clear, r])  // background disposal cleared it; the empty frame changes nothing
        #expect(info.durations == [40, 60, 100, 100] && info.loopCount == 2 && info.plays == 2)
    }

    @Test func previousOnTheFirstAPNGFrameMeansBackground() throws {
        let apng = AnimationFiles.apng(
            width: 1, height: 1,
            frames: [
                .init(width: 1, height: 1, rgba: Self.red, dispose: 2),
                .init(width: 1, height: 1, rgba: [0, 0, 255, 0], blend: 1),
            ])
        let frames = try Self.grid(apng)
        #expect(frames == [[Self.red], [Self.clear]])
    }

    @Test func malformedAnimationsFallBackToTheirDefaultImage() throws {
        // A frame outside the canvas breaks the APNG specification: the file plays as its default image alone
        let outside = AnimationFiles.apng(
            width: 2, height: 2,
            frames: [
                .init(width: 2, height: 2, rgba: [UInt8](repeating: 255, count: 16)),
                .init(x: 1, y: 1, width: 2, height: 2, rgba: [UInt8](repeating: 0, count: 16)),
            ])
        #expect(try Self.grid(outside) == [Array(repeating: [255, 255, 255, 255], count: 4)])
        // JPEG is not an animation format, but a still PNG plays as one frame
        let still = try ImageEncoder.encode(try TestBitmaps.gradient(8, 8, alpha: false), as: .png)
        #expect(try Self.grid(still).count == 1)
    }
}
