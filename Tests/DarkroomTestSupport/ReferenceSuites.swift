import DarkroomImage
import Foundation

/// Other projects' own test images (Pillow's, pillow-jxl-plugin's), fetched from PyPI by
/// `scripts/reference-suites.py` into `.build-reference/` (pinned versions, checked digests), and Pillow's reading
/// of them as the reference. Throws ``TestSupportError`` when a suite cannot be had, so no test passes without it.
package enum ReferenceSuites {
    /// The extracted image folder of `suite` ("pillow" or "pillow-jxl-plugin"), fetched on first use.
    package static func folder(_ suite: String) throws -> String {
        let directory = SamplePhotos.packageRoot.appendingPathComponent(".build-reference").path
        let printed = try PythonReference.script("scripts/reference-suites.py", ["--dir", directory])
        let folders = String(decoding: printed, as: UTF8.self).split(separator: "\n").map(String.init)
        guard let folder = folders.first(where: { $0.hasSuffix("/" + suite) }) else {
            throw TestSupportError("reference suite \(suite) not fetched: \(folders)")
        }
        return folder
    }

    /// The files under `folder` whose extension is one of `extensions` (lower-cased), sorted.
    package static func files(in folder: String, extensions: Set<String>) -> [String] {
        let enumerator = FileManager.default.enumerator(atPath: folder)
        var found: [String] = []
        while let relative = enumerator?.nextObject() as? String {
            if extensions.contains((relative as NSString).pathExtension.lowercased()) {
                found.append(folder + "/" + relative)
            }
        }
        return found.sorted()
    }

    /// Pillow's reading of one file (see `scripts/pillow-reference.py`).
    package struct PillowReading: Decodable, Sendable {
        package let file: String
        package let ok: Bool
        package let mode: String?
        package let width: Int?
        package let height: Int?
        package let comparable: Bool?
        /// An RGBA PNG of what Pillow shows (sRGB, upright), when ``comparable``.
        package let png: String?
        package let error: String?
    }

    /// PSNR between Darkroom's decode of `file` and Pillow's (`scripts/pillow-reference.py`: upright, converted to
    /// sRGB with ImageCms, perceptual), both as premultiplied BGRA at `size` (Pillow's PNG is resampled by the same
    /// code). Throws when Pillow cannot read the file or the two sizes differ.
    package static func psnrAgainstPillow(_ file: String, size: TargetSize, in directory: String) throws -> Double {
        guard let png = try pillow([file], into: directory).first?.png else {
            throw TestSupportError("Pillow did not read \(file)")
        }
        var options = DecodeOptions(size: size)
        options.geometry.pixelFormat = .exactly(.bgra8Premultiplied)
        let ours = try ImageDecoder().decode(SamplePhotos.bytes(file), options: options).bitmap
        let theirs = try ImageDecoder().decode(SamplePhotos.bytes(png), options: options).bitmap
        guard ours.width == theirs.width, ours.height == theirs.height else {
            throw TestSupportError(
                "\(file): \(ours.width)×\(ours.height) against Pillow's \(theirs.width)×\(theirs.height)")
        }
        return PixelCompare.psnr(ours, theirs)
    }

    /// Pillow's readings of `files`, their PNGs written under `directory`.
    package static func pillow(_ files: [String], into directory: String) throws -> [PillowReading] {
        let output = try PythonReference.script("scripts/pillow-reference.py", ["--out", directory] + files)
        return try String(decoding: output, as: UTF8.self).split(separator: "\n").map {
            try JSONDecoder().decode(PillowReading.self, from: Data($0.utf8))
        }
    }
}
