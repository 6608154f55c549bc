import DarkroomImage
import DarkroomSupport

#if canImport(Glibc)
    import Glibc
#endif

/// The files that make a desktop start the service on its first call: a D-Bus service file for each of its two
/// names (`$XDG_DATA_HOME/dbus-1/services`, which the session bus searches before the system's folders, so these
/// take the place of tumbler's) and a systemd user unit (`$XDG_CONFIG_HOME/systemd/user`) that the bus asks systemd
/// to start where the session bus is systemd's. Removing them gives the names back to tumbler.
public struct ServiceFiles: Sendable {
    /// The unit's name.
    public static let unitName = "darkroom-thumbnaild.service"

    /// The folder D-Bus service files go in.
    public let servicesFolder: String
    /// The folder the systemd user unit goes in.
    public let unitFolder: String

    /// The user's own folders: `$XDG_DATA_HOME` (else `~/.local/share`) and `$XDG_CONFIG_HOME` (else `~/.config`).
    public init() {
        func folder(_ variable: String, _ fallback: String) -> String {
            if let value = getenv(variable).map({ String(cString: $0) }), value.hasPrefix("/") { return value }
            return (getenv("HOME").map { String(cString: $0) } ?? "/tmp") + "/" + fallback
        }
        self.init(
            servicesFolder: folder("XDG_DATA_HOME", ".local/share") + "/dbus-1/services",
            unitFolder: folder("XDG_CONFIG_HOME", ".config") + "/systemd/user")
    }

    /// Files in the given folders (tests, packagers).
    public init(servicesFolder: String, unitFolder: String) {
        self.servicesFolder = servicesFolder
        self.unitFolder = unitFolder
    }

    /// The D-Bus service file for `name`, starting `command` (an absolute path and its arguments).
    public static func busService(name: String, command: String) -> String {
        """
        [D-BUS Service]
        Name=\(name)
        Exec=\(command)
        SystemdService=\(unitName)

        """
    }

    /// The systemd user unit running `command`, ready once it owns the thumbnailer's name.
    public static func unit(command: String) -> String {
        """
        [Unit]
        Description=Darkroom thumbnail service (org.freedesktop.thumbnails.Thumbnailer1)
        Documentation=https://specifications.freedesktop.org/thumbnail-spec/

        [Service]
        Type=dbus
        BusName=\(ThumbnailerProtocol.thumbnailerName)
        ExecStart=\(command)

        """
    }

    /// The files' paths: the two service files, then the unit.
    public var paths: [String] {
        [ThumbnailerProtocol.thumbnailerName, ThumbnailerProtocol.cacheName].map {
            servicesFolder + "/" + $0 + ".service"
        } + [unitFolder + "/" + Self.unitName]
    }

    /// Writes the three files for `command`; returns their paths.
    /// - Throws: `.io` when a folder or file cannot be written.
    @discardableResult
    public func install(command: String) throws(DarkroomImageError) -> [String] {
        let paths = paths
        let texts = [
            Self.busService(name: ThumbnailerProtocol.thumbnailerName, command: command),
            Self.busService(name: ThumbnailerProtocol.cacheName, command: command), Self.unit(command: command),
        ]
        for (path, text) in zip(paths, texts) {
            try FileBytes.makeFolders(String(path[..<path.lastIndex(of: "/")!]), mode: 0o755)
            try FileBytes.writeAtomically(Array(text.utf8), to: path)
        }
        return paths
    }

    /// Removes the files; returns those that were there.
    @discardableResult
    public func uninstall() -> [String] {
        paths.filter { unlink($0) == 0 }
    }
}
