import Foundation

/// Locates the shared sample photos: `$DARKROOM_PHOTOS`, else `../shared/photos` from the working directory
/// or from the executable's package checkout.
package enum BenchPhotos {
    package static func root() -> String? {
        if let env = getenvString("DARKROOM_PHOTOS") { return env }
        var candidates = ["../shared/photos", "shared/photos"]
        // <checkout>/.build/<config>/darkroom → <checkout>/../shared/photos
        let exe = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        candidates.append(exe.deletingLastPathComponent().appendingPathComponent("../../../../shared/photos").path)
        candidates.append(exe.deletingLastPathComponent().appendingPathComponent("../../../../../shared/photos").path)
        return candidates.first { FileManager.default.fileExists(atPath: $0) }
            .map { URL(fileURLWithPath: $0).standardizedFileURL.path }
    }

    package static func getenvString(_ name: String) -> String? {
        guard let v = getenv(name) else { return nil }
        let s = String(cString: v)
        return s.isEmpty ? nil : s
    }

    /// Regular files directly in `dir`, sorted.
    package static func files(in dir: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []).sorted()
            .filter { !$0.hasPrefix(".") && !$0.hasSuffix(".md") }
            .map { dir + "/" + $0 }
    }
}
