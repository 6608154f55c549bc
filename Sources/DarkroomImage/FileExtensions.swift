/// The file-name extensions of what Darkroom reads, lower-cased: how a folder's listing (the server's gallery, the
/// viewer's library) picks its files by name before any is opened. The bytes decide the format when a file is read,
/// so a misnamed file is still decoded right (or refused with a typed error).
package enum FileExtensions {
    /// Still and animated image formats: JPEG, PNG and APNG, GIF, WebP, HEIF, AVIF, JPEG XL, TIFF, SVG, BMP, ICO and
    /// CUR.
    package static let images: Set<String> = [
        "jpg", "jpeg", "jpe", "png", "apng", "gif", "webp", "heic", "heif", "avif", "jxl", "tif", "tiff", "svg", "bmp",
        "dib", "ico", "cur",
    ]

    /// Camera RAW files (libraw): DNG and the makers' own.
    package static let cameraRaw: Set<String> = [
        "dng", "cr2", "cr3", "nef", "nrw", "arw", "srf", "sr2", "raf", "orf", "rw2", "rwl", "pef", "srw", "3fr", "iiq",
        "erf", "kdc", "mos", "mrw", "x3f",
    ]

    /// Video containers (FFmpeg): MP4 and QuickTime, 3GPP, Matroska and WebM, AVI.
    package static let videos: Set<String> = ["mp4", "m4v", "mov", "3gp", "mkv", "webm", "avi"]

    /// The stills a phone writes Motion Photos and Live Photos as (JPEG, HEIC, AVIF): the ones that may have motion.
    package static let motionStills: Set<String> = ["jpg", "jpeg", "heic", "heif", "avif"]

    /// Everything Darkroom lists: images, camera RAW and videos.
    package static let all = images.union(cameraRaw).union(videos)

    /// The lower-cased extension of the file `name` (after its last dot), nil when it has none.
    package static func of(_ name: some StringProtocol) -> String? {
        guard let dot = name.lastIndex(of: "."), name.index(after: dot) < name.endIndex else { return nil }
        return name[name.index(after: dot)...].lowercased()
    }

    /// Whether the file `name` is one Darkroom lists, by its extension.
    package static func isListed(_ name: some StringProtocol) -> Bool { of(name).map(all.contains) ?? false }

    /// Whether the file `name` is a video by its extension.
    package static func isVideo(_ name: some StringProtocol) -> Bool { of(name).map(videos.contains) ?? false }
}
