import DarkroomImage
import Foundation

/// Ultra HDR JPEGs made once per test process by two writers Darkroom did not write (libultrahdr 1.4 through
/// imagecodecs: ISO 21496-1 metadata; pyultrahdr: hdrgm XMP), from a 2560 × 1600 photo at 640 px, with
/// libultrahdr's own decodes beside them (`scripts/make-gainmap-samples.py` lists the files).
package enum GainMapSamples {
    /// The photo's stem, which every sample's name starts with.
    package static let name = "colorfulcups-2560x1600"

    private static let directory = PythonReference.folder(
        "gainmap", madeBy: "scripts/make-gainmap-samples.py",
        runs: [[SamplePhotos.path("jpeg/\(name).jpg"), "--max-side", "640"]])

    /// The path of `NAME-writer suffix`: `writer` is `iso` or `xmp`, `suffix` `.jpg` (the Ultra HDR file),
    /// `-base.png`, `.json`, `-gain.f32` or `-hdr.f32`. Throws when the samples could not be made.
    package static func path(_ writer: String, _ suffix: String = ".jpg") throws -> String {
        try directory.get() + "/\(name)-\(writer)\(suffix)"
    }

    /// An Ultra HDR JPEG assembled in process by Darkroom's own writer, for tests that need one quickly and must not
    /// block on Python (async tests, whose threads the server shares): `photo` at 640 px as the base, its gray
    /// 160 px rendition as the gain map, gains of 0 to 2 stops applying fully from 2 stops of headroom.
    /// Returns the file and the primary image's length (where the gain map starts).
    package static func assembled(from photo: String) throws -> (bytes: [UInt8], primaryLength: Int) {
        let source = try SamplePhotos.bytes(photo)
        let decoder = ImageDecoder()
        let base = try decoder.decode(source, options: DecodeOptions(size: .maxPixelSize(640)))
        let map = try decoder.decode(
            source, options: DecodeOptions(size: .maxPixelSize(160), pixelFormat: .exactly(.gray8)))
        let primary = try ImageEncoder.encode(base.bitmap, as: .jpeg)
        let bytes = UltraHDRWriter.assemble(
            primary: primary, gainMap: try ImageEncoder.encode(map.bitmap, as: .jpeg),
            metadata: GainMapMetadata(gainMapMin: [0], gainMapMax: [2], alternateHeadroom: 2))
        // The primary grew by its XMP, ISO and MPF segments; the gain map JPEG follows it.
        let gainMapStart = bytes.count - (ImageProber.gainMap(of: bytes)?.byteCount ?? 0)
        return (bytes, gainMapStart)
    }
}

/// An HEIC laid out as an iPhone writes an HDR photo (a Display P3 photo at 640 px, a half-size gain map as its
/// `urn:com:apple:photo:2020:aux:hdrgainmap` auxiliary image, the headroom in the EXIF maker note), made once per test
/// process with apple-hdr-heic's rendition of it beside it (`scripts/make-apple-gainmap-heic.py` lists the files).
package enum AppleGainMapSamples {
    /// The photo's stem, which every sample's name starts with.
    package static let name = "displayp3-kite-1280x800"

    private static let directory = PythonReference.folder(
        "apple-gainmap", madeBy: "scripts/make-apple-gainmap-heic.py",
        runs: [[SamplePhotos.path("icc/\(name).png"), "--max-side", "640"]])

    /// The path of `NAME-apple suffix`: `.heic` (the file), `-hdr.f32` (apple-hdr-heic's rendition at full
    /// headroom) or `.json` (the maker-note values and headroom it read). Throws when the sample could not be made.
    package static func path(_ suffix: String = ".heic") throws -> String {
        try directory.get() + "/\(name)-apple\(suffix)"
    }
}
