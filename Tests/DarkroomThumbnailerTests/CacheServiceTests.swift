import DarkroomImage
import DarkroomSupport
import DarkroomTestSupport
import Foundation
import Testing

@testable import DarkroomDesktop
@testable import DarkroomThumbnailer

/// The `Cache1` interface over the bus: thumbnails follow the files a file manager moves, copies and deletes, checked
/// by GLib's reading of the cache.
@Suite("Thumbnail cache over D-Bus", .serialized)
struct CacheServiceTests {
    static func call(_ method: String, _ args: [Any]) -> [String: Any] {
        let signature = method == "Cleanup" ? "asu" : method == "Delete" ? "as" : "asas"
        return ["method": method, "object": "Cache1", "signature": signature, "args": args]
    }

    @Test("Move and Copy carry thumbnails to the new names (files and whole folders); Delete and Cleanup remove them")
    func followsFiles() throws {
        let harness = try ServiceHarness()
        defer { harness.stop() }
        let folder = harness.folder
        // Given thumbnails of four photos, two of them in a folder
        try FileManager.default.createDirectory(atPath: folder.file("album"), withIntermediateDirectories: true)
        let single = try ThumbnailServiceTests.photos(2, in: folder.path, prefix: "single")
        let album = try ThumbnailServiceTests.photos(2, in: folder.file("album"))
        let all = (single + album).map(FileURI.of(path:))
        let made = try harness.client([ServiceHarness.queue(all)])
        #expect(Set(made.ready(made.handle(0))) == Set(all))
        for file in single + album { #expect(try harness.glib(file).valid, "\(file)") }

        // When the first photo is renamed and the folder moved, and the service is told
        let renamed = folder.file("renamed photo #1.jpg")
        #expect(rename(single[0], renamed) == 0)
        #expect(rename(folder.file("album"), folder.file("album 2")) == 0)
        // And the second photo is copied (a new modification time) and the copy reported
        let copy = folder.file("copy.jpg")
        try FileManager.default.copyItem(atPath: single[1], toPath: copy)
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSinceNow: 7200)], ofItemAtPath: copy)
        let moved = try harness.client([
            Self.call(
                "Move",
                [
                    [all[0], FileURI.of(path: folder.file("album"))],
                    [FileURI.of(path: renamed), FileURI.of(path: folder.file("album 2"))],
                ]),
            Self.call("Copy", [[all[1]], [FileURI.of(path: copy)]]),
        ])
        #expect(moved.replies.allSatisfy { $0.error == nil }, "\(moved.replies)")
        // Then GLib finds valid thumbnails under the new names, and none is left under the old ones
        let cache = harness.service.configuration.cache
        for file in [renamed, copy, single[1]]
            + album.map({ $0.replacingOccurrences(of: "/album/", with: "/album 2/") })
        {
            let glib = try harness.glib(file)
            #expect(
                glib.valid && glib.path == cache.path(forURI: FileURI.of(path: file), size: .normal), "\(file): \(glib)"
            )
        }
        for uri in [all[0]] + all[2...] {
            #expect(!FileManager.default.fileExists(atPath: cache.path(forURI: uri, size: .normal)), "\(uri)")
        }
        #expect(harness.service.tally.withLock { $0["rendered"] } == 4)

        // When the copy is deleted and reported, and the renamed photo deleted without a word, then a cleanup runs
        try FileManager.default.removeItem(atPath: copy)
        try FileManager.default.removeItem(atPath: renamed)
        let removed = try harness.client([
            Self.call("Delete", [[FileURI.of(path: copy)]]),
            Self.call("Cleanup", [[FileURI.of(path: folder.path)], 0]),
        ])
        #expect(removed.replies.allSatisfy { $0.error == nil }, "\(removed.replies)")
        // Then only the thumbnails of the photos still there are left
        let left = Set(harness.cacheFiles())
        let expected = Set(
            ([single[1]] + album.map { $0.replacingOccurrences(of: "/album/", with: "/album 2/") }).map {
                "normal/" + DesktopThumbnailCache.md5(FileURI.of(path: $0)) + ".png"
            })
        #expect(left == expected, "\(left)")
    }

    @Test("cache calls with lists that do not pair up are refused with a D-Bus error")
    func unpaired() throws {
        let harness = try ServiceHarness()
        defer { harness.stop() }
        let session = try harness.client([Self.call("Move", [["file:///a.jpg", "file:///b.jpg"], ["file:///c.jpg"]])])
        #expect(session.replies[0].error == "org.freedesktop.DBus.Error.InvalidArgs", "\(session.replies)")
    }
}
