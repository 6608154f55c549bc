/// Puts libjxl's callback pieces (runs of pixels of one row, a 256×256 group at a time) back into whole rows and
/// hands them to a sink top to bottom, as soon as each row and every row above it is complete.
///
/// Holds a window of 512 rows (two group rows); should a piece arrive further ahead than that (a codestream whose
/// groups are stored out of order) the window grows to the whole image, within `maxBytes`. Called on the decoding
/// thread only (no libjxl thread pool is set), so it needs no lock.
final class JXLRowAssembler {
    /// Takes a whole row (`bytesPerPixel` a pixel, writable: the sink may convert it in place) and its index.
    typealias Sink = (UnsafeMutableRawPointer, Int) -> Void

    private let width: Int
    private let height: Int
    private let bytesPerPixel: Int
    private let maxBytes: Int
    private let sink: Sink
    private var window: Int
    private var buffer: ScratchBuffer<UInt8>
    /// Pixels received for the row each slot holds.
    private var filled: [Int]
    /// The next row to hand out; rows above it are done.
    private var next = 0
    /// The first problem met inside a callback (which cannot throw); the decode reports it.
    private(set) var failure: DarkroomImageError?

    init(width: Int, height: Int, bytesPerPixel: Int, maxBytes: Int, sink: @escaping Sink) throws(DarkroomImageError) {
        self.width = width
        self.height = height
        self.bytesPerPixel = bytesPerPixel
        self.maxBytes = maxBytes
        self.sink = sink
        window = min(height, 512)
        guard window * width * bytesPerPixel <= maxBytes else {
            throw DarkroomImageError(
                .limitExceeded, "a \(width)-pixel-wide JPEG XL's row window is over maxDecodedBytes")
        }
        buffer = try ScratchBuffer(count: window * width * bytesPerPixel, zeroed: false)
        filled = [Int](repeating: 0, count: window)
    }

    /// An assembler of RGBA8 rows that become premultiplied BGRA8 in `destination` (premultiplied here when
    /// `premultiply`).
    convenience init(
        width: Int, height: Int, destination: RowDestination, premultiply: Bool, maxBytes: Int
    ) throws(DarkroomImageError) {
        try self.init(width: width, height: height, bytesPerPixel: 4, maxBytes: maxBytes) { raw, y in
            let row = raw.assumingMemoryBound(to: UInt8.self)
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
            if destination.requiredRows.contains(y) { destination.consume(row: row, y: y) }
        }
    }

    /// Takes `count` pixels of row `y` starting at column `x`.
    func put(x: Int, y: Int, count: Int, pixels: UnsafeRawPointer) {
        guard failure == nil, y >= next, y < height, x >= 0, count >= 0, x + count <= width else { return }
        if y >= next + window { grow() }
        guard failure == nil else { return }
        let slot = y % window
        (buffer.pointer + (slot * width + x) * bytesPerPixel).update(
            from: pixels.assumingMemoryBound(to: UInt8.self), count: count * bytesPerPixel)
        filled[slot] += count
        while next < height && filled[next % window] >= width { emit() }
    }

    /// Checks that every row was handed out.
    func finish() throws(DarkroomImageError) {
        if let failure { throw failure }
        guard next == height else {
            throw DarkroomImageError(.corrupt, "libjxl delivered \(next) of \(height) rows")
        }
    }

    private func emit() {
        let slot = next % window
        sink(UnsafeMutableRawPointer(buffer.pointer + slot * width * bytesPerPixel), next)
        filled[slot] = 0
        next += 1
    }

    /// Widens the window to the whole image, keeping the rows received so far.
    private func grow() {
        guard window < height else { return }
        let rowBytes = width * bytesPerPixel
        guard height * rowBytes <= maxBytes,
            let larger = try? ScratchBuffer<UInt8>(count: height * rowBytes, zeroed: false)
        else {
            failure = DarkroomImageError(
                .limitExceeded, "this JPEG XL stores its groups out of order; holding it whole is over maxDecodedBytes")
            return
        }
        var counts = [Int](repeating: 0, count: height)
        for y in next..<min(height, next + window) {
            let slot = y % window
            (larger.pointer + y * rowBytes).update(from: buffer.pointer + slot * rowBytes, count: rowBytes)
            counts[y] = filled[slot]
        }
        buffer = larger
        filled = counts
        window = height
    }
}
