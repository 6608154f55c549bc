import Foundation

/// GLib's reading of a file, from `gio info`: a second implementation of the freedesktop.org thumbnail
/// specification (`thumbnail::path`, `thumbnail::is-valid`) and of file URIs (`uri`).
package enum GIOInfo {
    /// The attributes `gio info -a attributes` prints for `file`, with the thumbnail cache under `cacheHome`.
    package static func attributes(
        _ file: String, cacheHome: String, matching attributes: String = "thumbnail::*,standard::name"
    ) throws -> [String: String] {
        let output = try ReferenceTool.run(
            "env", ["XDG_CACHE_HOME=" + cacheHome, "gio", "info", "-a", attributes, file])
        var fields: [String: String] = [:]
        for line in String(decoding: output, as: UTF8.self).split(separator: "\n") {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            guard let colon = trimmed.range(of: ": ") else { continue }
            fields[String(trimmed[..<colon.lowerBound])] = String(trimmed[colon.upperBound...])
        }
        return fields
    }
}
