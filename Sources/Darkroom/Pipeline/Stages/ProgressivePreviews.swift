import DarkroomImage
import DarkroomSupport

/// When the loader hands the pipeline a body so far for a progressive preview: at each newly complete scan of a
/// progressive JPEG; at a quarter, half and three quarters of the announced length for a baseline JPEG (the rows
/// so far); for an
/// Adam7-interlaced PNG, at the shares of the announced length by which its passes have usually arrived (its
/// passes cannot be told apart without inflating the data; a preview shows the passes that are whole); never for
/// other formats. One pass over each new JPEG byte (``JPEGScanCounter``).
struct ProgressivePreviewTrigger: PartialDataTrigger {
    private var scans = JPEGScanCounter()
    private var handedOverScans = 0
    private var handedOverBaseline = 0
    private var handedOverPNG = 0

    /// Where an interlaced PNG's body is handed over, as shares of its length: its passes hold 1/64, 1/64, 1/32,
    /// 1/16, 1/8, 1/4 and 1/2 of the pixels, and the sparse early passes compress less, so each share is about 1.5 ×
    /// the pixels of the passes before it.
    static let interlacedPNGShares = [0.03, 0.06, 0.12, 0.24, 0.45, 0.8]
    /// Where a baseline JPEG's body is handed over, as shares of its length: the rows so far.
    static let baselineShares = [0.25, 0.5, 0.75]

    mutating func shouldHandOver(_ body: [UInt8], expected: Int64?) -> Bool {
        if body.count >= 29, body.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) {
            return body[28] == 1 && Self.passes(Self.interlacedPNGShares, &handedOverPNG, body.count, expected)
        }
        body.withUnsafeBytes { scans.advance($0) }
        guard scans.isJPEG == true, scans.hasFrameHeader else { return false }
        if scans.isProgressive {
            guard scans.completeScans > handedOverScans else { return false }
            handedOverScans = scans.completeScans
            return true
        }
        return Self.passes(Self.baselineShares, &handedOverBaseline, body.count, expected)
    }

    /// Whether `received` bytes of `expected` pass the next of `shares` not yet handed over (`handed` counts them;
    /// every share passed at once counts, so one body serves them all). Never without an announced length.
    private static func passes(_ shares: [Double], _ handed: inout Int, _ received: Int, _ expected: Int64?) -> Bool {
        guard let expected else { return false }
        let start = handed
        while handed < shares.count, Double(received) >= shares[handed] * Double(expected) { handed += 1 }
        return handed > start
    }
}

/// One task's preview decodes: at most one in flight, and a new one starts at least `interval` seconds after the
/// last one started. A body that arrives meanwhile waits (a newer one replaces it) and starts when the running
/// decode finishes, if the interval has passed by then, or with the next body otherwise; the final image
/// supersedes whatever is left.
final class PreviewThrottle: Sendable {
    private struct State {
        var inFlight = false
        var lastStart = -Double.infinity
        var pending: FetchOutput?
        var started = 0
    }
    private let interval: Double
    private let state = Locked(State())

    init(interval: Double) { self.interval = max(0, interval) }

    /// Offers a new body; returns the body to decode now, or nil when it was kept for later.
    func offer(_ body: FetchOutput) -> FetchOutput? {
        let now = MonotonicClock.seconds()
        return state.withLock { s in
            guard !s.inFlight, now - s.lastStart >= interval else {
                s.pending = body
                return nil
            }
            s.pending = nil
            s.inFlight = true
            s.lastStart = now
            s.started += 1
            return body
        }
    }

    /// How many preview decodes have started (the running one included).
    var started: Int { state.withLock { $0.started } }

    /// Marks the running decode done; returns the waiting body to decode next, if its time has come.
    func finished() -> FetchOutput? {
        let now = MonotonicClock.seconds()
        return state.withLock { s in
            s.inFlight = false
            guard let next = s.pending, now - s.lastStart >= interval else { return nil }
            s.pending = nil
            s.inFlight = true
            s.lastStart = now
            s.started += 1
            return next
        }
    }
}

/// The blur of ``ImageRequest/Options/progressiveBlur``: YYWebImage's progressive-blur radius, as a standard
/// deviation in preview pixels, for a preview made from `received` bytes of `expected` (or, when the length is
/// unknown, the `number`-th preview).
func progressiveBlurSigma(received: Int, expected: Int64?, number: Int) -> Double {
    guard let expected, expected > 0 else { return 32 / Double(max(1, number)) }
    let share = min(1, Double(received) / Double(expected))
    return max(0, 32 * (1 / (3 * share + 0.6) - 0.25))
}
