import CDarkroomSandbox
import Foundation

/// How a decode worker process is confined before it touches any input.
///
/// Applied in this order: a new user, mount and network namespace whose root is a read-only file system holding
/// nothing but the ``readablePaths`` folders, bound read-only (when ``namespaces`` is on and the kernel allows
/// unprivileged user namespaces; without them the rest still holds),
/// no new privileges, resource limits (``addressSpaceBytes``, ``cpuSeconds``, a file size limit of 0 bytes, no core
/// dumps), then a seccomp filter (libseccomp's) that allows what decoding needs — reading and writing the descriptors
/// the worker was handed, memory, threads, time — and refuses everything else with `EPERM`: opening files, sockets,
/// making processes — except, inside the namespaces' root, opening files for reading, since all it holds is the
/// readable folders (fonts: an SVG's text). Running a program (`execve`) or reaching into another process (`ptrace`, `process_vm_*`) ends
/// the worker instead. A confined process cannot undo any of it.
public struct Confinement: Sendable, Hashable, Codable {
    /// The most address space a worker may map, in bytes (`RLIMIT_AS`): past it allocations fail. Default 4 GiB:
    /// `DecodeLimits`' decoded-bytes budget and a codec's working memory, with room for the libraries' mappings.
    public var addressSpaceBytes: Int = 4 << 30
    /// The most CPU time a worker may use, in seconds (`RLIMIT_CPU`), after which the kernel ends it. Default 600: a
    /// worker is recycled long before; a decode that spins is stopped by its own deadline first.
    public var cpuSeconds: Int = 600
    /// Whether to enter new namespaces (an empty root, no network) where the kernel allows it. Default on.
    public var namespaces: Bool = true
    /// Folders the worker may read, bound read-only into its root at their own paths (absolute paths; a missing one
    /// is skipped): what decoders read from files — fontconfig's configuration and caches and the fonts, for text
    /// in SVGs. Only inside the namespaces; without them a worker opens nothing, and text is drawn without fonts.
    /// Default ``fontFolders``.
    public var readablePaths: [String] = Confinement.fontFolders

    /// The system's and the user's font and fontconfig folders (Debian's layout and the XDG ones).
    public static var fontFolders: [String] {
        let environment = ProcessInfo.processInfo.environment
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 }
        let data = environment["XDG_DATA_HOME"] ?? home.map { $0 + "/.local/share" }
        let cache = environment["XDG_CACHE_HOME"] ?? home.map { $0 + "/.cache" }
        let config = environment["XDG_CONFIG_HOME"] ?? home.map { $0 + "/.config" }
        return [
            "/etc/fonts", "/usr/share/fonts", "/usr/share/fontconfig", "/usr/local/share/fonts",
            "/var/cache/fontconfig",
        ]
            + [
                data.map { $0 + "/fonts" }, cache.map { $0 + "/fontconfig" }, config.map { $0 + "/fontconfig" },
                home.map { $0 + "/.fonts" },
            ].compactMap { $0 }
    }

    /// The defaults documented on each property.
    public static let `default` = Confinement()

    /// Creates a confinement; omitted values take their documented defaults.
    public init(addressSpaceBytes: Int = 4 << 30, cpuSeconds: Int = 600, namespaces: Bool = true) {
        self.addressSpaceBytes = addressSpaceBytes
        self.cpuSeconds = cpuSeconds
        self.namespaces = namespaces
    }

    /// Calls `body` with the C shim's description of this confinement (valid only during the call).
    func withLimits<R>(_ body: (inout dr_sandbox_limits) -> R) -> R {
        readablePaths.filter { $0.hasPrefix("/") && !$0.contains("\n") }.joined(separator: "\n").withCString { paths in
            var limits = dr_sandbox_limits(
                address_space_bytes: Int64(max(0, addressSpaceBytes)), cpu_seconds: Int64(max(0, cpuSeconds)),
                namespaces: namespaces ? 1 : 0, readable_paths: paths)
            return body(&limits)
        }
    }
}

/// The compiled seccomp filter (BPF), built once per process by libseccomp before any worker starts: applying it
/// is then system calls only, safe in a child between `fork` and its work.
///
/// `@unchecked Sendable`: the program is written once, in `init`, and only read afterwards (by `prctl` in children
/// and by ``instructionCount``); it is freed in `deinit`, when no one else holds the object.
final class SeccompFilter: @unchecked Sendable {
    let pointer: OpaquePointer

    /// The filter the process shares, or the error that building it gave.
    static let shared: Result<SeccompFilter, WorkerError> = Result { () throws(WorkerError) in try SeccompFilter() }

    init() throws(WorkerError) {
        var built: OpaquePointer?
        var message = [CChar](repeating: 0, count: 256)
        let status = dr_sandbox_filter_build(&built, &message, message.count)
        guard status == 0, let built else {
            let text = String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            throw WorkerError(.confinementUnavailable, "the seccomp filter could not be built: \(text)")
        }
        pointer = built
    }

    deinit { dr_sandbox_filter_free(pointer) }

    /// The number of BPF instructions.
    var instructionCount: Int { Int(dr_sandbox_filter_length(pointer)) }
}
