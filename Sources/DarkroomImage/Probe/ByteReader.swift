/// Why a header parser stopped without a result.
///
/// `needMoreData` is the internal "read a longer prefix and call me again" signal. It is distinct from
/// ``DarkroomImageError/Code/truncated``, which is only the final answer once the whole input has been seen.
enum ProbeStop: Error {
    /// The parser needs at least this many bytes from the start of the input to go on.
    case needMoreData(atLeast: Int)
    /// A final answer: the input is corrupt, unsupported, over a limit…
    case failed(DarkroomImageError)

    /// A `.corrupt` failure.
    static func corrupt(_ message: String) -> ProbeStop { .failed(DarkroomImageError(.corrupt, message)) }
    /// An `.unsupportedFeature` failure.
    static func unsupported(_ message: String) -> ProbeStop {
        .failed(DarkroomImageError(.unsupportedFeature, message))
    }
    /// A `.limitExceeded` failure for a frame count over ``DecodeLimits/maxFrames``.
    static func tooManyFrames(_ count: Int, _ limits: DecodeLimits) -> ProbeStop {
        .failed(
            DarkroomImageError(
                .limitExceeded,
                "the image has more than \(limits.maxFrames) frames (counted \(count))"))
    }
}

/// A bounds-checked, allocation-free view of the bytes being probed.
///
/// Reads take absolute offsets. A read that would go past the end throws
/// ``ProbeStop/needMoreData(atLeast:)`` naming the prefix length it needed; nothing ever reads out of bounds.
/// Offsets are `Int`, so values read as `UInt32` need a 64-bit platform (the only kind Darkroom targets).
struct ByteReader {
    /// The bytes.
    let bytes: UnsafeRawBufferPointer

    /// Wraps `bytes` without copying.
    init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    /// Number of bytes available.
    var count: Int { bytes.count }

    /// Throws unless `length` bytes starting at `offset` are available.
    @inline(__always)
    func require(_ offset: Int, _ length: Int) throws(ProbeStop) {
        guard offset >= 0, length >= 0 else { throw .corrupt("negative offset or length in header") }
        guard length <= bytes.count, offset <= bytes.count - length else {
            throw .needMoreData(atLeast: offset > Int.max - length ? Int.max : offset + length)
        }
    }

    /// The byte at `offset`.
    @inline(__always)
    func u8(_ offset: Int) throws(ProbeStop) -> Int {
        try require(offset, 1)
        return Int(bytes[offset])
    }

    /// A big-endian 16-bit value.
    @inline(__always)
    func u16be(_ offset: Int) throws(ProbeStop) -> Int {
        try require(offset, 2)
        return Int(bytes[offset]) << 8 | Int(bytes[offset + 1])
    }

    /// A little-endian 16-bit value.
    @inline(__always)
    func u16le(_ offset: Int) throws(ProbeStop) -> Int {
        try require(offset, 2)
        return Int(bytes[offset]) | Int(bytes[offset + 1]) << 8
    }

    /// A little-endian 24-bit value.
    @inline(__always)
    func u24le(_ offset: Int) throws(ProbeStop) -> Int {
        try require(offset, 3)
        return Int(bytes[offset]) | Int(bytes[offset + 1]) << 8 | Int(bytes[offset + 2]) << 16
    }

    /// A big-endian 32-bit value (four-character codes compare as these).
    @inline(__always)
    func u32be(_ offset: Int) throws(ProbeStop) -> Int {
        try require(offset, 4)
        return Int(bytes[offset]) << 24 | Int(bytes[offset + 1]) << 16
            | Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3])
    }

    /// A little-endian 32-bit value.
    @inline(__always)
    func u32le(_ offset: Int) throws(ProbeStop) -> Int {
        try require(offset, 4)
        return Int(bytes[offset]) | Int(bytes[offset + 1]) << 8
            | Int(bytes[offset + 2]) << 16 | Int(bytes[offset + 3]) << 24
    }

    /// `length` bytes starting at `offset`, without copying.
    func slice(_ offset: Int, _ length: Int) throws(ProbeStop) -> UnsafeRawBufferPointer {
        try require(offset, length)
        return UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + length])
    }

    /// Whether the bytes at `offset` equal `expected` (false when they are not all available).
    func matches(_ expected: some Collection<UInt8>, at offset: Int) -> Bool {
        guard offset >= 0, expected.count <= bytes.count, offset <= bytes.count - expected.count else { return false }
        var index = offset
        for byte in expected {
            if bytes[index] != byte { return false }
            index += 1
        }
        return true
    }

}
