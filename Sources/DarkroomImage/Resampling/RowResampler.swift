/// A rectangle in source pixel coordinates (fractional).
package struct SourceRect: Sendable, Hashable {
    package var x: Double, y: Double, width: Double, height: Double
}

/// Where resampled rows go: `height` rows of `width` pixels with `channels` bytes each, row y at base + y*bytesPerRow.
struct PixelRows {
    var base: UnsafeMutableRawPointer
    var width: Int
    var height: Int
    var bytesPerRow: Int
}

/// Streams source rows top to bottom into a high-quality downscale/upscale of `sourceRect` onto `destination`.
///
/// Pipeline per source row: optional integer box pre-reduction (``BoxReducer``, when an axis shrinks ≥ 6×) →
/// horizontal filter of each (reduced) row into a ring slot of `destination.width × channels` floats →
/// as soon as the last row an output row needs has arrived, that output row is gathered from the ring
/// (vertical filter), rounded, clamped and written. Weight tables (``ResampleWeights``) are built once in
/// `init`.
///
/// Memory (all counted ``ScratchBuffer``s): one row of 16-bit column sums when box-reducing, one `Float` input
/// row of the needed (reduced) columns, and a ring of as many filtered rows of destination width as the
/// widest vertical window — ≤ 37 rows for Lanczos while shrinking (the ratio left after box reduction stays
/// below 6; 4032×3024 → 256×192 BGRA peaks at ≈ 160 KB), 6 when enlarging. Never the source image, never the
/// whole destination in floats.
/// Cost: per source row one widening pass (or box add); per (reduced) row `dstW × taps` SIMD4 multiply-adds;
/// per output row `taps × dstW × channels` float multiply-adds. No allocation after `init`.
/// Used by one thread at a time (not `Sendable`).
final class RowResampler {
    /// Source rows that influence some output row; rows outside may be skipped (never fed).
    let requiredSourceRows: Range<Int>

    private let channels: Int
    private let alphaChannel: Int?
    private var destination: PixelRows
    private let sourceHeight: Int
    private let factorY: Int
    private let horizontal: ResampleWeights
    private let vertical: ResampleWeights
    private let box: BoxReducer?
    /// First source column read on the unreduced path.
    private let columnStart: Int
    /// Values (columns × channels) widened per row on the unreduced path.
    private let widenCount: Int
    /// The current (reduced) input row as floats, plus 4 zero pixels of padding for unrolled taps.
    private let line: ScratchBuffer<Float>
    /// `ringRows` horizontally filtered rows; reduced row r lives in slot `(r - vertical.origin) % ringRows`.
    private let ring: ScratchBuffer<Float>
    private let ringRows: Int
    /// Floats per ring row: `destination.width × channels` rounded up to an odd multiple of 16.
    private let rowFloats: Int
    /// Row pointers handed to the vertical kernel (`vertical.maxTaps` entries).
    private let gather: UnsafeMutablePointer<UnsafePointer<Float>>
    /// Output rows in the order their last input row arrives.
    private let outputOrder: [Int32]
    private var nextOutput = 0
    private var lastSourceRow = -1
    private var lastReducedRow = Int.min
    private var finished = false

