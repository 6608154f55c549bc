import DarkroomSupport
import Foundation

/// Runs a reference program (a published tool or library: Pillow, djxl, rsvg-convert, rawpy) for tests that compare
/// against an independent implementation. Throws ``TestSupportError`` with the program's message when it is missing
/// or fails (`make test` installs them), so no comparison passes without its reference.
package enum ReferenceTool {
    /// Runs `executable arguments...` (found on `PATH`) and returns its standard output.
    package static func run(_ executable: String, _ arguments: [String]) throws -> Data {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [executable] + arguments
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        // Standard error is drained on its own thread so a chatty tool cannot block on a full pipe.
        let errorData = Locked(Data())
        let drained = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            let data = errors.fileHandleForReading.readDataToEndOfFile()
            errorData.withLock { $0 = data }
            drained.signal()
        }
        let result = output.fileHandleForReading.readDataToEndOfFile()
        drained.wait()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            let message = String(decoding: errorData.withLock { $0 }, as: UTF8.self)
            throw TestSupportError(
                "\(executable) failed with status \(process.terminationStatus) (make test installs it): \(message)")
        }
        return result
    }

    /// Runs `executable arguments…` as ``run(_:_:)`` does, but with no descriptor but standard input, output and
    /// error inherited: the test process's sockets (other suites' loopback servers and clients, running at the
    /// same time) must not stay open in a child that lives for seconds, or their peers never see them close.
    /// Foundation's `Process` passes every descriptor not marked close-on-exec; a short Python launcher closes
    /// them before it execs.
    package static func runDetached(_ executable: String, _ arguments: [String]) throws -> Data {
        try run(
            "python3",
            ["-c", "import os, sys; os.closerange(3, 65536); os.execvp(sys.argv[1], sys.argv[1:])", executable]
                + arguments)
    }
}

/// Runs a Python snippet that computes a reference result with a published library (Pillow, thumbhash), for tests
/// that compare against an independent implementation. Throws ``TestSupportError`` with Python's message when the
/// interpreter or the library is missing (`make test` installs them), so no comparison passes without its reference.
package enum PythonReference {
    /// Runs `python3 -c script arguments...` and returns its standard output.
    package static func run(_ script: String, _ arguments: [String] = []) throws -> Data {
        try ReferenceTool.run("python3", ["-c", script] + arguments)
    }

    /// A new temporary folder (named after `name`) filled by one of the project's scripts, run once per call with
    /// each of `runs`' argument lists, the folder's path last: for sample sets a suite makes once and keeps in a
    /// `static let`. A failure is kept as the result, so every test that needs the samples fails with its message.
    package static func folder(_ name: String, madeBy script: String, runs: [[String]])
        -> Result<String, TestSupportError>
    {
        do {
            let directory = try TemporaryDirectory.make(name)
            for arguments in runs { _ = try Self.script(script, arguments + [directory]) }
            return .success(directory)
        } catch let error as TestSupportError {
            return .failure(error)
        } catch {
            return .failure(TestSupportError("\(script) failed: \(error)"))
        }
    }

    /// Runs one of the project's scripts (a path relative to the package root) with `python3`.
    package static func script(_ relativePath: String, _ arguments: [String]) throws -> Data {
        try ReferenceTool.run(
            "python3", [SamplePhotos.packageRoot.appendingPathComponent(relativePath).path] + arguments)
    }
}
