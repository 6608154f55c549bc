import DarkroomImage
import DarkroomTestSupport
import Foundation

@testable import DarkroomViewer

/// Runs the real `darkroom view` executable under Xvfb (`xvfb-run`, which `make test` installs) on a script, and
/// reads back its frame record and screenshots as a person's eyes would: pixels at the places cells are drawn.
struct ViewerHarness {
    /// The window: 800 × 600 points at scale 1, 100 px thumbnails (7 columns of 106 px rows).
    static let width = 800
    static let height = 600
    static let cell = 100

    let folder: String
    let cache: String
    /// The desktop thumbnail cache the viewer reads (empty unless a test fills it; never the user's).
    let desktop: String
    let work: TemporaryDirectory

    init(_ name: String) throws {
        work = try TemporaryDirectory("viewer-\(name)")
        folder = work.file("photos")
        cache = work.file("cache")
        desktop = work.file("desktop-thumbnails")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    }

    /// The colour of solid image `i` (distinct for i < 256, far from the viewer's greys).
    static func color(_ i: Int) -> (r: UInt8, g: UInt8, b: UInt8) {
        (UInt8((i * 37 + 60) % 256), UInt8((i * 91 + 20) % 256), UInt8((i * 53 + 140) % 256))
    }

    /// Writes `count` solid PNGs `img000.png`… (320 × 240) in the folder.
    func writeSolidImages(_ count: Int) throws {
        for i in 0..<count {
            let c = Self.color(i)
            let bitmap = try Bitmap(width: 320, height: 240, format: .rgba8, isOpaque: true)
            for y in 0..<240 {
                let row = bitmap.row(y).assumingMemoryBound(to: UInt8.self)
                for x in 0..<320 { (row[4 * x], row[4 * x + 1], row[4 * x + 2], row[4 * x + 3]) = (c.r, c.g, c.b, 255) }
            }
            try TemporaryDirectory.write(
                try ImageEncoder.encode(bitmap, as: .png), to: "\(folder)/img\(String(format: "%03d", i)).png")
        }
    }

    /// Runs the viewer with `script` and returns its stats (the JSON `--stats` wrote).
    @discardableResult
    func run(_ script: String, extra: [String] = []) throws -> [String: Any] {
        let scriptFile = work.file("script-\(UUID().uuidString).txt")
        let statsFile = work.file("stats.json")
        try script.write(toFile: scriptFile, atomically: true, encoding: .utf8)
        try? FileManager.default.removeItem(atPath: statsFile)
        _ = try ReferenceTool.runDetached(
            "xvfb-run",
            [
                "-a", "-s", "-screen 0 1024x768x24", try SamplePhotos.darkroomBinary(), "view", folder,
                "--width", "\(Self.width)", "--height", "\(Self.height)", "--scale", "1",
                "--cell-size", "\(Self.cell)", "--renderer", "software", "--cache-dir", cache,
                "--script", scriptFile, "--stats", statsFile, "--max-seconds", "60", "--desktop-thumbnails", desktop,
            ] + extra)
        let data = try Data(contentsOf: URL(fileURLWithPath: statsFile))
        guard let stats = try JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw TestSupportError("stats are not a JSON object")
        }
        return stats
    }

    /// A screenshot the viewer saved, decoded.
    func screenshot(_ name: String) throws -> Bitmap {
        try ImageDecoder().decode(fileAt: work.file(name), options: DecodeOptions(pixelFormat: .exactly(.rgba8)))
            .bitmap
    }

    /// The layout the viewer uses for `count` images in a window of `width` × `height`.
    static func layout(count: Int, width: Int = width, height: Int = height) -> GridLayout {
        GridLayout(width: width, height: height, scale: 1, cellPoints: cell, count: count)
    }

    /// The pixel at (x, y) of an RGBA bitmap.
    static func pixel(_ bitmap: Bitmap, _ x: Int, _ y: Int) -> (r: UInt8, g: UInt8, b: UInt8) {
        let p = bitmap.row(y).assumingMemoryBound(to: UInt8.self) + 4 * x
        return (p[0], p[1], p[2])
    }

    /// Whether two colours are within `tolerance` on every channel.
    static func close(_ a: (r: UInt8, g: UInt8, b: UInt8), _ b: (r: UInt8, g: UInt8, b: UInt8), _ tolerance: Int = 3)
        -> Bool
    {
        abs(Int(a.r) - Int(b.r)) <= tolerance && abs(Int(a.g) - Int(b.g)) <= tolerance
            && abs(Int(a.b) - Int(b.b)) <= tolerance
    }

    /// The visible cells of `layout` at `offset` whose colour in `shot` is not image i's colour (whole cells only).
    static func wrongCells(_ shot: Bitmap, layout: GridLayout, offset: Double) -> [Int] {
        layout.visibleCells(offset: offset).filter { i in
            let f = layout.frame(of: i, offset: offset)
            guard f.y >= 0, f.y + f.height <= shot.height else { return false }
            return !close(pixel(shot, f.x + f.width / 2, f.y + f.height / 2), color(i))
        }
    }
}
