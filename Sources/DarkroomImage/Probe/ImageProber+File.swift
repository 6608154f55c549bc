import DarkroomSupport

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

extension ImageProber {
    /// How much of a file the first attempt reads: enough for the header of nearly every real image.
    static let initialPrefixBytes = 64 << 10

    /// Probes a file, also answering how many bytes it read (tests check that a large photo is probed from
    /// a prefix).
    ///
    /// Reads ``initialPrefixBytes``; each time the parser signals ``ProbeStop/needMoreData(atLeast:)`` it reads
    /// on to a prefix at least twice as long (or as long as asked), up to the whole file. Only when the whole
    /// file has been read is running out of data reported as `.truncated`.
    static func probeFile(atPath path: String, limits: DecodeLimits)
        throws(DarkroomImageError) -> (probe: ImageProbe, bytesRead: Int)
    {
        let (fd, size) = try FileBytes.openRegularFile(path, limit: limits.maxInputBytes)
        defer { _ = close(fd) }
        var fileSize = size
        guard fileSize > 0 else { throw DarkroomImageError(.empty, "the file '\(path)' is empty") }

        var capacity = min(fileSize, initialPrefixBytes)
        var buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: capacity, alignment: 16)
        defer { buffer.deallocate() }
        var filled = 0
        while true {
            filled = try readFully(fd, into: buffer, from: filled, path: path)
            if filled < capacity { fileSize = filled }  // the file shrank while we read it
            guard filled > 0 else { throw DarkroomImageError(.empty, "the file '\(path)' is empty") }
            let isComplete = filled >= fileSize
            // A camera RAW's structures may lie anywhere in it: libraw reads them from the file itself
            if !isComplete, format(of: UnsafeRawBufferPointer(rebasing: buffer[0..<filled])) == .raw {
                return (RAWDecoder.probe(try RAWDecoder.Handle(path: path)), filled)
            }
            do throws(ProbeStop) {
                let probe = try parse(
                    UnsafeRawBufferPointer(rebasing: buffer[0..<filled]),
                    isComplete: isComplete, limits: limits)
                return (probe, filled)
            } catch {
                switch error {
                case .failed(let failure):
                    throw failure
                case .needMoreData(let atLeast):
                    guard !isComplete else { throw truncatedError(count: filled) }
                    capacity = min(fileSize, max(capacity * 2, atLeast))
                    let larger = UnsafeMutableRawBufferPointer.allocate(byteCount: capacity, alignment: 16)
                    larger.copyMemory(from: UnsafeRawBufferPointer(rebasing: buffer[0..<filled]))
                    buffer.deallocate()
                    buffer = larger
                }
            }
        }
    }

    /// Fills `buffer` from file offset `start` with `pread`, retrying on EINTR; returns how many bytes of
    /// `buffer` are filled, fewer than its size only at end of file.
    private static func readFully(
        _ fd: Int32, into buffer: UnsafeMutableRawBufferPointer, from start: Int,
        path: String
    ) throws(DarkroomImageError) -> Int {
        guard let read = POSIXIO.read(fd, into: UnsafeMutableRawBufferPointer(rebasing: buffer[start...]), at: start)
        else {
            throw DarkroomImageError.ioError("cannot read \(path)")
        }
        return start + read
    }

}
