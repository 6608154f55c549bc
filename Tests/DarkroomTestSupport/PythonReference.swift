import Foundation

/// Runs a Python snippet that computes a reference result with a published library (Pillow, thumbhash), for tests
/// that compare against an independent implementation. Throws ``TestSupportError`` with Python's message when the
/// interpreter or the library is missing (`make test` installs them), so no comparison passes without its reference.
package enum PythonReference {
    /// Runs `python3 -c script arguments...` and returns its standard output.
    package static func run(_ script: String, _ arguments: [String] = []) throws -> Data {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", script] + arguments
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let result = output.fileHandleForReading.readDataToEndOfFile()
        let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw TestSupportError("the Python reference failed (scripts/install-pydeps.sh installs it): \(message)")
        }
        return result
    }
}
