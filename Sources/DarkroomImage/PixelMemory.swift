import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Counters of pixel memory held by bitmaps and decode working buffers.
///
/// Every ``HeapBitmapStorage`` and every scratch buffer a decoder or resampler allocates for pixel rows is
/// counted — process-wide, and by the ``PixelMemoryMeter`` active in the current task, if any — so "a
/// 12 MP → 256 px thumbnail never holds the 48 MB image" is something a test can assert.
/// Cost: a few relaxed atomic operations per allocation (never per pixel or row).
public enum PixelMemory {
    private static let current = Atomic<Int>(0)
    private static let peak = Atomic<Int>(0)

    /// Bytes of pixel memory held right now, process-wide.
    public static var currentBytes: Int { current.load(ordering: .relaxed) }
    /// The largest ``currentBytes`` seen since the last ``resetPeak()``.
    public static var peakBytes: Int { peak.load(ordering: .relaxed) }
    /// Starts a new process-wide peak measurement from the current level.
    public static func resetPeak() { peak.store(current.load(ordering: .relaxed), ordering: .relaxed) }

    /// Runs `body` with a fresh meter that sees only the pixel memory allocated inside it (on this task),
    /// however many other decodes run at the same time, and returns the meter with the result.
    public static func measure<R, E: Error>(_ body: () throws(E) -> R) throws(E) -> (R, PixelMemoryMeter) {
        let meter = PixelMemoryMeter()
        let result = PixelMemoryMeter.$active.withValue(meter) { Result { () throws(E) -> R in try body() } }
        return (try result.get(), meter)
    }

    /// Counts an allocation; returns the meter it was charged to, which must be passed to ``released(_:meter:)``.
    static func allocated(_ bytes: Int) -> PixelMemoryMeter? {
        raise(current, peak, by: bytes)
        let meter = PixelMemoryMeter.active
        meter?.allocated(bytes)
        return meter
    }

    static func released(_ bytes: Int, meter: PixelMemoryMeter?) {
        current.subtract(bytes, ordering: .relaxed)
        meter?.released(bytes)
    }

    fileprivate static func raise(_ current: borrowing Atomic<Int>, _ peak: borrowing Atomic<Int>, by bytes: Int) {
        let now = current.add(bytes, ordering: .relaxed).newValue
        var seen = peak.load(ordering: .relaxed)
        while now > seen {
            let (exchanged, original) = peak.compareExchange(expected: seen, desired: now, ordering: .relaxed)
            if exchanged { break }
            seen = original
        }
    }
}

/// Pixel memory allocated while this meter was active (see ``PixelMemory/measure(_:)``).
public final class PixelMemoryMeter: Sendable {
    @TaskLocal static var active: PixelMemoryMeter?

    private let current = Atomic<Int>(0)
    private let peak = Atomic<Int>(0)

    /// Bytes allocated under this meter and not yet freed.
    public var currentBytes: Int { current.load(ordering: .relaxed) }
    /// The most bytes held at once under this meter.
    public var peakBytes: Int { peak.load(ordering: .relaxed) }

    fileprivate func allocated(_ bytes: Int) { PixelMemory.raise(current, peak, by: bytes) }
    fileprivate func released(_ bytes: Int) { current.subtract(bytes, ordering: .relaxed) }
}

/// A counted, 64-byte aligned scratch buffer for rows of pixels (decode strips, resampler accumulators).
/// Freed on deinit. Not shared between threads.
final class ScratchBuffer<Element: BitwiseCopyable> {
    let pointer: UnsafeMutablePointer<Element>
    let count: Int
    private let meter: PixelMemoryMeter?

    init(count: Int, zeroed: Bool = true) throws(DarkroomImageError) {
        let bytes = max(count, 1) * MemoryLayout<Element>.stride
        var raw: UnsafeMutableRawPointer?
        guard posix_memalign(&raw, 64, bytes) == 0, let raw else {
            throw DarkroomImageError(.outOfMemory, "could not allocate \(bytes) bytes of scratch")
        }
        if zeroed { memset(raw, 0, bytes) }
        pointer = raw.bindMemory(to: Element.self, capacity: max(count, 1))
        self.count = count
        meter = PixelMemory.allocated(bytes)
    }

    deinit {
        free(pointer)
        PixelMemory.released(max(count, 1) * MemoryLayout<Element>.stride, meter: meter)
    }
}
