import ArgumentParser
import DarkroomDesktop
import DarkroomSupport
import DarkroomThumbnailer
import Foundation

/// `darkroom thumbnaild`: the desktop's thumbnail service on the session bus (org.freedesktop.thumbnails.Thumbnailer1
/// and Cache1), started by the bus on its first call once `--install` has written the service files.
struct ThumbnaildCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "thumbnaild",
        abstract: "Serve the desktop's thumbnail requests over D-Bus (in place of tumblerd).",
        discussion: """
            File managers that ask org.freedesktop.thumbnails.Thumbnailer1 (Thunar, Nemo, Caja, PCManFM…) get their \
            thumbnails from Darkroom once `darkroom thumbnaild --install` has written the D-Bus service files and \
            systemd unit into your own folders; `--uninstall` removes them and the bus starts tumblerd again.
            """)

    @Option(help: "Exit after this many seconds with nothing to do (the bus starts it again); 0: never.")
    var idleTimeout = ThumbnailService.Configuration.defaultIdleTimeout
    @Option(help: "The cache folder (default: $XDG_CACHE_HOME/thumbnails or ~/.cache/thumbnails).")
    var cacheDir: String?
    @Option(help: "Threads making thumbnails (default: active cores).") var jobs: Int?
    @Option(help: "The bus's D-Bus address (default: the session bus).") var address: String?
    @Option(help: "URIs one Queue call may carry.")
    var maxUrisPerCall = ThumbnailService.Configuration.defaultMaxURIsPerCall
    @Flag(help: "Write the D-Bus service files and the systemd user unit for this executable, then exit.")
    var install = false
    @Flag(help: "Remove those files (the bus then starts tumblerd, if installed), then exit.") var uninstall = false
    @OptionGroup var decoding: DecodingOptions

    func validate() throws {
        if let jobs, jobs < 1 { throw ValidationError("--jobs must be at least 1") }
        guard idleTimeout >= 0 else { throw ValidationError("--idle-timeout must be 0 or more") }
        guard maxUrisPerCall >= 1 else { throw ValidationError("--max-uris-per-call must be at least 1") }
        guard !(install && uninstall) else { throw ValidationError("--install and --uninstall exclude each other") }
    }

    /// The command the bus and systemd start: this executable (its real path, whatever `PATH` or link it was run
    /// through) with the options given beside `--install` that differ from the defaults.
    func serviceCommand() -> String {
        let executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        var arguments = [executable.path, "thumbnaild"]
        if let cacheDir { arguments += ["--cache-dir", URL(fileURLWithPath: cacheDir).standardizedFileURL.path] }
        if idleTimeout != ThumbnailService.Configuration.defaultIdleTimeout {
            arguments += ["--idle-timeout", String(idleTimeout)]
        }
        if let jobs { arguments += ["--jobs", String(jobs)] }
        if maxUrisPerCall != ThumbnailService.Configuration.defaultMaxURIsPerCall {
            arguments += ["--max-uris-per-call", String(maxUrisPerCall)]
        }
        if decoding.inProcess { arguments.append("--in-process") }
        // Both the bus's Exec= and systemd's ExecStart= take double quotes around an argument with spaces
        return arguments.map { $0.contains(where: { $0 == " " || $0 == "\"" }) ? "\"\($0)\"" : $0 }
            .joined(separator: " ")
    }

    func run() throws {
        let files = ServiceFiles()
        if uninstall {
            for path in files.uninstall() { print("removed \(path)") }
            return
        }
        if install {
            for path in try files.install(command: serviceCommand()) { print("wrote \(path)") }
            return
        }
        let threads = jobs ?? ProcessStats.activeCores
        let cache = cacheDir.map { DesktopThumbnailCache(root: $0) } ?? DesktopThumbnailCache()
        // Background decodes in workers at nice 10, started when first needed (an idle service holds none); the
        // foreground lane's in one worker of its own at normal priority, started now so the first folder on screen
        // does not wait for it
        var configuration = ThumbnailService.Configuration(
            cache: cache, decoder: try decoding.decoder(workers: threads, niceness: 10, prestart: false),
            threads: threads)
        configuration.foregroundDecoder = try decoding.decoder(workers: 1)
        configuration.idleTimeout = idleTimeout
        configuration.busAddress = address
        configuration.maxURIsPerCall = maxUrisPerCall
        let service = try ThumbnailService(configuration: configuration)
        try service.run { name in
            FileHandle.standardError.write(
                Data("darkroom thumbnaild: serving as \(name), cache \(cache.root)\n".utf8))
        }
    }
}
