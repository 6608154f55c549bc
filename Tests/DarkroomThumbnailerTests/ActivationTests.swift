import DarkroomSupport
import DarkroomTestSupport
import Foundation
import Testing

@testable import DarkroomDesktop
@testable import DarkroomThumbnailer

/// `darkroom thumbnaild` as a desktop runs it: installed with `--install` into the user's folders, started by the
/// bus on the first call (the real executable, decoding in its confined workers), ended after its idle time and
/// started again by the next call; `--uninstall` gives the names back.
@Suite("Thumbnail service activation", .serialized)
struct ActivationTests {
    /// Runs `darkroom ARGUMENTS` with the user's folders under `home`.
    static func darkroom(_ arguments: [String], home: TemporaryDirectory) throws -> String {
        let output = try ReferenceTool.runDetached(
            "env",
            [
                "XDG_DATA_HOME=" + home.file("data"), "XDG_CONFIG_HOME=" + home.file("config"),
                try SamplePhotos.darkroomBinary(),
            ] + arguments)
        return String(decoding: output, as: UTF8.self)
    }

    /// The process owning the thumbnailer's name, nil when nobody does.
    static func owner(on bus: PrivateBus) -> Int32? {
        guard
            let reply = try? bus.gdbus([
                "call", "--dest", "org.freedesktop.DBus", "--object-path", "/org/freedesktop/DBus", "--method",
                "org.freedesktop.DBus.GetConnectionUnixProcessID", ThumbnailerProtocol.thumbnailerName,
            ])
        else { return nil }
        return reply.split(whereSeparator: { !$0.isNumber }).last.flatMap { Int32($0) }
    }

