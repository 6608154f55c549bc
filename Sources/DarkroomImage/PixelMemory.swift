import Synchronization

/// Process-wide counters of pixel memory held by bitmaps and decode working buffers.
///
/// Every ``HeapBitmapStorage`` and every scratch buffer a decoder or resampler allocates for pixel rows is
/// counted, so "a 12 MP → 256 px thumbnail never holds the 48 MB image" is something a test can assert.
/// Cost: two relaxed atomic operations per allocation.
public enum PixelMemory {
    private static let current = Atomic<Int>(0)
    private static let peak = Atomic<Int>(0)

    /// Bytes of pixel memory held right now.
    public static var currentBytes: Int { current.load(ordering: .relaxed) }
    /// The largest ``currentBytes`` seen since the last ``resetPeak()``.
    public static var peakBytes: Int { peak.load(ordering: .relaxed) }
    /// Starts a new peak measurement from the current level.
    public static func resetPeak() { peak.store(current.load(ordering: .relaxed), ordering: .relaxed) }

    static func allocated(_ bytes: Int) {
        let now = current.add(bytes, ordering: .relaxed).newValue
        var seen = peak.load(ordering: .relaxed)
        while now > seen {
            let (exchanged, original) = peak.compareExchange(
                expected: seen, desired: now, ordering: .relaxed)
            if exchanged { break }
            seen = original
        }
    }

    static func released(_ bytes: Int) {
        current.subtract(bytes, ordering: .relaxed)
    }
}

/// A counted, 64-byte aligned scratch buffer for rows of pixels (decode strips, resampler accumulators).
/// Freed on deinit. Not shared between threads.
final class ScratchBuffer<Element: BitwiseCopyable> {
    let pointer: UnsafeMutablePointer<Element>
    let count: Int

    init(count: Int, zeroed: Bool = true) throws(DarkroomImageError) {
        let bytes = max(count, 1) * MemoryLayout<Element>.stride
        var raw: UnsafeMutableRawPointer?
        guard posix_memalign(&raw, 64, bytes) == 0, let raw else {
            throw DarkroomImageError(.outOfMemory, "could not allocate \(bytes) bytes of scratch")
        }
        if zeroed { memset(raw, 0, bytes) }
        pointer = raw.bindMemory(to: Element.self, capacity: max(count, 1))
        self.count = count
        PixelMemory.allocated(bytes)
    }

    deinit {
        free(pointer)
        PixelMemory.released(max(count, 1) * MemoryLayout<Element>.stride)
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
