import CDarkroomSandbox
import DarkroomImage
import DarkroomSupport
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A file the parent opened (or the bytes from `start` of it), read by ranges with `pread` (the one way a confined
/// worker reads a file): what a video decoder reads a local video, or a clip inside a photo, through in a worker, a
/// part at a time.
struct DescriptorRanges: ByteRangeReading {
    let descriptor: Int32
    /// Where the bytes read start in the file (a clip inside a photo); 0 for a file read whole.
    var start: Int64 = 0
    let size: Int64
    var name: String { "the input file" }

    func read(at offset: Int64, count: Int) throws(DarkroomImageError) -> [UInt8] {
        let wanted = max(0, min(Int64(count), size - offset))
        guard wanted > 0 else { return [] }
        var failed = false
        let bytes = [UInt8](unsafeUninitializedCapacity: Int(wanted)) { buffer, initialized in
            let read = POSIXIO.read(descriptor, into: UnsafeMutableRawBufferPointer(buffer), at: Int(start + offset))
            failed = read == nil
            initialized = read ?? 0
        }
        guard !failed else { throw DarkroomImageError(.io, "the input file could not be read at \(offset)") }
        return bytes
    }
}

/// A file the parent reads by ranges (a remote video), seen from a confined worker, which can reach no network: each
/// read asks the parent for the range over the channel (`WorkerReply/rangeWanted`), the parent reads it through its
/// own reader (HTTP or S3 ranges, with their limits) and writes it into the input memory file, and the worker copies
/// it out. At most ``WorkerReply/maxRangeBytes`` a read; a read the parent could not make is its typed error.
struct ParentRanges: ByteRangeReading {
    /// The input memory file the parent writes each range into.
    let memory: Int32
    let size: Int64
    var name: String { "the remote file" }

    func read(at offset: Int64, count: Int) throws(DarkroomImageError) -> [UInt8] {
        let wanted = max(0, min(Int64(min(count, WorkerReply.maxRangeBytes)), size - offset))
        guard offset >= 0, wanted > 0 else { return [] }
        var ask = WorkerReply()
        ask.rangeWanted = .init(offset: offset, count: Int(wanted))
        guard let message = try? JSONEncoder().encode(ask),
            [UInt8](message).withUnsafeBytes({ dr_channel_send(3, $0.baseAddress, $0.count, nil, 0) }) == 0
        else { throw DarkroomImageError(.io, "the range at \(offset) could not be asked of the parent") }
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        var fds: [Int32] = [-1]
        var fdCount: Int32 = 0
        let length = dr_channel_receive(3, &buffer, buffer.count, &fds, 1, &fdCount, -1)
        for fd in fds.prefix(Int(fdCount)) { close(fd) }
        guard length > 0,
            let answer = try? JSONDecoder().decode(WorkerRequest.self, from: Data(buffer[..<length])),
            answer.step == .rangeBytes
        else { throw DarkroomImageError(.io, "the parent sent no range for \(offset)") }
        if let failure = answer.rangeFailure {
            throw DarkroomImageError(DarkroomImageError.Code(rawValue: failure.code) ?? .io, failure.message)
        }
        guard answer.inputLength >= 0, Int64(answer.inputLength) <= wanted else {
            throw DarkroomImageError(.io, "the parent sent a range of another length")
        }
        var failed = false
        let bytes = [UInt8](unsafeUninitializedCapacity: answer.inputLength) { buffer, initialized in
            let read = POSIXIO.read(memory, into: UnsafeMutableRawBufferPointer(buffer), at: 0)
            failed = read != answer.inputLength
            initialized = read ?? 0
        }
        guard !failed else { throw DarkroomImageError(.io, "the range at \(offset) could not be read") }
        return bytes
    }
}
