import Foundation

/// Ultra HDR JPEGs made once per test process by two writers Darkroom did not write (libultrahdr 1.4 through
/// imagecodecs: ISO 21496-1 metadata; pyultrahdr: hdrgm XMP), from a 2560 × 1600 photo at 640 px, with
/// libultrahdr's own decodes beside them (`scripts/make-gainmap-samples.py` lists the files).
package enum GainMapSamples {
    /// The photo's stem, which every sample's name starts with.
    package static let name = "colorfulcups-2560x1600"

    private static let directory: Result<String, TestSupportError> = {
        do {
            let directory = try TemporaryDirectory.make("gainmap")
            _ = try PythonReference.script(
                "scripts/make-gainmap-samples.py",
                [SamplePhotos.path("jpeg/\(name).jpg"), directory, "--max-side", "640"])
            return .success(directory)
        } catch let error as TestSupportError {
            return .failure(error)
        } catch {
            return .failure(TestSupportError("making the gain-map samples failed: \(error)"))
        }
    }()

    /// The path of `NAME-writer suffix`: `writer` is `iso` or `xmp`, `suffix` `.jpg` (the Ultra HDR file),
    /// `-base.png`, `.json`, `-gain.f32` or `-hdr.f32`. Throws when the samples could not be made.
    package static func path(_ writer: String, _ suffix: String = ".jpg") throws -> String {
        try directory.get() + "/\(name)-\(writer)\(suffix)"
    }
}