    init(
        sourceWidth: Int, sourceHeight: Int, channels: Int, sourceRect: SourceRect, destination: PixelRows,
        filter: ResamplingFilter, alphaChannel: Int?
    ) throws(DarkroomImageError) {
        try Self.validate(
            sourceWidth: sourceWidth, sourceHeight: sourceHeight, channels: channels,
            rect: sourceRect, destination: destination, alphaChannel: alphaChannel)
        let rect = Self.clamped(sourceRect, width: sourceWidth, height: sourceHeight)
        let planX = try AxisPlan(
            sourceSize: sourceWidth, rectOrigin: rect.x, rectLength: rect.width,
            outputSize: destination.width, filter: filter)
        let planY = try AxisPlan(
            sourceSize: sourceHeight, rectOrigin: rect.y, rectLength: rect.height,
            outputSize: destination.height, filter: filter)
        self.channels = channels
        self.alphaChannel = alphaChannel
        self.destination = destination
        self.sourceHeight = sourceHeight
        factorY = planY.factor
        horizontal = planX.weights
        vertical = planY.weights
        requiredSourceRows = planY.sourceRange

        let reducedColumns = horizontal.origin..<horizontal.end
        if planX.factor > 1 || planY.factor > 1 {
            box = try BoxReducer(
                sourceWidth: sourceWidth, channels: channels, factorX: planX.factor,
                factorY: planY.factor, reducedColumns: reducedColumns)
        } else {
            box = nil
        }
        columnStart = horizontal.origin
        widenCount = reducedColumns.count * channels
        line = try ScratchBuffer(count: (reducedColumns.count + 4) * channels)
        // Ring rows are read together (one 64-byte chunk of each per step): keep their stride an odd number
        // of cache lines so they spread over L1 sets instead of all aliasing at 4 KB multiples.
        let lines = (destination.width * channels + 15) / 16
        rowFloats = (lines | 1) * 16
        ringRows = vertical.maxTaps
        ring = try ScratchBuffer(count: ringRows * rowFloats)
        gather = .allocate(capacity: vertical.maxTaps)

        let vertical = self.vertical
        outputOrder = (0..<destination.height).sorted { a, b in
            let ea = vertical.relativeEnd(a)
            let eb = vertical.relativeEnd(b)
            return ea != eb ? ea < eb : a < b
        }.map { Int32($0) }
    }

    deinit { gather.deallocate() }

    /// Feeds source row `y` (`sourceWidth × channels` bytes). Rows must come in increasing order; rows outside
    /// ``requiredSourceRows``, repeated rows and rows after ``finish()`` are ignored.
    func consume(row: UnsafeRawPointer, y: Int) {
        guard !finished, requiredSourceRows.contains(y), y > lastSourceRow else { return }
        lastSourceRow = y
        if let box {
            let block = y / factorY
            if box.hasPendingRow && box.block != block {
                deliver(reducedRow: box.emit(into: line.pointer))
            }
            box.add(row: row, y: y)
            let blockEnd = min((block + 1) * factorY, sourceHeight, requiredSourceRows.upperBound)
            if y == blockEnd - 1 { deliver(reducedRow: box.emit(into: line.pointer)) }
        } else {
            RowKernels.widen(
                row.assumingMemoryBound(to: UInt8.self) + columnStart * channels,
                into: line.pointer, count: widenCount)
            deliver(reducedRow: y)
        }
    }

    /// Writes every output row not yet written. Call once after the last required row. Rows that never
    /// arrived (a truncated decode) repeat the nearest row that did; with no row at all the output is zeroed.
    func finish() {
        guard !finished else { return }
        if let box, box.hasPendingRow { deliver(reducedRow: box.emit(into: line.pointer)) }
        finished = true
        if lastReducedRow == Int.min {
            for y in 0..<destination.height {
                (destination.base + y * destination.bytesPerRow).initializeMemory(
                    as: UInt8.self, repeating: 0, count: destination.width * channels)
            }
            nextOutput = destination.height
            return
        }
        let previous = slot(lastReducedRow)
        for missing in (lastReducedRow + 1)..<max(lastReducedRow + 1, vertical.end) {
            copy(previous, to: slot(missing))
            produceOutputs(through: missing)
        }
    }

    /// Prepares for another image of the same geometry (the next frame of an animation) written to
    /// `destination`, which must have the size given at `init`. Keeps the weight tables and buffers.
    func restart(into destination: PixelRows) {
        precondition(destination.width == self.destination.width && destination.height == self.destination.height)
        self.destination = destination
        nextOutput = 0
        lastSourceRow = -1
        lastReducedRow = Int.min
        finished = false
    }

    // MARK: - Pipeline

    /// `line` holds reduced row `r`: filter it horizontally into its ring slot and write every output row
    /// whose window ends at `r`. A gap (rows the decoder never sent) is filled with copies of its neighbor.
    private func deliver(reducedRow r: Int) {
        guard r >= vertical.origin, r < vertical.end, r > lastReducedRow else { return }
        let firstMissing = lastReducedRow == Int.min ? vertical.origin : lastReducedRow + 1
        let target = slot(r)
        if lastReducedRow != Int.min {
            let previous = slot(lastReducedRow)
            for missing in firstMissing..<r {
                copy(previous, to: slot(missing))
                produceOutputs(through: missing)
            }
            filterHorizontally(into: target)
        } else {
            filterHorizontally(into: target)
            for missing in firstMissing..<r {
                copy(target, to: slot(missing))
                produceOutputs(through: missing)
            }
        }
        lastReducedRow = r
        produceOutputs(through: r)
    }

