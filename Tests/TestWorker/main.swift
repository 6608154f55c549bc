import DarkroomImage
import DarkroomTestSupport
import DarkroomWorkers

#if canImport(Glibc)
    import Glibc
#endif

// A decode worker for tests only (built with the tests, never part of a product): the library's decoders plus one
// that misbehaves on request, as an exploited or broken decoder would, from inside a confined worker. It takes a
// 1-pixel-wide PNG header whose height names the misdeed (`WorkerMisdeed`).

struct MisbehavingDecoder: ImageDecoding {
    func canDecode(_ probe: ImageProbe) -> Bool { probe.width == 1 && WorkerMisdeed(rawValue: probe.height) != nil }

    func decode(_ bytes: UnsafeRawBufferPointer, probe: ImageProbe, options: DecodeOptions) throws(DarkroomImageError)
        -> Bitmap
    {
        func refused(_ what: String, _ result: Int) -> DarkroomImageError {
            DarkroomImageError(.io, "\(what): result \(result) errno \(errno)")
        }
        switch WorkerMisdeed(rawValue: probe.height)! {
        case .crash:
            UnsafeMutablePointer<Int>(bitPattern: 8)!.pointee = 1  // a segmentation fault
        case .spin:
            while true { sched_yield() }
        case .openPasswd:
            let fd = open("/etc/passwd", O_RDONLY)
            var byte: UInt8 = 0
            let read = fd >= 0 ? Glibc.read(fd, &byte, 1) : -1
            throw refused("open /etc/passwd", fd >= 0 ? read : Int(fd))
        case .openSocket:
            throw refused("socket", Int(socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)))
        case .runProgram:
            var argv: [UnsafeMutablePointer<CChar>?] = [strdup("/bin/true"), nil]
            throw refused("execv", Int(execv("/bin/true", &argv)))
        case .allocate:
            // A mapping the optimizer cannot drop: 8 GiB, past the worker's address-space limit
            let size = 8 << 30
            let memory = mmap(nil, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
            guard let memory, memory != MAP_FAILED else { throw refused("map 8 GiB", -1) }
            memory.storeBytes(of: 1, toByteOffset: size - 1, as: UInt8.self)
            throw refused("map 8 GiB", Int(memory.load(fromByteOffset: size - 1, as: UInt8.self)))
        case .createFile:
            throw refused(
                "create /tmp/darkroom-test-worker", Int(open("/tmp/darkroom-test-worker", O_CREAT | O_WRONLY, 0o600)))
        }
        throw DarkroomImageError(.corrupt, "unreachable")
    }
}

DecodeWorker.run(decoder: ImageDecoder(customDecoders: [MisbehavingDecoder()]))
