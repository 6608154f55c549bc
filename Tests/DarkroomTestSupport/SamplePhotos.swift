import DarkroomImage
import Foundation

/// A test-support failure: a sample photo, the `darkroom` binary or a directory that a test needs is missing.
/// Thrown (never skipped over), so a test without its data fails with this message.
package struct TestSupportError: Error, CustomStringConvertible {
    package let description: String
    package init(_ description: String) { self.description = description }
}

/// The shared sample photos: `$DARKROOM_PHOTOS`, else `../shared/photos` beside the package root.
///
/// Every accessor that returns files fails loudly (throws ``TestSupportError``) when the folder or file is
/// missing, so no test passes silently without its data.
package enum SamplePhotos {
    /// The package root (the directory holding Package.swift).
    package static let packageRoot: URL = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    /// The sample set's folder.
    package static let root: String = {
        if let env = ProcessInfo.processInfo.environment["DARKROOM_PHOTOS"], !env.isEmpty { return env }
        return packageRoot.appendingPathComponent("../shared/photos").standardizedFileURL.path
    }()

    /// Files in one folder of the sample set, sorted, as absolute paths; empty if the folder is missing (callers
    /// that need files use ``require(_:minimum:)``).
    package static func files(_ folder: String) -> [String] {
        let dir = root + "/" + folder
        return ((try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []).sorted()
            .filter { !$0.hasPrefix(".") }.map { dir + "/" + $0 }
    }

    /// The files of `folder` (filtered by `suffix`), throwing when fewer than `minimum` are there.
    package static func require(_ folder: String, suffix: String = "", minimum: Int = 1) throws -> [String] {
        let found = files(folder).filter { suffix.isEmpty || $0.hasSuffix(suffix) }
        guard found.count >= minimum else {
            throw TestSupportError("expected at least \(minimum) sample(s) in \(root)/\(folder); set DARKROOM_PHOTOS")
        }
        return found
    }

    /// Every still-image sample (JPEG, 12 MP JPEG, orientation, PNG, WebP, GIF).
    package static var all: [String] { ["jpeg", "jpeg-12mp", "orientation", "png", "webp", "gif"].flatMap(files) }

    /// The absolute path of a sample given relative to ``root``; absolute paths pass through.
    package static func path(_ pathOrRelative: String) -> String {
        pathOrRelative.hasPrefix("/") ? pathOrRelative : root + "/" + pathOrRelative
    }

    /// A sample's bytes; throws when the file is missing.
    package static func bytes(_ pathOrRelative: String) throws -> [UInt8] {
        let full = path(pathOrRelative)
        guard FileManager.default.fileExists(atPath: full) else {
            throw TestSupportError("missing sample \(full); set DARKROOM_PHOTOS")
        }
        return try FileBytes.read(full)
    }

    /// Every sample as a path relative to ``root``; throws unless the full set (≥ 20 files) is there.
    package static func allRelative() throws -> [String] {
        let files = all.map { String($0.dropFirst(root.count + 1)) }
        guard files.count >= 20 else {
            throw TestSupportError("expected the full sample set in \(root); set DARKROOM_PHOTOS")
        }
        return files
    }

    /// The `darkroom` executable for crash tests that run it as a child: `$DARKROOM_BIN`, else
    /// ``builtExecutable(_:)``.
    package static func darkroomBinary() throws -> String {
        if let env = ProcessInfo.processInfo.environment["DARKROOM_BIN"], !env.isEmpty { return env }
        return try builtExecutable("darkroom")
    }

    /// The package's executable `name` (`darkroom`, `darkroom-worker`): beside the test binary (same build products
    /// directory), else in `.build/release` or `.build/debug` under the package root.
    package static func builtExecutable(_ name: String) throws -> String {
        var dir = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
        for _ in 0..<4 {
            let candidate = dir.appendingPathComponent(name).path
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
            dir = dir.deletingLastPathComponent()
        }
        for config in ["release", "debug"] {
            let candidate = packageRoot.appendingPathComponent(".build/\(config)/\(name)").path
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        throw TestSupportError("\(name) executable not found; run `swift build --build-tests`")
    }
}
