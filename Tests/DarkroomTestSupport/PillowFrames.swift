import Foundation

/// An animation's frames as Pillow composites them (`seek(n)`, then `convert("RGBA")`): the independent reference
/// for GIF and animated WebP. Runs `python3` with Pillow; throws ``TestSupportError`` when either is missing
/// (`make test` installs Pillow), so no comparison passes without its reference.
package struct PillowFrames {
    package let width: Int
    package let height: Int
    /// Each frame as straight RGBA8, row-major (durations are read after the frame loads: Pillow's WebP reader
    /// sets them then).
    package let frames: [[UInt8]]
    package let durations: [Int]
    /// Pillow's `info["loop"]`, nil when absent.
    package let loop: Int?

    /// Reads `path`'s first `maxFrames` frames (all by default).
    package init(path: String, maxFrames: Int = .max) throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let out = directory.path + "/frames.rgba"
        let script = """
            import json, sys
            from PIL import Image
            im = Image.open(sys.argv[1]); durations = []
            with open(sys.argv[2], "wb") as f:
                for i in range(min(getattr(im, "n_frames", 1), int(sys.argv[3]))):
                    im.seek(i); rgba = im.convert("RGBA"); durations.append(im.info.get("duration", 0)); f.write(rgba.tobytes())
            print(json.dumps({"size": im.size, "durations": durations, "loop": im.info.get("loop"),
                "n_frames": getattr(im, "n_frames", 1)}))
            """
        let output = try PythonReference.run(script, [path, out, String(min(maxFrames, 1 << 30))])
        struct Summary: Decodable {
            var size: [Int]
            var durations: [Double]
            var loop: Int?
        }
        let summary = try JSONDecoder().decode(Summary.self, from: output)
        width = summary.size[0]
        height = summary.size[1]
        durations = summary.durations.map { Int($0.rounded()) }
        loop = summary.loop
        let all = try [UInt8](Data(contentsOf: URL(fileURLWithPath: out)))
        let frameBytes = width * height * 4
        guard all.count == frameBytes * durations.count else {
            throw TestSupportError(
                "Pillow wrote \(all.count) bytes for \(durations.count) frames of \(width)×\(height)")
        }
        frames = (0..<durations.count).map { Array(all[($0 * frameBytes)..<(($0 + 1) * frameBytes)]) }
    }
}

extension PillowFrames {
    /// Straight RGBA premultiplied (R, G, B scaled by alpha, rounded): how two decoders' soft-alpha pixels are
    /// compared, since the colour of a nearly transparent pixel is not visible and not kept by premultiplied storage.
    package static func premultiplied(_ rgba: [UInt8]) -> [UInt8] {
        var out = rgba
        for i in stride(from: 0, to: out.count, by: 4) {
            let a = Int(out[i + 3])
            for c in 0..<3 { out[i + c] = UInt8((Int(out[i + c]) * a + 127) / 255) }
        }
        return out
    }
}
