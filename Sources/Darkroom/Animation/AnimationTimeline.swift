import DarkroomImage

/// Where an animation is at a given time: each frame's start by the browsers' delay rule
/// (``AnimationInfo/displayDuration(ofFrame:)``), loops counted, the last frame held once the plays run out.
/// Frames are numbered by *sequence* across loops: loop `n`, frame `i` is `n × frameCount + i`.
struct AnimationTimeline: Sendable {
    let frameCount: Int
    /// Milliseconds from the start of a loop to each frame's start.
    private let starts: [Int]
    /// One loop, in milliseconds (at least 1).
    let loopDuration: Int
    /// How many loops play; 0 forever.
    let plays: Int

    init(info: AnimationInfo, frameCount: Int) {
        self.frameCount = max(1, frameCount)
        var starts: [Int] = []
        var total = 0
        for index in 0..<self.frameCount {
            starts.append(total)
            total += index < info.durations.count ? info.displayDuration(ofFrame: index) : 100
        }
        self.starts = starts
        loopDuration = max(1, total)
        plays = info.plays
    }

    /// The last sequence number that plays (`Int.max` for an endless animation).
    var lastSequence: Int { plays == 0 ? .max : plays * frameCount - 1 }

    /// The sequence number due `seconds` after the start.
    func sequence(at seconds: Double) -> Int {
        let milliseconds = Int((max(0, seconds) * 1000).rounded(.down))
        let loop = milliseconds / loopDuration
        let offset = milliseconds % loopDuration
        // The last frame whose start is at or before the offset.
        var low = 0
        var high = starts.count - 1
        while low < high {
            let mid = (low + high + 1) / 2
            if starts[mid] <= offset { low = mid } else { high = mid - 1 }
        }
        let (sequence, overflow) = loop.multipliedReportingOverflow(by: frameCount)
        return overflow ? lastSequence : min(sequence + low, lastSequence)
    }
}
