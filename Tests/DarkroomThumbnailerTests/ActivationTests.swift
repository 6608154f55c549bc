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
