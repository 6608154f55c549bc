import DarkroomImage
import DarkroomSupport
import DarkroomTestSupport
import Foundation
import Testing

@testable import DarkroomDesktop

/// The freedesktop.org thumbnail cache against a second implementation of the specification, GLib's (`gio info`
/// reports `thumbnail::path` and `thumbnail::is-valid` from the same cache), and against thumbnails another program
/// (Pillow, standing in for a file manager) wrote.
@Suite("Desktop thumbnail cache")
struct DesktopThumbnailCacheTests {
    /// GLib's answers for `file` with the cache under `cacheHome`: its URI, and the thumbnail path and validity.
    static func gio(_ file: String, cacheHome: String) throws -> [String: String] {
        try GIOInfo.attributes(file, cacheHome: cacheHome)
    }

    @Test("file URIs are escaped exactly as GLib escapes them")
    func uris() throws {
        let directory = try TemporaryDirectory("desktop")
        defer { directory.remove() }
        // Given files whose names need escaping (space, percent, hash, semicolon, brackets, accents, emoji)
        for name in [
            "plain.jpg", "with space.jpg", "100%.jpg", "a#b;c[d]{e}.jpg", "café-Ünïcode.jpg", "😀.png",
            "a+b=c&d@e,f!'~().jpg",
        ] {
            let file = directory.file(name)
            try TemporaryDirectory.write([1], to: file)
            // Then Darkroom's URI is GLib's
            #expect(FileURI.of(path: file) == (try Self.gio(file, cacheHome: directory.path)["uri"]), "\(name)")
        }
    }

    @Test("file URIs read back to their paths; other schemes, hosts and malformed escapes do not")
    func uriPaths() {
        // Given paths that need escaping, Then their URIs read back to them
        for path in [
            "/plain.jpg", "/with space/100%.jpg", "/a#b;c[d]{e}.jpg", "/café-Ünïcode/😀.png", "/a+b=c&d@e,f!'~()",
        ] {
            #expect(FileURI.path(of: FileURI.of(path: path)) == path, "\(path)")
        }
        #expect(FileURI.path(of: "file://localhost/x/y.jpg") == "/x/y.jpg")
        #expect(FileURI.path(of: "file:///x/y%20z.jpg?query#fragment") == "/x/y z.jpg")
        // And what names no local file is refused
        for uri in [
            "http://host/x.jpg", "file://host/x.jpg", "file:x.jpg", "file://", "file:///a%zz.jpg", "file:///a%2",
            "file:///nul%00.jpg", "file:///bad%FF.jpg", "garbage",
        ] {
            #expect(FileURI.path(of: uri) == nil, "\(uri)")
        }
    }

