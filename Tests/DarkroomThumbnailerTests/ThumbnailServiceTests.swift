import DarkroomImage
import DarkroomSupport
import DarkroomTestSupport
import Foundation
import Testing

@testable import DarkroomDesktop
@testable import DarkroomThumbnailer

/// The service over a real bus (a private `dbus-daemon`), spoken to by clients written apart from it: jeepney (a
/// pure-Python D-Bus library), GLib's `gdbus` and `dbus-send`; its thumbnails checked by GLib's own reading of the
/// cache (`gio info`).
@Suite("Thumbnail service over D-Bus", .serialized)
struct ThumbnailServiceTests {
    /// `count` distinct JPEG photos of 640 × 480 in `folder`, their paths.
    static func photos(_ count: Int, in folder: String, prefix: String = "p") throws -> [String] {
        try (0..<count).map { i in
            let path = folder + "/\(prefix)\(i).jpg"
            let bitmap = try TestBitmaps.seeded(width: 640, height: 480, seed: i)
            try TemporaryDirectory.write(try ImageEncoder.encode(bitmap, as: .jpeg), to: path)
            return path
        }
    }

    @Test("GetFlavors, GetSchedulers, GetSupported and introspection answer gdbus and dbus-send")
    func lists() throws {
        let harness = try ServiceHarness()
        defer { harness.stop() }
        let object = [
            "--dest", ThumbnailerProtocol.thumbnailerName, "--object-path", "/org/freedesktop/thumbnails/Thumbnailer1",
        ]
        // When GLib's client asks for the flavors and schedulers
        let flavors = try harness.bus.gdbus(
            ["call"] + object + ["--method", "org.freedesktop.thumbnails.Thumbnailer1.GetFlavors"])
        #expect(flavors.contains("['normal', 'large', 'x-large', 'xx-large']"), "\(flavors)")
        let schedulers = try harness.bus.gdbus(
            ["call"] + object + ["--method", "org.freedesktop.thumbnails.Thumbnailer1.GetSchedulers"])
        #expect(schedulers.contains("'foreground'") && schedulers.contains("'background'"), "\(schedulers)")
        // And dbus-send asks what is supported
        let supported = String(
            decoding: try ReferenceTool.runDetached(
                "dbus-send",
                [
                    "--bus=" + harness.bus.address, "--print-reply", "--dest=" + ThumbnailerProtocol.thumbnailerName,
                    "/org/freedesktop/thumbnails/Thumbnailer1", "org.freedesktop.thumbnails.Thumbnailer1.GetSupported",
                ]), as: UTF8.self)
        // Then the formats tumbler's plugins do not cover are listed, each with the file scheme
        for type in ["image/heic", "image/avif", "image/jxl", "image/x-adobe-dng", "image/svg+xml", "video/mp4"] {
            #expect(supported.contains("\"\(type)\""), "\(type)")
        }
        #expect(supported.components(separatedBy: "\"file\"").count - 1 == ThumbnailerProtocol.mimeTypes.count)
        // And introspection shows the specification's methods, signals and argument names
        let introspection = try harness.bus.gdbus(["introspect"] + object)
        for member in [
            "Queue(in  as uris,", "Dequeue(in  u handle", "Ready(u handle,", "Error(u handle,", "Started(u handle",
            "Finished(u handle",
        ] {
            #expect(introspection.contains(member), "\(member)")
        }
        let cache = try harness.bus.gdbus([
            "introspect", "--dest", ThumbnailerProtocol.cacheName, "--object-path",
            "/org/freedesktop/thumbnails/Cache1",
        ])
        for member in ["Move(", "Copy(", "Delete(", "Cleanup("] { #expect(cache.contains(member), "\(member)") }
    }

    @Test("photos of every kind get a thumbnail GLib finds valid; asked again, they are answered without a decode")
    func thumbnails() throws {
        let harness = try ServiceHarness()
        defer { harness.stop() }
        // Given photos of the kinds people have, by path
        let files = [
            "jpeg/kite-2560x1600.jpg", "heic/summer_1am-2560x1600.heic", "png/cups-alpha-1600x1000.png",
            "webp/eveningglow-lossy-2560x1600.webp", "avif/bythewater-2560x1600.avif",
        ].map(SamplePhotos.path)
        for file in files { #expect(FileManager.default.fileExists(atPath: file), "missing sample \(file)") }
        let uris = files.map(FileURI.of(path:))
        // When a client queues them at the normal size
        let session = try harness.client([ServiceHarness.queue(uris, flavor: "normal")])
        let handle = session.handle(0)
        // Then it hears Started, a Ready for each, and Finished, in that order
        #expect(session.complete)
        let names = session.signals(of: handle).map(\.name)
        #expect(
            names.first == "Started" && names.last == "Finished" && names.filter { $0 == "Error" }.isEmpty, "\(names)")
        #expect(Set(session.ready(handle)) == Set(uris))
        // And GLib finds each thumbnail where the specification puts it, and valid
        let cache = harness.service.configuration.cache
        for (file, uri) in zip(files, uris) {
            let glib = try harness.glib(file)
            #expect(glib.path == cache.path(forURI: uri, size: .normal) && glib.valid, "\(file): \(glib)")
            // And it is at most 128 px a side, 128 on the long side, with its time in whole seconds
            let thumbnail = try ImageDecoder().decode(fileAt: cache.path(forURI: uri, size: .normal))
            #expect(max(thumbnail.bitmap.width, thumbnail.bitmap.height) == 128, "\(file)")
            let texts = try #require(DesktopThumbnailCache.texts(of: cache.path(forURI: uri, size: .normal)))
            #expect(texts["Thumb::MTime"].flatMap { Int($0) } != nil, "\(texts)")
        }
        #expect(harness.service.tally.withLock { $0["rendered"] } == files.count)
        // When they are asked for again, Then they are ready without a decode
        let again = try harness.client([ServiceHarness.queue(uris, flavor: "normal", scheduler: "background")])
        #expect(Set(again.ready(again.handle(0))) == Set(uris))
        #expect(harness.service.tally.withLock { ($0["rendered"], $0["valid"]) } == (files.count, files.count))
    }

    @Test("bad requests get typed errors or Error signals, never a thumbnail for a file not asked for")
    func badInput() throws {
        let harness = try ServiceHarness()
        defer { harness.stop() }
        let folder = harness.folder
        // Given files that cannot be thumbnailed: damaged, empty, a folder, a named pipe (opening one must not block)
        try TemporaryDirectory.write(
            Array(try SamplePhotos.bytes("jpeg/kite-2560x1600.jpg").prefix(300)), to: folder.file("cut.jpg"))
        var png = try SamplePhotos.bytes("png/cups-alpha-1600x1000.png")
        png[20] ^= 0xFF  // the height in IHDR
        try TemporaryDirectory.write(png, to: folder.file("damaged.jpg"))
        try TemporaryDirectory.write([], to: folder.file("empty.jpg"))
        try FileManager.default.createDirectory(atPath: folder.file("a folder"), withIntermediateDirectories: true)
        #expect(mkfifo(folder.file("pipe.jpg"), 0o600) == 0)
        let good = try Self.photos(1, in: folder.path)[0]
        // And a thumbnail already in the cache
        let session0 = try harness.client([ServiceHarness.queue([FileURI.of(path: good)])])
        #expect(session0.ready(session0.handle(0)) == [FileURI.of(path: good)])
        let thumbnail = harness.service.configuration.cache.path(forURI: FileURI.of(path: good), size: .normal)
        let damaged = ["cut.jpg", "damaged.jpg"].map { FileURI.of(path: folder.file($0)) }
        let unreadable = ["missing.jpg", "a folder", "pipe.jpg"].map { FileURI.of(path: folder.file($0)) }
        let empty = FileURI.of(path: folder.file("empty.jpg"))
        let malformed = ["garbage", "file://", "file:///a%zzb.jpg", "file://elsewhere/x.jpg", "file:///nul%00.jpg"]
        let schemes = ["http://example.com/x.jpg", "smb://server/share/x.jpg", "trash:///x.jpg"]
        let itself = FileURI.of(path: thumbnail)
        let uris = damaged + unreadable + [empty] + malformed + schemes + [itself]
        // When they are queued, with a MIME type not supported beside them, then with an unknown flavor
        let text = FileURI.of(path: good)
        let session = try harness.client([
            ServiceHarness.queue(uris + [text], mimeTypes: uris.map { _ in "" } + ["text/plain"]),
            ServiceHarness.queue([text], flavor: "huge"),
            ServiceHarness.queue([text, text], mimeTypes: ["image/jpeg"]),
            ["method": "Queue", "signature": "s", "args": ["not the signature"]],
            ServiceHarness.queue(damaged),
        ])
        // Then each URI gets the specification's code, and the request finishes
        let codes = session.errors(session.handle(0))
        for uri in damaged { #expect(codes[uri] == 2, "\(uri)") }
        for uri in unreadable { #expect(codes[uri] == 8, "\(uri)") }
        #expect(codes[empty] == 6)
        for uri in malformed { #expect(codes[uri] == 2, "\(uri)") }
        for uri in schemes { #expect(codes[uri] == 0, "\(uri)") }
        #expect(codes[itself] == 3)
        #expect(codes[text] == 0)
        #expect(session.signals(of: session.handle(0)).last?.name == "Finished")
        #expect(session.ready(session.handle(0)).isEmpty)
        // And the unknown flavor gets Started, Error 5 and Finished
        let flavor = session.handle(1)
        #expect(session.signals(of: flavor).map(\.name) == ["Started", "Error", "Finished"])
        #expect(session.errors(flavor)[text] == 5)
        // And lists of different lengths or the wrong signature are refused with D-Bus errors
        #expect(session.replies[2].error == "org.freedesktop.DBus.Error.InvalidArgs", "\(session.replies[2])")
        #expect(session.replies[3].error == "org.freedesktop.DBus.Error.InvalidArgs", "\(session.replies[3])")
        // And the damaged files' failures were recorded: asked again, they are not decoded again
        #expect(session.errors(session.handle(4)).keys.sorted() == damaged.sorted())
        #expect(harness.service.tally.withLock { $0["rendered"] } == 1)
        // And the cache holds the one thumbnail asked for and the failure records, nothing else
        let cache = harness.service.configuration.cache
        let failures: [String] = (damaged + [empty]).map { uri in
            "fail/" + cache.failureName + "/" + DesktopThumbnailCache.md5(uri) + ".png"
        }
        let expected = ([String(thumbnail.dropFirst(cache.root.count + 1))] + failures).sorted()
        #expect(harness.cacheFiles() == expected)
    }

    @Test("100,000 URIs in one call are all answered; one more than the limit is refused with a D-Bus error")
    func manyURIs() throws {
        let harness = try ServiceHarness()
        defer { harness.stop() }
        // Given 100,000 URIs of files that do not exist
        let uris = (0..<100_000).map { "file://\(harness.folder.path)/none/\($0).jpg" }
        // When they are queued in one call, and then a call of 100,001
        let session = try harness.client(
            [ServiceHarness.queue(uris, scheduler: "background"), ServiceHarness.queue(uris + ["file:///x.jpg"])],
            timeout: 120)
        // Then every one is answered with an Error, then Finished
        #expect(session.complete)
        let errors = session.errors(session.handle(0))
        #expect(errors.count == 100_000 && Set(errors.values) == [8])
        #expect(session.replies[1].error == "org.freedesktop.DBus.Error.LimitsExceeded", "\(session.replies[1])")
        // And nothing was written, and the service still answers
        #expect(harness.cacheFiles().isEmpty)
        let flavors = try harness.client([["method": "GetFlavors"]])
        #expect(flavors.replies[0].values.count == 1)
    }

    @Test("a foreground request queued behind a long background one is answered first, by the foreground lane")
    func foregroundOvertakes() throws {
        let harness = try ServiceHarness { $0.foregroundDecoder = ImageDecoder() }
        defer { harness.stop() }
        // Given 150 photos queued in the background, then one more in the foreground
        let background = try Self.photos(150, in: harness.folder.path).map(FileURI.of(path:))
        let foreground = try Self.photos(1, in: harness.folder.path, prefix: "front").map(FileURI.of(path:))
        let session = try harness.client([
            ServiceHarness.queue(background, scheduler: "background"), ServiceHarness.queue(foreground),
        ])
        // Then the foreground photo is ready before most of the background ones
        #expect(session.complete)
        let (back, front) = (session.handle(0), session.handle(1))
        let frontReady = try #require(session.signals(of: front).first { $0.name == "Ready" })
        let backBefore = session.signals(of: back).filter { $0.name == "Ready" && $0.time < frontReady.time }
            .flatMap(\.uris).count
        #expect(backBefore < 50, "\(backBefore) background thumbnails before the foreground one")
        #expect(Set(session.ready(back)) == Set(background))
    }

    @Test("Dequeue ends a request at once and its files are not made; a newer request takes over an older one's")
    func dequeueAndReplace() throws {
        let harness = try ServiceHarness()
        defer { harness.stop() }
        let photos = try Self.photos(150, in: harness.folder.path).map(FileURI.of(path:))
        // When 150 photos are queued and the request dequeued at once
        let session = try harness.client([
            ServiceHarness.queue(photos, scheduler: "background"),
            ["method": "Dequeue", "signature": "u", "args": [["handle_of": 0]]],
        ])
        // Then it finished, with fewer than all of them made, and nothing more is made afterwards
        #expect(session.complete)
        usleep(300_000)
        let made = harness.service.tally.withLock { $0["rendered"] ?? 0 }
        #expect(made < 150)
        usleep(300_000)
        #expect(harness.service.tally.withLock { $0["rendered"] ?? 0 } == made)
        // When the photos are queued in the background and then again in the foreground, replacing the first call
        let replaced = try harness.client([
            ServiceHarness.queue(photos, scheduler: "background"),
            ServiceHarness.queue(photos, scheduler: "foreground", replacing: ["handle_of": 0]),
        ])
        // Then the first request finishes, the second hears of every photo, and each photo was made once over both
        // sessions (those made before the second request came are found valid, not made again)
        #expect(replaced.complete)
        #expect(Set(replaced.ready(replaced.handle(1))) == Set(photos))
        #expect(harness.service.tally.withLock { $0["rendered"] ?? 0 } == 150)
    }

    @Test("a second service on the same bus is refused: the names are taken")
    func nameTaken() throws {
        let harness = try ServiceHarness()
        defer { harness.stop() }
        var configuration = harness.service.configuration
        configuration.idleTimeout = 0
        let second = try ThumbnailService(configuration: configuration)
        let error = #expect(throws: ThumbnailServiceError.self) { try second.run() }
        #expect(error?.code == .nameTaken)
    }

    @Test("with an idle timeout the service gives its names back and ends")
    func idleEnds() throws {
        let harness = try ServiceHarness { $0.idleTimeout = 0.5 }
        defer { harness.stop() }
        #expect(harness.hasEnded(within: 10))
        let owners = try harness.bus.gdbus([
            "call", "--dest", "org.freedesktop.DBus", "--object-path", "/org/freedesktop/DBus", "--method",
            "org.freedesktop.DBus.NameHasOwner", ThumbnailerProtocol.thumbnailerName,
        ])
        #expect(owners.contains("false"), "\(owners)")
    }
}
