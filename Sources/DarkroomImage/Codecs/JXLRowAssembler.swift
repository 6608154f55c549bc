/// Puts libjxl's callback pieces (runs of pixels of one row, a 256×256 group at a time) back into whole rows and
/// hands them to a ``RowDestination`` top to bottom, as soon as each row and every row above it is complete.
///
/// Holds a window of 512 rows (two group rows); should a piece arrive further ahead than that (a codestream whose
/// groups are stored out of order) the window grows to the whole image, within `maxBytes`. Called on the decoding
/// thread only (no libjxl thread pool is set), so it needs no lock.
final class JXLRowAssembler {
    private let width: Int
    private let height: Int
    private let destination: RowDestination
    private let premultiply: Bool
    private let maxBytes: Int
    private var window: Int
    private var buffer: ScratchBuffer<UInt8>
    /// Pixels received for the row each slot holds.
    private var filled: [Int]
    /// The next row to hand out; rows above it are done.
    private var next = 0
    /// The first problem met inside a callback (which cannot throw); the decode reports it.
    private(set) var failure: DarkroomImageError?

    init(width: Int, height: Int, destination: RowDestination, premultiply: Bool, maxBytes: Int)
        throws(DarkroomImageError)
    {
        self.width = width
        self.height = height
        self.destination = destination
        self.premultiply = premultiply
        self.maxBytes = maxBytes
        window = min(height, 512)
        guard window * width * 4 <= maxBytes else {
            throw DarkroomImageError(
                .limitExceeded, "a \(width)-pixel-wide JPEG XL's row window is over maxDecodedBytes")
        }
        buffer = try ScratchBuffer(count: window * width * 4, zeroed: false)
        filled = [Int](repeating: 0, count: window)
    }

    /// Takes `count` RGBA pixels of row `y` starting at column `x`.
    func put(x: Int, y: Int, count: Int, pixels: UnsafeRawPointer) {
        guard failure == nil, y >= next, y < height, x >= 0, count >= 0, x + count <= width else { return }
        if y >= next + window { grow() }
        guard failure == nil else { return }
        let slot = y % window
        (buffer.pointer + (slot * width + x) * 4).update(
            from: pixels.assumingMemoryBound(to: UInt8.self), count: count * 4)
        filled[slot] += count
        while next < height && filled[next % window] >= width { emit() }
    }

    /// Completes the output once every row was handed out.
    func finish() throws(DarkroomImageError) -> Bitmap {
        if let failure { throw failure }
        guard next == height else {
            throw DarkroomImageError(.corrupt, "libjxl delivered \(next) of \(height) rows")
        }
        return destination.finish()
    }

    private func emit() {
        let slot = next % window
        let row = buffer.pointer + slot * width * 4
        for x in 0..<width {
            let p = row + 4 * x
            let (r, b, a) = (p[0], p[2], p[3])
            if premultiply {
                p[0] = PixelConversion.premultiply(b, a)
                p[1] = PixelConversion.premultiply(p[1], a)
                p[2] = PixelConversion.premultiply(r, a)
            } else {
                (p[0], p[2]) = (b, r)
            }
        }
        if destination.requiredRows.contains(next) { destination.consume(row: row, y: next) }
        filled[slot] = 0
        next += 1
    }

    /// Widens the window to the whole image, keeping the rows received so far.
    private func grow() {
        guard window < height else { return }
        guard height * width * 4 <= maxBytes,
            let larger = try? ScratchBuffer<UInt8>(count: height * width * 4, zeroed: false)
        else {
            failure = DarkroomImageError(
                .limitExceeded, "this JPEG XL stores its groups out of order; holding it whole is over maxDecodedBytes")
            return
        }
        var counts = [Int](repeating: 0, count: height)
        for y in next..<min(height, next + window) {
            let slot = y % window
            (larger.pointer + y * width * 4).update(from: buffer.pointer + slot * width * 4, count: width * 4)
            counts[y] = filled[slot]
        }
        buffer = larger
        filled = counts
        window = height
    }
}
