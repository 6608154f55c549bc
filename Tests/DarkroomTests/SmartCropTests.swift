import DarkroomImage
import DarkroomTestSupport
import Foundation
import Testing

@testable import Darkroom

/// ``Gravity/smart``: the crop goes where the detail, skin and colour are.
@Suite("Smart crop")
struct SmartCropTests {
    /// A flat grey `width × height` image with a textured, skin-toned square of `side` at (`x`, `y`).
    static func scene(width: Int, height: Int, subjectAt x: Int, _ y: Int, side: Int) throws -> Bitmap {
        let bitmap = try Bitmap(width: width, height: height, format: .bgra8Premultiplied, isOpaque: true)
        for row in 0..<height {
            let p = bitmap.row(row).assumingMemoryBound(to: UInt8.self)
            for col in 0..<width {
                var (r, g, b): (UInt8, UInt8, UInt8) = (120, 120, 120)
                if (x..<x + side).contains(col) && (y..<y + side).contains(row) {
                    let stripe = (col / 3 + row / 3) % 2 == 0
                    (r, g, b) = stripe ? (224, 170, 130) : (150, 100, 70)
                }
                (p[4 * col], p[4 * col + 1], p[4 * col + 2], p[4 * col + 3]) = (b, g, r, 255)
            }
        }
        return bitmap
    }

    @Test func theCropFollowsTheSubjectAlongEitherAxis() throws {
        // Given a wide image with its subject near the right edge, and a tall one with it near the top
        let wide = try Self.scene(width: 400, height: 200, subjectAt: 320, 70, side: 60)
        let tall = try Self.scene(width: 200, height: 400, subjectAt: 70, 20, side: 60)
        // When each is cropped to 200×200 smartly, and centred
        let smart = ImageProcessors.CropToFill(width: 200, height: 200, gravity: .smart)
        let wideOrigin = try Saliency.cropOrigin(wide, cropWidth: 200, cropHeight: 200)
        let tallOrigin = try Saliency.cropOrigin(tall, cropWidth: 200, cropHeight: 200)
        // Then the crops contain the whole subject (the centre crop of the wide one would miss it)
        #expect(wideOrigin.x + 200 >= 380 && wideOrigin.x <= 320, "\(wideOrigin)")
        #expect(tallOrigin.y <= 20 && tallOrigin.y + 200 >= 80, "\(tallOrigin)")
        #expect(try smart.process(wide).width == 200)
        // And a featureless image stays centred
        let flat = try Self.scene(width: 400, height: 200, subjectAt: 0, 0, side: 0)
        #expect(try Saliency.cropOrigin(flat, cropWidth: 200, cropHeight: 200) == (100, 0))
    }

    @Test func smartIsPartOfTheCacheKey() {
        let smart = ImageProcessors.CropToFill(width: 10, height: 10, gravity: .smart)
        let centre = ImageProcessors.CropToFill(width: 10, height: 10, gravity: .center())
        #expect(smart.identifier != centre.identifier)
    }
}
