/// A file read by byte ranges where it lies, never whole: a remote video (HTTP or S3 ranges) that its decoder reads
/// a part at a time, as it would a local file.
///
/// Reads block the calling thread (a pipeline's decode thread) until the bytes arrive; an implementation bounds
/// each read's wait and the bytes it reads in all, and throws a typed error past them. Called from one thread at a
/// time per decode.
public protocol ByteRangeReading: Sendable {
    /// The file's length in bytes.
    var size: Int64 { get }
    /// The file's name for messages (its URL, say).
    var name: String { get }
    /// Up to `count` bytes at `offset` (fewer at the end of the file; none past it). Blocking.
    /// - Throws: `DarkroomImageError` when the bytes cannot be read (`.io`, `.limitExceeded`, `.cancelled`).
    func read(at offset: Int64, count: Int) throws(DarkroomImageError) -> [UInt8]
}

extension ByteRangeReading {
    /// The whole file, read range by range from `offset` on after the `head` already read: for a reader that needs
    /// the bytes (a decoder of in-memory data, a caller that asked for the data). Blocking.
    /// - Throws: `.limitExceeded` when the file is longer than `limit` bytes (before reading), `.truncated` when the
    ///   ranges end early, and what the reads throw.
    public func readAll(limit: Int, head: [UInt8] = []) throws(DarkroomImageError) -> [UInt8] {
        guard size <= Int64(limit) else {
            throw DarkroomImageError(.limitExceeded, "\(name) is \(size) bytes, over the input limit (\(limit))")
        }
        var bytes = head
        bytes.reserveCapacity(Int(size))
        while Int64(bytes.count) < size {
            let part = try read(at: Int64(bytes.count), count: Int(min(size - Int64(bytes.count), 1 << 20)))
            guard !part.isEmpty else { throw DarkroomImageError(.truncated, "\(name) ended at \(bytes.count) bytes") }
            bytes += part
        }
        return bytes
    }
}