    @Test("a stored thumbnail is found valid by GLib and by lookup; it turns stale when the file changes")
    func storeAndLookup() throws {
        let directory = try TemporaryDirectory("desktop")
        defer { directory.remove() }
        let cache = DesktopThumbnailCache(root: directory.file("thumbnails"))
        // Given a photo and its 256 px thumbnail stored in the cache
        let file = directory.file("my photo.jpg")
        try TemporaryDirectory.write(try SamplePhotos.bytes("jpeg/kite-2560x1600.jpg"), to: file)
        let thumb = try ImageDecoder().decode(fileAt: file, options: DecodeOptions(size: .maxPixelSize(256)))
        let stored = try cache.store(thumb.bitmap, for: file, size: .large, mimeType: "image/jpeg")
        // Then lookup and GLib both find it, valid, at the path the specification gives
        #expect(try cache.lookup(file, size: .large) == .valid(stored))
        let glib = try Self.gio(file, cacheHome: directory.path)
        #expect(glib["thumbnail::path"] == stored && glib["thumbnail::is-valid"] == "TRUE", "\(glib)")
        // And it is private: the file 0600, its folders 0700
        let attributes = try FileManager.default.attributesOfItem(atPath: stored)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        let folder = try FileManager.default.attributesOfItem(atPath: directory.file("thumbnails/large"))
        #expect((folder[.posixPermissions] as? Int) == 0o700)
        // And no temporary file is left beside it
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.file("thumbnails/large")).count == 1)
        // When the file's modification time changes, Then both see the thumbnail as stale
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSinceNow: 3600)], ofItemAtPath: file)
        #expect(try cache.lookup(file, size: .large) == .stale(stored))
        #expect(try Self.gio(file, cacheHome: directory.path)["thumbnail::is-valid"] == "FALSE")
    }

    @Test("a thumbnail another program wrote is reused; a failure is recorded where this version looks")
    func othersAndFailures() throws {
        let directory = try TemporaryDirectory("desktop")
        defer { directory.remove() }
        let cache = DesktopThumbnailCache(root: directory.file("thumbnails"))
        let file = directory.file("other.png")
        try TemporaryDirectory.write(try SamplePhotos.bytes("png/cups-alpha-1600x1000.png"), to: file)
        // Given a normal-size thumbnail written by Pillow with the specification's keys
        let mtime = Int(
            try #require(try FileManager.default.attributesOfItem(atPath: file)[.modificationDate] as? Date)
                .timeIntervalSince1970)
        let target = cache.path(forURI: FileURI.of(path: file), size: .normal)
        try FileManager.default.createDirectory(
            atPath: directory.file("thumbnails/normal"), withIntermediateDirectories: true)
        _ = try PythonReference.run(
            """
            import sys
            from PIL import Image, PngImagePlugin
            info = PngImagePlugin.PngInfo()
            info.add_text("Thumb::URI", sys.argv[2]); info.add_text("Thumb::MTime", sys.argv[3])
            im = Image.open(sys.argv[1]); im.thumbnail((128, 128)); im.save(sys.argv[4], pnginfo=info)
            """, [file, FileURI.of(path: file), String(mtime), target])
        // Then lookup finds it valid
        #expect(try cache.lookup(file, size: .normal) == .valid(target))
        // And a file that cannot be thumbnailed is recorded, and GLib sees no thumbnail for it
        let broken = directory.file("broken.jpg")
        try TemporaryDirectory.write([0xFF, 0xD8, 0xFF, 0xE0, 0, 16], to: broken)
        #expect(try cache.lookup(broken, size: .large) == .missing)
        try cache.storeFailure(for: broken)
        #expect(try cache.lookup(broken, size: .large) == .failed)
        #expect(try Self.gio(broken, cacheHome: directory.path)["thumbnail::path"] == nil)
    }

    @Test(
        "darkroom thumbnail-cache fill renders each image once, then finds them valid; the thumbnailer CLI writes a PNG"
    )
    func fillCommand() throws {
        let directory = try TemporaryDirectory("desktop")
        defer { directory.remove() }
        let binary = try SamplePhotos.darkroomBinary()
        let root = directory.file("thumbnails")
        // When the orientation samples are filled in twice
        func fill() throws -> [String: Any] {
            let output = try ReferenceTool.run(
                binary, ["thumbnail-cache", "fill", SamplePhotos.path("orientation"), "--cache-dir", root, "--json"])
            return try #require(try JSONSerialization.jsonObject(with: output) as? [String: Any])
        }
        let first = try fill()
        let second = try fill()
        // Then the first run renders all eight, the second none, and GLib finds each valid and upright-sized
        #expect(first["rendered"] as? Int == 8 && first["failed"] as? Int == 0, "\(first)")
        #expect(second["rendered"] as? Int == 0 && second["valid"] as? Int == 8, "\(second)")
        for path in SamplePhotos.files("orientation") where path.hasSuffix(".jpg") {
            let glib = try Self.gio(path, cacheHome: directory.path)
            #expect(glib["thumbnail::is-valid"] == "TRUE", "\(path)")
            let thumb = try ImageProber.probe(fileAt: try #require(glib["thumbnail::path"]))
            #expect(thumb.width == 256 && thumb.height == 160, "\(path)")
        }
        // When a library with nested folders is filled with TMPDIR pointing at an empty folder
        let library = directory.file("library/2026/summer")
        let scratch = directory.file("tmp")
        for folder in [library, scratch] {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        }
        try FileManager.default.copyItem(
            atPath: SamplePhotos.path("orientation/fallenleaf-600x400-orientation-1.jpg"),
            toPath: library + "/leaf.jpg")
        let nested = try #require(
            try JSONSerialization.jsonObject(
                with: ReferenceTool.run(
                    "env",
                    [
                        "TMPDIR=\(scratch)", binary, "thumbnail-cache", "fill", directory.file("library"),
                        "--cache-dir",
                        root, "--json",
                    ])) as? [String: Any])
        // Then the image is rendered and nothing is left in TMPDIR (no copy of the folder tree)
        #expect(nested["rendered"] as? Int == 1, "\(nested)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch) == [])
        // And the thumbnailer entry point writes a PNG of the size asked for, from a file URI
        let out = directory.file("one.png")
        _ = try ReferenceTool.run(
            binary, ["thumbnailer", "-s", "128", FileURI.of(path: SamplePhotos.path("jpeg/kite-2560x1600.jpg")), out])
        let probe = try ImageProber.probe(fileAt: out)
        #expect(probe.format == .png && probe.width == 128 && probe.height == 80)
    }
}
