import DarkroomSupport
import Foundation
import Testing
@testable import DarkroomImage

/// The shared sample photos: `$DARKROOM_PHOTOS`, else `../shared/photos` beside the package root.
/// A missing folder makes the tests that use it fail (never skip).
enum TestPhotos {
    static let root: String = {
        if let env = ProcessInfo.processInfo.environment["DARKROOM_PHOTOS"], !env.isEmpty { return env }
        let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        return packageRoot.appendingPathComponent("../shared/photos").standardizedFileURL.path
    }()

    /// Files in one folder of the sample set, sorted; empty if missing (callers assert non-empty).
    static func files(_ folder: String) -> [String] {
        let dir = root + "/" + folder
        return ((try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []).sorted()
            .filter { !$0.hasPrefix(".") }.map { dir + "/" + $0 }
    }

    /// Every sample image.
    static var all: [String] { ["jpeg", "jpeg-12mp", "orientation", "png", "webp", "gif"].flatMap(files) }

    /// The absolute path of a sample given relative to ``root`` ("jpeg/kite-2560x1600.jpg"); absolute paths pass through.
    static func path(_ pathOrRelative: String) -> String {
        pathOrRelative.hasPrefix("/") ? pathOrRelative : root + "/" + pathOrRelative
    }

    /// A sample's bytes; fails the test (never skips) when the file is missing.
    static func bytes(_ pathOrRelative: String) throws -> [UInt8] {
        let full = path(pathOrRelative)
        try #require(FileManager.default.fileExists(atPath: full), "missing sample \(full); set DARKROOM_PHOTOS")
        return try FileBytes.read(full)
    }

    /// Every sample as a path relative to ``root``; requires the full set.
    static func allRelative() throws -> [String] {
        let files = all.map { String($0.dropFirst(root.count + 1)) }
        try #require(files.count >= 20, "expected the full sample set in \(root); set DARKROOM_PHOTOS")
        return files
    }
}

/// Deterministic pseudo-random numbers (SplitMix64), so a failing fuzz case can be replayed.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Pixel comparisons for tests.
enum PixelCompare {
    /// PSNR over the colour channels of two pixel buffers (BGRA: B, G, R; gray: the one channel); `.infinity`
    /// when identical.
    static func psnr(_ a: [UInt8], _ b: [UInt8], bytesPerPixel: Int) -> Double {
        precondition(a.count == b.count)
        var sum = 0.0
        var n = 0
        for i in 0..<a.count where bytesPerPixel == 1 || i % 4 != 3 {
            let d = Double(a[i]) - Double(b[i])
            sum += d * d
            n += 1
        }
        let mse = sum / Double(max(n, 1))
        return mse == 0 ? .infinity : 10 * log10(255 * 255 / mse)
    }

    /// PSNR over the color channels (dB); `.infinity` when identical.
    static func psnr(_ a: Bitmap, _ b: Bitmap) -> Double {
        precondition(a.width == b.width && a.height == b.height && a.format == b.format)
        var sum = 0.0, n = 0
        let bpp = a.format.bytesPerPixel
        for y in 0..<a.height {
            let ra = a.row(y).assumingMemoryBound(to: UInt8.self), rb = b.row(y).assumingMemoryBound(to: UInt8.self)
            for i in 0..<(a.width * bpp) where bpp == 1 || i % 4 != 3 {
                let d = Double(ra[i]) - Double(rb[i]); sum += d * d; n += 1
            }
        }
        let mse = sum / Double(max(n, 1))
        return mse == 0 ? .infinity : 10 * log10(255 * 255 / mse)
    }

    /// Whether every visible byte is the same value (a blank image).
    static func isUniform(_ b: Bitmap) -> Bool {
        let first = b.row(0).load(as: UInt8.self)
        for y in 0..<b.height {
            let r = b.row(y).assumingMemoryBound(to: UInt8.self)
            for i in 0..<(b.width * b.format.bytesPerPixel) where r[i] != first { return false }
        }
        return true
    }

    /// A synthetic image: smooth gradients plus a pattern, opaque BGRA.
    static func synthetic(width: Int, height: Int, gray: Bool = false) throws -> Bitmap {
        let b = try Bitmap(width: width, height: height, format: gray ? .gray8 : .bgra8Premultiplied)
        for y in 0..<height {
            let r = b.row(y).assumingMemoryBound(to: UInt8.self)
            for x in 0..<width {
                let v = UInt8(x * 191 / max(width - 1, 1) + y * 64 / max(height, 1))  // smooth, no wrap-around edge
                if gray { r[x] = v } else {
                    r[4 * x] = v; r[4 * x + 1] = UInt8(y * 255 / max(height - 1, 1)); r[4 * x + 2] = 255 - v; r[4 * x + 3] = 255
                }
            }
        }
        return b
    }
}
