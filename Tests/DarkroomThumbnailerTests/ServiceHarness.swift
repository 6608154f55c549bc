import DarkroomDesktop
import DarkroomImage
import DarkroomSupport
import DarkroomTestSupport
import Foundation

@testable import DarkroomThumbnailer

/// A thumbnail service on a private bus, its cache in a temporary folder (`FOLDER/thumbnails`, so that GLib finds it
/// with `XDG_CACHE_HOME=FOLDER`), run on a thread of its own; and the specification's clients: the jeepney script
/// (scripts/thumbnail-client.py), `gdbus` and `dbus-send`.
final class ServiceHarness: Sendable {
    let bus: PrivateBus
    let folder: TemporaryDirectory
    let service: ThumbnailService
    private let ended = DispatchSemaphore(value: 0)
    private let failure = Locked<ThumbnailServiceError?>(nil)

    /// Starts the service (with `configure` applied to its configuration) and waits until it owns its names.
    init(configure: (inout ThumbnailService.Configuration) -> Void = { _ in }) throws {
        bus = try PrivateBus()
        folder = try TemporaryDirectory("thumbnaild")
        var configuration = ThumbnailService.Configuration(
            cache: DesktopThumbnailCache(root: folder.file("thumbnails")), decoder: ImageDecoder(), threads: 2)
        configuration.busAddress = bus.address
        configuration.idleTimeout = 0
        configure(&configuration)
        let service = try ThumbnailService(configuration: configuration)
        self.service = service
        let ready = DispatchSemaphore(value: 0)
        let (ended, failure) = (ended, failure)
        Thread.detachNewThread {
            do throws(ThumbnailServiceError) {
                try service.run { _ in ready.signal() }
            } catch {
                failure.withLock { $0 = error }
                ready.signal()
            }
            ended.signal()
        }
        ready.wait()
        if let error = failure.withLock({ $0 }) { throw error }
    }

    /// Stops the service, waits for it, then the bus.
    func stop() {
        service.stop()
        ended.wait()
        bus.stop()
        folder.remove()
    }

    /// Whether the service's thread has ended (idle, or the bus gone), waiting up to `seconds`.
    func hasEnded(within seconds: Double) -> Bool {
        guard ended.wait(timeout: .now() + seconds) == .success else { return false }
        ended.signal()  // for stop()
        return true
    }

    // MARK: - Clients

    /// What the jeepney client saw.
    struct Session: @unchecked Sendable {
        // @unchecked Sendable: immutable once made; the replies' `[Any]` hold only JSONSerialization's values
        // (numbers, strings, arrays of them), which nothing mutates.
        struct Reply {
            let values: [Any]
            let error: String?
            let message: String
        }
        struct Signal {
            let name: String
            let handle: UInt32
            let uris: [String]
            let code: Int?
            let message: String?
            let time: Double
        }
        let replies: [Reply]
        let signals: [Signal]
        let complete: Bool

        /// The handle call `i` returned.
        func handle(_ i: Int) -> UInt32 { (replies[i].values.first as? NSNumber)?.uint32Value ?? 0 }

        func signals(of handle: UInt32) -> [Signal] { signals.filter { $0.handle == handle } }

        /// The URIs of `handle`'s Ready signals, in order.
        func ready(_ handle: UInt32) -> [String] {
            signals(of: handle).filter { $0.name == "Ready" }.flatMap(\.uris)
        }

        /// `handle`'s Error signals, URI → code.
        func errors(_ handle: UInt32) -> [String: Int] {
            var codes: [String: Int] = [:]
            for signal in signals(of: handle) where signal.name == "Error" {
                for uri in signal.uris { codes[uri] = signal.code }
            }
            return codes
        }
    }

    /// A `Queue` call for the client.
    static func queue(
        _ uris: [String], mimeTypes: [String]? = nil, flavor: String = "normal", scheduler: String = "foreground",
        replacing old: Any = 0
    ) -> [String: Any] {
        [
            "method": "Queue", "signature": "asasssu",
            "args": [uris, mimeTypes ?? uris.map { _ in "" }, flavor, scheduler, old],
        ]
    }

    /// Makes `calls` with the jeepney client and collects the signals until every queued handle has finished.
    func client(_ calls: [[String: Any]], timeout: Double = 60) throws -> Session {
        let spec = folder.file("spec-\(UInt32.random(in: 0...UInt32.max)).json")
        try JSONSerialization.data(withJSONObject: ["calls": calls, "timeout": timeout]).write(
            to: URL(fileURLWithPath: spec))
        let output = try PythonReference.script("scripts/thumbnail-client.py", [bus.address, spec])
        let json = try JSONSerialization.jsonObject(with: output) as! [String: Any]
        let replies = (json["replies"] as! [[String: Any]]).map {
            Session.Reply(
                values: $0["reply"] as? [Any] ?? [], error: $0["error"] as? String,
                message: $0["message"] as? String ?? "")
        }
        let signals = (json["signals"] as! [[String: Any]]).map {
            Session.Signal(
                name: $0["signal"] as! String, handle: ($0["handle"] as! NSNumber).uint32Value,
                uris: $0["uris"] as? [String] ?? [], code: ($0["code"] as? NSNumber)?.intValue,
                message: $0["message"] as? String, time: ($0["t"] as! NSNumber).doubleValue)
        }
        return Session(replies: replies, signals: signals, complete: json["complete"] as! Bool)
    }

    /// GLib's view of `file`'s thumbnail in this cache: `thumbnail::path` and `thumbnail::is-valid` (GLib 2.74
    /// reports one thumbnail a file, the largest of `large` and `normal`).
    func glib(_ file: String) throws -> (path: String?, valid: Bool) {
        let attributes = try GIOInfo.attributes(file, cacheHome: folder.path)
        return (attributes["thumbnail::path"], attributes["thumbnail::is-valid"] == "TRUE")
    }

    /// Every file in the cache folder, relative to it.
    func cacheFiles() -> [String] {
        let root = folder.file("thumbnails")
        let enumerator = FileManager.default.enumerator(atPath: root)
        var files: [String] = []
        while let next = enumerator?.nextObject() as? String {
            var isFolder: ObjCBool = false
            if FileManager.default.fileExists(atPath: root + "/" + next, isDirectory: &isFolder), !isFolder.boolValue {
                files.append(next)
            }
        }
        return files.sorted()
    }
}
