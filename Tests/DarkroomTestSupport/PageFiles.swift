import DarkroomImage
import Foundation

/// A multi-page file for the page tests: three solid pages, told apart by their colour.
package enum PageFiles {
    /// Writes a three-page 300×200 TIFF with Pillow: page 0 red, 1 green, 2 blue (220 in the page's channel, 20 in
    /// the others), compressed as Pillow names it (`tiff_lzw`, `tiff_deflate`).
    package static func writeThreePages(to file: String, compression: String = "tiff_lzw") throws {
        _ = try PythonReference.run(
            """
            import sys
            from PIL import Image
            ims = [Image.new("RGB", (300, 200), c) for c in [(220, 20, 20), (20, 220, 20), (20, 20, 220)]]
            ims[0].save(sys.argv[1], save_all=True, append_images=ims[1:], compression=sys.argv[2])
            """, [file, compression])
    }

    /// Which page an encoded image shows, by the colour at its centre; nil when it is none of the three.
    package static func page(shownBy encoded: [UInt8]) throws -> Int? {
        var options = DecodeOptions()
        options.geometry.pixelFormat = .exactly(.rgba8)
        let bitmap = try ImageDecoder().decode(encoded, options: options).bitmap
        let pixel = bitmap.row(bitmap.height / 2) + 4 * (bitmap.width / 2)
        let colour = (0..<3).map { Int(pixel.load(fromByteOffset: $0, as: UInt8.self)) }
        return (0..<3).first { page in
            colour.indices.allSatisfy { abs(colour[$0] - ($0 == page ? 220 : 20)) <= 2 }
        }
    }
}
