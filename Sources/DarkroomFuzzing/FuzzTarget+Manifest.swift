import DarkroomCache
import Foundation

extension FuzzTarget {
    /// The disk cache's manifest: the input is written as `manifest.sqlite` in a fresh cache directory (on
    /// `/dev/shm` when there is one), the cache is opened (a damaged manifest must be moved aside, never trusted),
    /// read, written and read again.
    package static let manifest = FuzzTarget(
        name: "manifest", summary: "DiskCache opened on a damaged manifest.sqlite, then read and written"
    ) { bytes in
        let directory = ManifestFuzzing.freshDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        guard FileManager.default.createFile(atPath: directory + "/manifest.sqlite", contents: Data(bytes)) else {
            return
        }
        let configuration = DiskCacheConfiguration(
            sizeLimit: 1 << 20, inlineThreshold: 64, trimInterval: .seconds(3600), orphanGracePeriod: .seconds(3600))
        guard let cache = try? DiskCache(directory: directory, configuration: configuration) else { return }
        for key in ManifestFuzzing.keys { _ = cache.data(forKey: key) }
        try? cache.set(Array(repeating: 7, count: 32), forKey: "inline")
        try? cache.set(Array(repeating: 9, count: 300), forKey: "file")
        _ = cache.data(forKey: "inline")
        _ = cache.data(forKey: "file")
        try? cache.removeValue(forKey: ManifestFuzzing.keys[0])
        _ = cache.statistics
    }
}

/// Where the manifest target makes its directories.
enum ManifestFuzzing {
    /// Keys a seed manifest holds (``FuzzSeeds``) and the target reads back.
    static let keys = ["a", "b", "o|https://example.com/photo.jpg", "t|photo.jpg|256|webp"]

    private static let base: String = {
        let shm = "/dev/shm"
        let parent = FileManager.default.fileExists(atPath: shm) ? shm : NSTemporaryDirectory()
        return parent + "/darkroom-fuzz-\(getpid())"
    }()

    static func freshDirectory() -> String {
        let path = base + "/" + UUID().uuidString
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }
}
