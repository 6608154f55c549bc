import DarkroomSupport

/// An animated image's encoded bytes at a fixed address, shared by every decoder that plays it (a player
/// starts a new one each loop; the C decoders keep pointers into the bytes between frames).
///
/// Immutable after `init`; freed when the last reference goes. Costs one copy of the file at creation, except when
/// it borrows bytes its creator keeps alive (the package-only `init(borrowing:limits:)`).
public final class EncodedAnimation: Sendable {
    /// The bytes (valid while this object lives).
    public var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(storage) }
    // Written once in init, read-only afterwards, freed in deinit (when owned): safe to share between threads.
    private nonisolated(unsafe) let storage: UnsafeMutableRawBufferPointer
    /// Whether `storage` is this object's to free; false for borrowed bytes.
    private let ownsStorage: Bool
    /// The container's timing, read once at creation.
    public let info: AnimationInfo
    /// The header, read with ``info`` (decoders start from it instead of probing again).
    let probe: ImageProbe

    /// Copies `bytes` and reads the container's timing.
    /// - Throws: ``DarkroomImageError`` as ``ImageProber/animationInfo(_:limits:)``.
    public convenience init(_ bytes: [UInt8], limits: DecodeLimits = .default) throws(DarkroomImageError) {
        let storage = try bytes.withBytes { (raw) throws(DarkroomImageError) in try Self.copy(raw, limits: limits) }
        try self.init(storage: storage, limits: limits)
    }

    /// Copies `bytes` and reads the container's timing.
    /// - Throws: ``DarkroomImageError`` as ``ImageProber/animationInfo(_:limits:)``.
    public convenience init(copying bytes: UnsafeRawBufferPointer, limits: DecodeLimits = .default)
        throws(DarkroomImageError)
    {
        try self.init(storage: try Self.copy(bytes, limits: limits), limits: limits)
    }

    /// Uses `bytes` in place, without a copy, for a caller that decodes synchronously from a buffer it owns (the
    /// command line's per-worker read buffer): the caller must keep `bytes` alive and unchanged until this object
    /// and every decoder made from it are gone, so it must not be cached or handed to another thread.
    /// - Throws: as ``init(copying:limits:)``.
    package init(borrowing bytes: UnsafeRawBufferPointer, limits: DecodeLimits = .default) throws(DarkroomImageError) {
        guard let base = bytes.baseAddress, !bytes.isEmpty else {
            throw DarkroomImageError(.empty, "the input is empty")
        }
        guard bytes.count <= limits.maxInputBytes else {
            throw DarkroomImageError(
                .limitExceeded, "input of \(bytes.count) bytes exceeds maxInputBytes (\(limits.maxInputBytes))")
        }
        (probe, info) = try ImageProber.animationDetails(bytes, limits: limits)
        storage = UnsafeMutableRawBufferPointer(start: UnsafeMutableRawPointer(mutating: base), count: bytes.count)
        ownsStorage = false
    }

    private init(storage: UnsafeMutableRawBufferPointer, limits: DecodeLimits) throws(DarkroomImageError) {
        do {
            (probe, info) = try ImageProber.animationDetails(UnsafeRawBufferPointer(storage), limits: limits)
        } catch {
            storage.deallocate()
            throw error
        }
        self.storage = storage
        ownsStorage = true
    }

    private static func copy(_ bytes: UnsafeRawBufferPointer, limits: DecodeLimits) throws(DarkroomImageError)
        -> UnsafeMutableRawBufferPointer
    {
        guard !bytes.isEmpty else { throw DarkroomImageError(.empty, "the input is empty") }
        guard bytes.count <= limits.maxInputBytes else {
            throw DarkroomImageError(
                .limitExceeded, "input of \(bytes.count) bytes exceeds maxInputBytes (\(limits.maxInputBytes))")
        }
        let storage = UnsafeMutableRawBufferPointer.allocate(byteCount: bytes.count, alignment: 16)
        storage.copyMemory(from: bytes)
        return storage
    }

    deinit { if ownsStorage { storage.deallocate() } }
}
