import DarkroomTestSupport
import Foundation
import Testing

@testable import DarkroomImage

@Suite("An interlaced PNG cut short: its whole Adam7 passes, as browsers show it while it loads")
struct InterlacedPNGPreviewTests {
    static let path = "png/path-interlaced-1200x750.png"

    /// `rgba` (straight RGBA rows of `width`) with each pixel replaced by the pixel of the Adam7 lattice after
    /// `passes` passes at or above and left of it: the specification's pass layout, independent of the decoder.
    static func latticeFill(_ rgba: [UInt8], width: Int, height: Int, passes: Int) -> [UInt8] {
        let (sx, sy) = [(8, 8), (4, 8), (4, 4), (2, 4), (2, 2), (1, 2), (1, 1)][passes - 1]
        var out = [UInt8](repeating: 0, count: rgba.count)
        for y in 0..<height {
            for x in 0..<width {
                let from = ((y - y % sy) * width + (x - x % sx)) * 4
                let to = (y * width + x) * 4
                for c in 0..<4 { out[to + c] = rgba[from + c] }
            }
        }
        return out
    }

    /// The chunks of a PNG: where each starts, its type and its data's length, from the specification's layout.
    static func chunks(_ png: [UInt8]) -> [(offset: Int, type: String, length: Int)] {
        var out: [(offset: Int, type: String, length: Int)] = []
        var position = 8
        while position + 8 <= png.count {
            let length = png[position..<position + 4].reduce(0) { $0 << 8 | Int($1) }
            out.append((position, String(decoding: png[position + 4..<position + 8], as: UTF8.self), length))
            position += 12 + length
        }
        return out
    }

    static func bytes(of bitmap: Bitmap) -> [UInt8] {
        var out: [UInt8] = []
        for y in 0..<bitmap.height {
            out += UnsafeRawBufferPointer(start: bitmap.row(y), count: bitmap.width * 4)
        }
        return out
    }

    @Test("Cut at growing lengths, each decode is Pillow's full image on the lattice of ever more passes")
    func cutsShowWholePasses() throws {
        // Given an interlaced photo and Pillow's decode of the whole file
        let bytes = try SamplePhotos.bytes(Self.path)
        let pillow = try PillowFrames(path: SamplePhotos.path(Self.path))
        let full = pillow.frames[0]
        var options = DecodeOptions(size: .original, pixelFormat: .exactly(.rgba8))
        options.acceptTruncated = true

        // When ever longer beginnings of it are decoded, accepting truncation
        var passes: [Int] = []
        for fraction in [0.04, 0.07, 0.12, 0.2, 0.35, 0.6, 0.9] {
            let cut = Array(bytes[..<Int(Double(bytes.count) * fraction)])
            let decoded = Self.bytes(of: try ImageDecoder().decode(cut, options: options).bitmap)
            let match = (1...7).first { n in
                decoded == Self.latticeFill(full, width: pillow.width, height: pillow.height, passes: n)
            }
            passes.append(try #require(match, "the \(fraction) cut matches no pass lattice"))
        }

        // Then each matches the lattice of its whole passes exactly, the passes never go back, and several show
        #expect(passes == passes.sorted(), "\(passes)")
        #expect(Set(passes).count >= 4 && passes.last! < 7, "\(passes)")
        // and the whole file is Pillow's image
        #expect(Self.bytes(of: try ImageDecoder().decode(bytes, options: options).bitmap) == full)
    }

    @Test("A cut inside a large IDAT chunk shows the passes whose data arrived, not only those of the whole chunks")
    func cutInsideAChunk() throws {
        // Given the photo (32 KiB IDAT chunks) cut at 3 %: inside its second IDAT chunk, past the first pass's data
        // (the chunk before holds less than the pass)
        let bytes = try SamplePhotos.bytes(Self.path)
        let pillow = try PillowFrames(path: SamplePhotos.path(Self.path))
        let length = Int(Double(bytes.count) * 0.03)
        let chunks = Self.chunks(bytes)
        let cutChunk = try #require(chunks.first { $0.offset < length && length < $0.offset + 12 + $0.length })
        #expect(
            cutChunk.type == "IDAT" && chunks.filter { $0.type == "IDAT" && $0.offset < cutChunk.offset }.count == 1)
        var options = DecodeOptions(size: .original, pixelFormat: .exactly(.rgba8))
        options.acceptTruncated = true

        // When it is decoded, accepting truncation
        let decoded = Self.bytes(of: try ImageDecoder().decode(Array(bytes[..<length]), options: options).bitmap)

        // Then it is Pillow's full image on the first pass's lattice, exactly
        #expect(decoded == Self.latticeFill(pillow.frames[0], width: pillow.width, height: pillow.height, passes: 1))
    }

    @Test("Without acceptTruncated, or before the first pass is whole, a cut interlaced PNG is `truncated`")
    func strictOrTooShort() throws {
        // Given half of an interlaced photo, and its first 2,000 bytes
        let bytes = try SamplePhotos.bytes(Self.path)
        let half = Array(bytes[..<(bytes.count / 2)])
        let start = Array(bytes[..<2_000])
        var lenient = DecodeOptions(size: .maxPixelSize(300))
        lenient.acceptTruncated = true

        // When they are decoded strictly, and the short one leniently
        let strict = #expect(throws: DarkroomImageError.self) {
            _ = try ImageDecoder().decode(half, options: DecodeOptions(size: .maxPixelSize(300)))
        }
        let early = #expect(throws: DarkroomImageError.self) { _ = try ImageDecoder().decode(start, options: lenient) }

        // Then both are `truncated`
        #expect(strict?.code == .truncated)
        #expect(early?.code == .truncated)
    }
}
