/// What the test decode worker's decoder (`darkroom-test-worker`) does wrong on request, named by the height of the
/// 1-pixel-wide PNG it is handed: the worker and the tests that send it share this one list.
package enum WorkerMisdeed: Int, Sendable, CaseIterable {
    /// A segmentation fault.
    case crash = 60001
    /// An endless loop.
    case spin
    /// Reading `/etc/passwd`.
    case openPasswd
    /// Opening an internet socket.
    case openSocket
    /// Running `/bin/true`.
    case runProgram
    /// Mapping 8 GiB and touching it.
    case allocate
    /// Creating `/tmp/darkroom-test-worker`.
    case createFile

    /// The input that asks for this misdeed: a PNG header 1 pixel wide and `rawValue` high (the probe reads it; the
    /// image data is never reached).
    package var input: [UInt8] {
        let height = rawValue
        let header: [UInt8] = [0, 0, 0, 1, 0, 0, UInt8(height >> 8), UInt8(height & 0xFF), 8, 0, 0, 0, 0]
        return AnimationFiles.png([("IHDR", header), ("IDAT", [0x78, 0x9C, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01])])
    }
}