    @Test("installed, the service starts on the first call, thumbnails in workers, ends when idle and starts again")
    func activation() throws {
        let home = try TemporaryDirectory("activation")
        defer { home.remove() }
        // Given the service installed into the user's folders, with a 1 s idle time
        let installed = try Self.darkroom(
            ["thumbnaild", "--install", "--idle-timeout", "1", "--cache-dir", home.file("thumbnails")], home: home)
        let files = ServiceFiles(
            servicesFolder: home.file("data/dbus-1/services"), unitFolder: home.file("config/systemd/user"))
        for path in files.paths { #expect(installed.contains(path) && FileManager.default.fileExists(atPath: path)) }
        let service = try String(contentsOfFile: files.paths[0], encoding: .utf8)
        let binary = try SamplePhotos.darkroomBinary()
        let command =
            URL(fileURLWithPath: binary).resolvingSymlinksInPath().path
            + " thumbnaild --cache-dir \(FileURI.canonicalize(home.file("thumbnails"))) --idle-timeout 1.0"
        #expect(service.contains("Name=org.freedesktop.thumbnails.Thumbnailer1\nExec=\(command)\n"), "\(service)")
        let unit = try String(contentsOfFile: files.paths[2], encoding: .utf8)
        #expect(unit.contains("Type=dbus\nBusName=org.freedesktop.thumbnails.Thumbnailer1\nExecStart=\(command)\n"))
        // And a session bus that activates from the user's service folder
        let bus = try PrivateBus(services: files.servicesFolder)
        defer { bus.stop() }
        #expect(Self.owner(on: bus) == nil)

        // When a client queues a photo
        let photo = SamplePhotos.path("jpeg/kite-2560x1600.jpg")
        let spec = home.file("spec.json")
        try JSONSerialization.data(withJSONObject: [
            "calls": [ServiceHarness.queue([FileURI.of(path: photo)], flavor: "large")], "timeout": 60,
        ]).write(to: URL(fileURLWithPath: spec))
        let session = String(
            decoding: try PythonReference.script("scripts/thumbnail-client.py", [bus.address, spec]), as: UTF8.self)
        // Then the bus started the service, which made the thumbnail GLib finds valid
        #expect(session.contains("\"signal\": \"Ready\"") && session.contains("\"complete\": true"), "\(session)")
        let glib = try GIOInfo.attributes(photo, cacheHome: home.path)
        #expect(glib["thumbnail::is-valid"] == "TRUE", "\(glib)")
        let first = try #require(Self.owner(on: bus))
        // And it decoded in its confined workers: a darkroom-worker process is its child
        let children = (try? String(contentsOfFile: "/proc/\(first)/task/\(first)/children", encoding: .utf8)) ?? ""
        let workerNames = children.split(separator: " ").compactMap {
            try? String(contentsOfFile: "/proc/\($0)/comm", encoding: .utf8)
        }
        #expect(workerNames.contains { $0.hasPrefix("darkroom-worker") }, "\(workerNames)")

        // When it has been idle for its second, Then it has given its name back and ended
        var ended = false
        for _ in 0..<200 where !ended {
            usleep(100_000)
            ended = Self.owner(on: bus) == nil && kill(first, 0) != 0
        }
        #expect(ended)
        // When the next call comes, Then the bus starts a new instance
        let flavors = try bus.gdbus([
            "call", "--dest", ThumbnailerProtocol.thumbnailerName, "--object-path",
            "/org/freedesktop/thumbnails/Thumbnailer1", "--method",
            "org.freedesktop.thumbnails.Thumbnailer1.GetFlavors",
        ])
        #expect(flavors.contains("'normal'"))
        let second = Self.owner(on: bus)
        #expect(second != nil && second != first)

        // When it is uninstalled, Then the files are gone
        _ = try Self.darkroom(["thumbnaild", "--uninstall"], home: home)
        for path in files.paths { #expect(!FileManager.default.fileExists(atPath: path), "\(path)") }
    }
}

/// A file the service's user cannot read. Root reads every file, so as root the service runs without the
/// capabilities that let it (setpriv drops `CAP_DAC_OVERRIDE` and `CAP_DAC_READ_SEARCH` from its bounding set): the
/// permission check a desktop user's service meets on another user's files.
@Suite("Thumbnail service and unreadable files", .serialized)
struct UnreadableFileTests {
    @Test("a file the service cannot read gets Error 8, and neither a thumbnail nor a failure record")
    func unreadable() throws {
        let folder = try TemporaryDirectory("unreadable")
        defer { folder.remove() }
        // Given a photo the service's user cannot read beside one it can, and a cache it can write
        let photos = try ThumbnailServiceTests.photos(2, in: folder.path)
        chmod(photos[0], 0o000)
        chmod(photos[1], 0o644)
        let cache = folder.file("thumbnails")
        let bus = try PrivateBus()
        defer { bus.stop() }
        var service: Int32?
        var harness: ServiceHarness?
        if geteuid() == 0 {
            service = try PrivateBus.startDetached([
                "setpriv", "--bounding-set=-dac_override,-dac_read_search", try SamplePhotos.darkroomBinary(),
                "thumbnaild", "--address", bus.address, "--cache-dir", cache, "--idle-timeout", "0", "--in-process",
            ])
            var owned = false
            for _ in 0..<200 where !owned {
                usleep(50_000)
                owned = ActivationTests.owner(on: bus) != nil
            }
            #expect(owned, "the service did not start without its capabilities")
        } else {
            harness = try ServiceHarness { $0.cache = DesktopThumbnailCache(root: cache) }
        }
        defer {
            if let service { kill(service, SIGKILL) }
            harness?.stop()
        }
        // When both are queued
        let address = harness?.bus.address ?? bus.address
        let spec = folder.file("spec.json")
        let uris = photos.map(FileURI.of(path:))
        try JSONSerialization.data(withJSONObject: ["calls": [ServiceHarness.queue(uris)], "timeout": 60]).write(
            to: URL(fileURLWithPath: spec))
        let output = try PythonReference.script("scripts/thumbnail-client.py", [address, spec])
        let json = try JSONSerialization.jsonObject(with: output) as! [String: Any]
        let signals = json["signals"] as! [[String: Any]]
        let errors = signals.filter { $0["signal"] as? String == "Error" }
        let ready = signals.filter { $0["signal"] as? String == "Ready" }.flatMap { $0["uris"] as! [String] }
        // Then the unreadable one is an Error with code 8 and the other is ready
        #expect(json["complete"] as? Bool == true)
        #expect(errors.count == 1 && errors.first?["uris"] as? [String] == [uris[0]], "\(errors)")
        #expect((errors.first?["code"] as? NSNumber)?.intValue == 8, "\(errors)")
        #expect(ready == [uris[1]])
        // And the cache holds only the readable one's thumbnail: no failure record (the file may become readable)
        let written = FileManager.default.enumerator(atPath: cache)?.allObjects as? [String] ?? []
        let files = written.filter { $0.hasSuffix(".png") }
        #expect(files == ["normal/" + DesktopThumbnailCache.md5(uris[1]) + ".png"], "\(files)")
    }
}
