/// The integer box pre-reduction stage: sums `factorX × factorY` blocks of source samples as rows stream in
/// and hands out each finished block row as one reduced row of `Float` averages.
///
/// Holds one row of 16-bit column sums (`2 × columns × channels` bytes of counted scratch), never the image.
/// Cost per source row: one widening add per byte of the needed columns (16 bytes per step); per finished
/// block row: one pass over those sums (`factorX` 4-lane adds per reduced pixel, 16-bit while they fit).
/// A partial block (the image's last columns or rows, or rows the decoder skipped) averages only the samples
/// it actually received. Not thread-safe; one decode at a time.
final class BoxReducer {
    let channels: Int
    let factorX: Int
    let factorY: Int
    /// First reduced column produced (reduced column `reducedStart` is written at index 0).
    let reducedStart: Int
    /// Number of reduced columns produced.
    let reducedCount: Int
    /// First source column summed (`reducedStart × factorX`).
    let columnStart: Int
    /// One past the last source column summed.
    let columnEnd: Int
    private let sums: ScratchBuffer<UInt16>
    /// The reduced row being accumulated, or -1 when no row is pending.
    private(set) var block = -1
    private var rowsInBlock = 0

    init(
        sourceWidth: Int, channels: Int, factorX: Int, factorY: Int,
        reducedColumns: Range<Int>
    ) throws(DarkroomImageError) {
        self.channels = channels
        self.factorX = factorX
        self.factorY = factorY
        reducedStart = reducedColumns.lowerBound
        reducedCount = reducedColumns.count
        columnStart = reducedColumns.lowerBound * factorX
        columnEnd = min(reducedColumns.upperBound * factorX, sourceWidth)
        sums = try ScratchBuffer(count: (columnEnd - columnStart) * channels, zeroed: false)
    }

    /// Whether a block row has received rows that have not been emitted yet.
    var hasPendingRow: Bool { rowsInBlock > 0 }

    /// Adds source row `y` (the whole source row; only the needed columns are read) to block row
    /// `y / factorY`. The caller emits any pending different block first.
    func add(row: UnsafeRawPointer, y: Int) {
        let n = (columnEnd - columnStart) * channels
        let source = row.assumingMemoryBound(to: UInt8.self) + columnStart * channels
        let target = sums.pointer
        let from = UnsafeRawPointer(source)
        let to = UnsafeMutableRawPointer(target)
        var i = 0
        if rowsInBlock == 0 {
            while i &+ 16 <= n {
                let bytes = from.loadUnaligned(fromByteOffset: i, as: SIMD16<UInt8>.self)
                to.storeBytes(
                    of: SIMD16<UInt16>(truncatingIfNeeded: bytes), toByteOffset: i &* 2, as: SIMD16<UInt16>.self)
                i &+= 16
            }
            while i < n {
                target[i] = UInt16(truncatingIfNeeded: source[i])
                i &+= 1
            }
        } else {
            while i &+ 16 <= n {
                let bytes = from.loadUnaligned(fromByteOffset: i, as: SIMD16<UInt8>.self)
                let sum =
                    to.load(fromByteOffset: i &* 2, as: SIMD16<UInt16>.self)
                    &+ SIMD16<UInt16>(truncatingIfNeeded: bytes)
                to.storeBytes(of: sum, toByteOffset: i &* 2, as: SIMD16<UInt16>.self)
                i &+= 16
            }
            while i < n {
                target[i] &+= UInt16(truncatingIfNeeded: source[i])
                i &+= 1
            }
        }
        block = y / factorY
        rowsInBlock += 1
    }

    /// Writes the pending block row as `reducedCount × channels` averages into `output`, resets, and returns
    /// the reduced row index.
    func emit(into output: UnsafeMutablePointer<Float>) -> Int {
        let rows = rowsInBlock
        let reduced = block
        let summedColumns = columnEnd - columnStart
        let fullColumns = min(reducedCount, summedColumns / factorX)
        let inverse = 1 / Float(factorX * rows)
        let sums = self.sums.pointer

        if factorX == 1 {
            let n = summedColumns * channels
            for i in 0..<n { output[i] = Float(sums[i]) * inverse }
        } else if channels == 4 && factorX &* rows &* 255 <= Int(UInt16.max) {
            // The block sums fit 16 bits: add without widening, convert once.
            let raw = UnsafeRawPointer(sums)
            let out = UnsafeMutableRawPointer(output)
            let step = factorX &* 8
            for i in 0..<fullColumns {
                var total = SIMD4<UInt16>.zero
                var offset = i &* step
                for _ in 0..<factorX {
                    total &+= raw.loadUnaligned(fromByteOffset: offset, as: SIMD4<UInt16>.self)
                    offset &+= 8
                }
                out.storeBytes(of: SIMD4<Float>(total) * inverse, toByteOffset: i &* 16, as: SIMD4<Float>.self)
            }
        } else if channels == 4 {
            let raw = UnsafeRawPointer(sums)
            let out = UnsafeMutableRawPointer(output)
            let step = factorX &* 8
            for i in 0..<fullColumns {
                var total = SIMD4<UInt32>.zero
                var offset = i &* step
                for _ in 0..<factorX {
                    total &+= SIMD4<UInt32>(
                        truncatingIfNeeded:
                            raw.loadUnaligned(fromByteOffset: offset, as: SIMD4<UInt16>.self))
                    offset &+= 8
                }
                out.storeBytes(of: SIMD4<Float>(total) * inverse, toByteOffset: i &* 16, as: SIMD4<Float>.self)
            }
        } else {
            for i in 0..<fullColumns {
                var total: UInt32 = 0
                let base = sums + i &* factorX &* channels
                for t in 0..<(factorX &* channels) { total &+= UInt32(base[t]) }
                output[i] = Float(total) * inverse
            }
        }
        // The image's last, partial block of columns averages only the columns it has.
        if fullColumns < reducedCount {
            let first = fullColumns * factorX
            let width = summedColumns - first
            let partialInverse = 1 / Float(width * rows)
            for c in 0..<channels {
                var total: UInt32 = 0
                for x in first..<summedColumns { total &+= UInt32(sums[x * channels + c]) }
                output[fullColumns * channels + c] = Float(total) * partialInverse
            }
        }
        rowsInBlock = 0
        block = -1
        return reduced
    }
}
