import DarkroomTestSupport
import Foundation
import Testing

@testable import DarkroomImage

/// The HDR outputs' resampler of linear light, against Pillow's resampling of 32-bit float images (mode `F`), which
/// shares its kernel and its weights' placement.
@Suite struct LightResamplerTests {
    @Test(arguments: [(300, 200, 128, 85), (97, 61, 40, 25), (64, 48, 64, 48)])
    func itIsPillowsLanczosOnFloats(_ width: Int, _ height: Int, _ outputWidth: Int, _ outputHeight: Int) throws {
        // Given light with highlights far above SDR white (0…50), three channels a pixel
        var generator = SystemRandomNumberGenerator()
        let light = (0..<(width * height * 3)).map { _ in Float.random(in: 0...1, using: &generator) * 50 }
        let path = try TemporaryDirectory.make("light") + "/light.f32"
        try TemporaryDirectory.write(light.withUnsafeBytes { Array($0) }, to: path)
        // When Darkroom and Pillow (Lanczos, each channel an F image) resample it
        let resampled = try LightResampler.resample(
            light, width: width, height: height,
            sourceRect: SourceRect(x: 0, y: 0, width: Double(width), height: Double(height)), outputWidth: outputWidth,
            outputHeight: outputHeight, filter: .lanczos3)
        let script = """
            import sys, numpy as np
            from PIL import Image
            w, h, ow, oh = map(int, sys.argv[2:6])
            a = np.fromfile(sys.argv[1], "<f4").reshape(h, w, 3)
            out = np.stack([np.asarray(Image.fromarray(np.ascontiguousarray(a[..., c]), "F").resize((ow, oh), Image.LANCZOS))
                            for c in range(3)], axis=-1)
            sys.stdout.buffer.write(np.maximum(out, 0).astype("<f4").tobytes())
            """
        let reference = try PythonReference.run(
            script, [path] + [width, height, outputWidth, outputHeight].map(String.init)
        )
        .withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
        // Then they agree to a part in ten thousand of the range, and no light is negative
        #expect(reference.count == resampled.count)
        let worst = zip(resampled, reference).map { abs($0 - $1) }.max() ?? .infinity
        #expect(worst < 50e-4, "largest difference \(worst)")
        #expect(resampled.allSatisfy { $0 >= 0 })
    }

    @Test func quarterTurnsSwapTheSidesAndMoveEachPixel() {
        // Given a 3 × 2 image of one-channel pixels numbered in reading order
        let pixels = [0, 1, 2, 3, 4, 5]
        // When it is turned upright for EXIF orientation 6 (stored turned left) and mirrored (2)
        let right = ExifOrientation.right.applied(to: pixels, width: 3, height: 2, channels: 1)
        let mirrored = ExifOrientation.upMirrored.applied(to: pixels, width: 3, height: 2, channels: 1)
        // Then the quarter turn is 2 × 3, the stored left column its top row read bottom-up, and the mirror reversed
        #expect(right.width == 2 && right.height == 3)
        #expect(right.pixels == [3, 0, 4, 1, 5, 2])
        #expect(mirrored.pixels == [2, 1, 0, 5, 4, 3])
    }
}