    @inline(__always)
    private func filterHorizontally(into target: UnsafeMutablePointer<Float>) {
        if channels == 4 {
            RowKernels.horizontal4(line.pointer, into: target, weights: horizontal)
        } else {
            RowKernels.horizontal1(line.pointer, into: target, weights: horizontal)
        }
    }

    /// Writes, in order, every pending output row whose last input row is `r` or earlier.
    private func produceOutputs(through r: Int) {
        let starts = vertical.starts.pointer
        let counts = vertical.counts.pointer
        let height = destination.height
        while nextOutput < height {
            let dy = Int(outputOrder[nextOutput])
            let first = vertical.origin + Int(starts[dy])
            let taps = Int(counts[dy])
            guard first + taps - 1 <= r else { return }
            for j in 0..<taps { gather[j] = UnsafePointer(slot(first + j)) }
            RowKernels.vertical(
                rows: gather, weights: vertical.weights.pointer + dy * vertical.tapStride, taps: taps,
                floats: rowFloats,
                into: (destination.base + dy * destination.bytesPerRow).assumingMemoryBound(to: UInt8.self),
                width: destination.width, channels: channels, alphaChannel: alphaChannel)
            nextOutput += 1
        }
    }

    @inline(__always)
    private func slot(_ reducedRow: Int) -> UnsafeMutablePointer<Float> {
        ring.pointer + ((reducedRow - vertical.origin) % ringRows) * rowFloats
    }

    @inline(__always)
    private func copy(_ source: UnsafeMutablePointer<Float>, to target: UnsafeMutablePointer<Float>) {
        if source != target { target.update(from: source, count: rowFloats) }
    }

    // MARK: - Validation

    private static func validate(
        sourceWidth: Int, sourceHeight: Int, channels: Int, rect: SourceRect,
        destination: PixelRows, alphaChannel: Int?
    ) throws(DarkroomImageError) {
        guard sourceWidth > 0, sourceHeight > 0 else {
            throw DarkroomImageError(
                .invalidArgument,
                "resampler source size must be positive, got \(sourceWidth)×\(sourceHeight)")
        }
        guard channels == 1 || channels == 4 else {
            throw DarkroomImageError(.invalidArgument, "resampler supports 1 or 4 channels, got \(channels)")
        }
        if let alphaChannel, channels != 4 || !(0..<4).contains(alphaChannel) {
            throw DarkroomImageError(
                .invalidArgument,
                "alpha channel \(alphaChannel) is invalid for \(channels)-channel pixels")
        }
        guard destination.width > 0, destination.height > 0 else {
            throw DarkroomImageError(
                .invalidArgument,
                "resampler destination size must be positive, got \(destination.width)×\(destination.height)")
        }
        guard destination.bytesPerRow >= destination.width * channels else {
            throw DarkroomImageError(
                .invalidArgument,
                "destination rows of \(destination.bytesPerRow) bytes cannot hold \(destination.width) pixels")
        }
        let slackX = 1e-6 * Double(sourceWidth)
        let slackY = 1e-6 * Double(sourceHeight)
        guard rect.x.isFinite, rect.y.isFinite, rect.width.isFinite, rect.height.isFinite,
            rect.width > 0, rect.height > 0, rect.x >= -slackX, rect.y >= -slackY,
            rect.x + rect.width <= Double(sourceWidth) + slackX,
            rect.y + rect.height <= Double(sourceHeight) + slackY
        else {
            throw DarkroomImageError(
                .invalidArgument,
                "source rect (\(rect.x), \(rect.y), \(rect.width)×\(rect.height)) is not inside the "
                    + "\(sourceWidth)×\(sourceHeight) source")
        }
    }

    /// Removes floating-point slack so the rect lies exactly inside the source.
    private static func clamped(_ rect: SourceRect, width: Int, height: Int) -> SourceRect {
        let x = min(max(rect.x, 0), Double(width))
        let y = min(max(rect.y, 0), Double(height))
        return SourceRect(
            x: x, y: y, width: max(min(rect.width, Double(width) - x), 1e-9),
            height: max(min(rect.height, Double(height) - y), 1e-9))
    }
}
