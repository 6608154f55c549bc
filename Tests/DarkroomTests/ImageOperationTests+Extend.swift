import DarkroomImage
import DarkroomTestSupport
import Foundation
import Testing

@testable import Darkroom

/// Extend, Grayscale and Trim, pixel for pixel.
extension ImageOperationTests {
    @Test func extendPlacesTheImageByGravityInsideTheBox() throws {
        // Given the 3×2 numbered image
        let image = try Self.numbered()
        let red = RGBAColor(red: 255, green: 0, blue: 0)
        // When it is extended to 5×4 centred, and south-east
        let centred = try ImageProcessors.Extend(width: 5, height: 4, color: red).process(image)
        let corner = try ImageProcessors.Extend(width: 5, height: 4, gravity: .southEast(), color: red).process(image)
        // Then the image sits at (1, 1) and at (2, 2), surrounded by red (blue channel 0)
        #expect(Self.blues(centred) == [[0, 0, 0, 0, 0], [0, 0, 1, 2, 0], [0, 3, 4, 5, 0], [0, 0, 0, 0, 0]])
        #expect(Self.blues(corner) == [[0, 0, 0, 0, 0], [0, 0, 0, 0, 0], [0, 0, 0, 1, 2], [0, 0, 3, 4, 5]])
        let reds = (0..<4).map { y in centred.row(y).assumingMemoryBound(to: UInt8.self)[4 + 2] }  // column 1
        #expect(reds == [255, 0, 0, 255])
        // And a box no larger than the image leaves it as it is
        let same = try ImageProcessors.Extend(width: 2, height: 2, color: red).process(image)
        #expect(same.width == 3 && same.height == 2 && Self.blues(same) == Self.blues(image))
    }

    @Test func grayscaleIsRec601LumaAndKeepsAlpha() throws {
        // Given one opaque orange pixel (R 255, G 128, B 0) and one half-transparent one
        let pixel = try Bitmap(width: 2, height: 1, format: .bgra8Premultiplied, isOpaque: false)
        let p = pixel.row(0).assumingMemoryBound(to: UInt8.self)
        (p[0], p[1], p[2], p[3]) = (0, 128, 255, 255)
        (p[4], p[5], p[6], p[7]) = (0, 64, 128, 128)
        // When converted
        let gray = try ImageProcessors.Grayscale().process(pixel)
        let g = gray.row(0).assumingMemoryBound(to: UInt8.self)
        // Then L = 0.299·255 + 0.587·128 = 151.4 → 151 (as Pillow's convert("L")), alpha kept
        #expect([g[0], g[1], g[2], g[3]] == [151, 151, 151, 255])
        #expect([g[4], g[5], g[6], g[7]] == [76, 76, 76, 128])
    }

    @Test func trimCutsABorderOfTheCornerColour() throws {
        // Given a 6×5 white image with a 2×2 numbered block at (2, 1)
        let image = try Bitmap(width: 6, height: 5, format: .bgra8Premultiplied, isOpaque: true)
        for y in 0..<5 {
            let row = image.row(y).assumingMemoryBound(to: UInt8.self)
            for x in 0..<6 {
                let inside = (2...3).contains(x) && (1...2).contains(y)
                let v: UInt8 = inside ? UInt8(10 * (y * 2 + x)) : 255
                (row[4 * x], row[4 * x + 1], row[4 * x + 2], row[4 * x + 3]) = (v, v, v, 255)
            }
        }
        // When trimmed exactly, and with a tolerance that swallows nothing of the block
        let trimmed = try ImageProcessors.Trim().process(image)
        // Then only the block remains
        #expect(trimmed.width == 2 && trimmed.height == 2)
        #expect(Self.blues(trimmed) == [[40, 50], [60, 70]])
        // And an image all of one colour stays whole
        let blank = try Bitmap(width: 3, height: 3, format: .bgra8Premultiplied, isOpaque: false)
        let whole = try ImageProcessors.Trim(tolerance: 5).process(blank)
        #expect(whole.width == 3 && whole.height == 3)
    }
}
