import Foundation

/// A fresh directory under the system temporary directory (`mkdtemp`), removed by ``remove()``.
package struct TemporaryDirectory: Sendable {
    /// The directory's absolute path.
    package let path: String

    /// Creates `…/darkroom-NAME-XXXXXX`.
    package init(_ name: String = "tests") throws {
        var template = Array((NSTemporaryDirectory() + "/darkroom-\(name)-XXXXXX").utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        guard let made else { throw TestSupportError("mkdtemp failed for \(name): errno \(errno)") }
        path = String(cString: made)
    }

    /// A path inside the directory.
    package func file(_ name: String) -> String { path + "/" + name }

    /// Deletes the directory and everything in it.
    package func remove() { try? FileManager.default.removeItem(atPath: path) }

    /// A fresh directory's path (for tests that keep only the path).
    package static func make(_ name: String = "tests") throws -> String { try TemporaryDirectory(name).path }

    /// Writes `bytes` to `path`, replacing it.
    package static func write(_ bytes: [UInt8], to path: String) throws {
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }

    /// Deletes `path` (a file or a tree), ignoring absence.
    package static func remove(_ path: String) { try? FileManager.default.removeItem(atPath: path) }
}
