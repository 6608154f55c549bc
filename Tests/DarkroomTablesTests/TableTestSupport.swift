import DarkroomImage
import DarkroomTestSupport
import Foundation
import Testing

@testable import DarkroomTables

/// Test images and comparisons.
enum TestImages {
    /// A deterministic pattern for `(seed, version)` in `format`: row 0 starts with the two values so a reader can
    /// check that the rest of the pixels belong to them (a torn or foreign entry fails ``isConsistent(_:)``).
    static func pattern(width: Int, height: Int, format: PixelFormat, seed: UInt32, version: UInt32) throws -> Bitmap {
        let b = try Bitmap(width: width, height: height, format: format, isOpaque: true)
        let rowBytes = width * format.bytesPerPixel
        for y in 0..<height {
            let row = b.row(y).assumingMemoryBound(to: UInt8.self)
            for x in 0..<rowBytes { row[x] = value(seed, version, x, y) }
        }
        if rowBytes >= 8 {
            b.row(0).storeBytes(of: seed.littleEndian, as: UInt32.self)
            b.row(0).storeBytes(of: version.littleEndian, toByteOffset: 4, as: UInt32.self)
        }
        return b
    }

    @inline(__always)
    static func value(_ seed: UInt32, _ version: UInt32, _ x: Int, _ y: Int) -> UInt8 {
        UInt8(truncatingIfNeeded: (Int(seed) &* 31 &+ Int(version) &* 17 &+ x &* 7 &+ y &* 13) ^ (x >> 3))
    }

    /// Whether `b` is exactly one ``pattern(width:height:format:seed:version:)`` (returns its seed and version).
    static func isConsistent(_ b: Bitmap) -> (seed: UInt32, version: UInt32)? {
        let rowBytes = b.width * b.format.bytesPerPixel
        guard rowBytes >= 8 else { return nil }
        let seed = UInt32(littleEndian: b.row(0).loadUnaligned(as: UInt32.self))
        let version = UInt32(littleEndian: b.row(0).loadUnaligned(fromByteOffset: 4, as: UInt32.self))
        for y in 0..<b.height {
            let row = b.row(y).assumingMemoryBound(to: UInt8.self)
            for x in (y == 0 ? 8 : 0)..<rowBytes where row[x] != value(seed, version, x, y) { return nil }
        }
        return (seed, version)
    }

    /// The visible bytes of a bitmap (padding excluded), for before/after comparisons.
    static func visibleBytes(_ b: Bitmap) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(b.width * b.format.bytesPerPixel * b.height)
        for y in 0..<b.height {
            out.append(contentsOf: UnsafeRawBufferPointer(start: b.row(y), count: b.width * b.format.bytesPerPixel))
        }
        return out
    }

    /// A fresh decode of `path` as a table of `format` would store it with `mode`.
    static func freshDecode(
        _ path: String, width: Int, height: Int, format: PixelFormat,
        mode: TableContentMode, allowsUpscaling: Bool = false
    ) throws -> Bitmap {
        let size: TargetSize = mode == .fill ? .fill(width: width, height: height) : .fit(width: width, height: height)
        return try ImageDecoder().decode(
            FileBytes.read(path),
            options: DecodeOptions(size: size, pixelFormat: .exactly(format), allowsUpscaling: allowsUpscaling)
        ).bitmap
    }
}

extension ImageTable {
    /// Writes the pattern for `(seed, version)` through the copy path (a heap bitmap returned from draw).
    func setPattern(_ entity: String, seed: UInt32, version: UInt32, width: Int? = nil, height: Int? = nil) throws {
        let f = format
        let bitmap = try TestImages.pattern(
            width: width ?? f.width, height: height ?? f.height, format: f.pixelFormat,
            seed: seed, version: version)
        try set(entity: entity, source: "v\(version)") { _ in bitmap }
    }
}
