import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The crash tests' harness: a child process (the `darkroom` binary doing real work) started so that it can be
/// killed with SIGKILL at a moment the test picks, as `kill -9` or a power cut would end it.
package enum KilledProcess {
    /// Starts `binary` with `arguments`; its standard error goes nowhere, its standard output to `output` (nowhere
    /// when nil), so a child that outlives a crashed test holds no pipe of the test runner's.
    package static func start(_ binary: String, _ arguments: [String], output: Pipe? = nil) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = arguments
        if let output { process.standardOutput = output } else { process.standardOutput = FileHandle.nullDevice }
        process.standardError = FileHandle.nullDevice
        try process.run()
        return process
    }

    /// Sends SIGKILL to `process` and waits for it: true when it died of that signal, false when it had already
    /// ended by itself.
    package static func kill(_ process: Process) -> Bool {
        _ = Glibc.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        return process.terminationReason == .uncaughtSignal && process.terminationStatus == SIGKILL
    }
}
