import DarkroomSupport
import Foundation

/// A D-Bus session bus of the test's own: `dbus-daemon` on a socket in a temporary folder, with a policy that lets
/// anything own any name, and (optionally) a folder of D-Bus service files it activates from. The daemon gets no
/// descriptor of the test process but its standard ones (its life spans other suites' sockets), and the variables
/// in `environment` (which the services it starts inherit), with no signal blocked (the test process's threads block
/// some, and a child inherits the mask). Removed with its folder by ``stop()``.
///
/// The daemon forks away from the process the test starts (`--fork`), which exits once the bus listens: Foundation's
/// `Process` watches a child through a descriptor the launcher closes, and would wait on a long-lived child from its
/// one shared monitoring thread, stalling every other `Process` of the test run.
package final class PrivateBus: Sendable {
    /// The bus's address, for `--address` and `DBUS_SESSION_BUS_ADDRESS`.
    package let address: String
    /// The folder holding the socket and the configuration.
    package let folder: TemporaryDirectory
    /// The daemon's process id.
    package let pid: Int32

    /// Starts the daemon; `services` is the folder of service files it activates from (none when nil).
    /// - Throws: when `dbus-daemon` is missing (make test installs it) or does not print its address.
    package init(services: String? = nil, environment: [String: String] = [:]) throws {
        folder = try TemporaryDirectory("bus")
        let configuration = """
            <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
             "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
            <busconfig>
              <type>session</type>
              <listen>unix:path=\(folder.path)/socket</listen>
              <auth>EXTERNAL</auth>
              \(services.map { "<servicedir>\($0)</servicedir>" } ?? "")
              <policy context="default">
                <allow send_destination="*" eavesdrop="true"/>
                <allow eavesdrop="true"/>
                <allow own="*"/>
              </policy>
            </busconfig>
            """
        try TemporaryDirectory.write(Array(configuration.utf8), to: folder.file("bus.conf"))
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments =
            environment.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" } + [
                "python3", "-c",
                "import os, signal, sys; signal.pthread_sigmask(signal.SIG_SETMASK, set()); os.closerange(3, 65536); "
                    + "os.execvp(sys.argv[1], sys.argv[1:])",
                "dbus-daemon", "--fork", "--print-address=1", "--print-pid=1",
                "--config-file=" + folder.file("bus.conf"),
            ]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        // The address, then the process id, printed once the daemon listens
        var printed = Data()
        while printed.split(separator: UInt8(ascii: "\n")).count < 2 {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            printed += chunk
        }
        process.waitUntilExit()
        let lines = String(decoding: printed, as: UTF8.self).split(separator: "\n").map(String.init)
        guard lines.count >= 2, lines[0].hasPrefix("unix:"), let pid = Int32(lines[1]) else {
            throw TestSupportError("dbus-daemon did not start (make test installs it): \(lines)")
        }
        address = lines[0]
        self.pid = pid
    }

    /// Stops the daemon (the services it started end as their connection does) and removes its folder.
    package func stop() {
        kill(pid, SIGKILL)
        folder.remove()
    }

    /// Runs `gdbus ARGUMENTS --address ADDRESS` (gdbus is GLib's own client) and returns its output.
    package func gdbus(_ arguments: [String]) throws -> String {
        let command = arguments.first ?? "call"
        let output = try ReferenceTool.runDetached(
            "gdbus", [command, "--address", address] + arguments.dropFirst())
        return String(decoding: output, as: UTF8.self)
    }

    /// Starts `arguments` (a program found on `PATH` and its arguments) as a process of its own session, detached
    /// from the test process (no descriptor but the standard ones, no signal blocked, its parent gone once it
    /// runs: Foundation's `Process` must not watch a long-lived child). Returns its process id, for `kill`.
    package static func startDetached(_ arguments: [String]) throws -> Int32 {
        let launcher = """
            import os, signal, sys
            pid = os.fork()
            if pid == 0:
                os.setsid()
                signal.pthread_sigmask(signal.SIG_SETMASK, set())
                devnull = os.open(os.devnull, os.O_RDWR)
                os.dup2(devnull, 0); os.dup2(devnull, 1); os.dup2(devnull, 2)
                os.closerange(3, 65536)
                os.execvp(sys.argv[1], sys.argv[1:])
            print(pid)
            """
        let output = try ReferenceTool.run("python3", ["-c", launcher] + arguments)
        guard let pid = Int32(String(decoding: output, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
        else { throw TestSupportError("could not start \(arguments)") }
        return pid
    }
}
