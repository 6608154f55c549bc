/// Counts the complete scans of a JPEG as its bytes arrive, so a loader can hand over the body at each scan of a
/// progressive JPEG: a scan is complete once the marker after its entropy-coded data has arrived.
///
/// Keeps its place between calls, so feeding a growing buffer costs one pass over the new bytes. Stops counting at
/// the first byte that is not valid JPEG structure (``isJPEG`` false, or ``isBroken``): it never throws, since it
/// only decides when to try a preview; the decoder judges the bytes.
package struct JPEGScanCounter: Sendable {
    /// Scans whose data has fully arrived (the marker after them included).
    package private(set) var completeScans = 0
    /// Where the marker after the last complete scan starts: the bytes before it hold whole scans only, which a
    /// decoder reads as a complete (if coarse) image; a cut anywhere else may fall inside a marker segment, which
    /// libjpeg refuses. 0 before the first scan is complete.
    package private(set) var endOfCompleteScans = 0
    /// Whether a progressive frame header (SOF2, SOF6, SOF10 or SOF14) has arrived.
    package private(set) var isProgressive = false
    /// Whether any frame header has arrived.
    package private(set) var hasFrameHeader = false
    /// False once the first two bytes are not a JPEG's; nil before they arrive.
    package private(set) var isJPEG: Bool?
    /// Whether the structure broke (a segment where a marker should be, or the end-of-image marker arrived).
    package private(set) var isBroken = false
    private var offset = 0
    private var inScan = false

    package init() {}

    /// Reads the bytes of `body` (the whole body so far, a prefix of what later calls see) past where the last
    /// call stopped.
    package mutating func advance(_ body: UnsafeRawBufferPointer) {
        let count = body.count
        if isJPEG == nil {
            guard count >= 2 else { return }
            isJPEG = body[0] == 0xFF && body[1] == 0xD8
            offset = 2
        }
        guard isJPEG == true else { return }
        while !isBroken {
            if inScan {
                // Entropy-coded data ends at a 0xFF that is neither stuffing (0x00), a restart marker nor fill
                guard let end = Self.markerAfterScan(body, from: offset) else {
                    offset = max(offset, count - 1)  // a 0xFF at the very end may start the marker
                    return
                }
                inScan = false
                completeScans += 1
                endOfCompleteScans = end
                offset = end
                continue
            }
            guard offset + 2 <= count else { return }
            guard body[offset] == 0xFF else {
                isBroken = true
                return
            }
            let marker = body[offset + 1]
            switch marker {
            case 0xFF:
                offset += 1  // fill byte before a marker
                continue
            case 0xD9:
                isBroken = true  // end of image: nothing more to count
                return
            case 0x01, 0xD0...0xD7:
                offset += 2
                continue
            default: break
            }
            guard offset + 4 <= count else { return }
            let length = Int(body[offset + 2]) << 8 | Int(body[offset + 3])
            guard length >= 2 else {
                isBroken = true
                return
            }
            if [0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF].contains(marker) {
                hasFrameHeader = true
                if [0xC2, 0xC6, 0xCA, 0xCE].contains(marker) { isProgressive = true }
            }
            if marker == 0xDA {
                guard offset + 2 + length <= count else { return }  // the scan header must be whole
                inScan = true
            }
            offset += 2 + length
        }
    }

    /// The offset of the marker that ends entropy-coded data starting at `start`, nil when it has not arrived.
    private static func markerAfterScan(_ body: UnsafeRawBufferPointer, from start: Int) -> Int? {
        var i = start
        let last = body.count - 1
        while i < last {
            if body[i] == 0xFF {
                let next = body[i + 1]
                if next != 0x00 && next != 0xFF && !(0xD0...0xD7).contains(next) { return i }
                i += next == 0xFF ? 1 : 2
            } else {
                i += 1
            }
        }
        return nil
    }
}
