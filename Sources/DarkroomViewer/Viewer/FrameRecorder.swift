import DarkroomSupport
import Foundation

/// Every frame the drawing thread made, and how long each cell showed its placeholder: what `--stats FILE.json`
/// writes. Only the drawing thread touches it.
struct FrameRecorder {
    /// One frame.
    struct Frame: Codable, Sendable {
        /// Seconds since the first frame, at the frame's start.
        var t: Double
        /// Drawing-thread work: events, deliveries, uploads, drawing and the present, milliseconds.
        var ms: Double
        /// Of ``ms``, the CPU time the drawing thread itself used, milliseconds: the rest it spent waiting for a
        /// core or blocked.
        var cpuMs: Double = 0
        /// Of ``ms``, the time the drawing thread was runnable but waited for a core, milliseconds (what is left
        /// of `ms` after this and ``cpuMs`` it was blocked: on the X server, a lock, a page from disk).
        var queuedMs: Double = 0
        /// How long after its scheduled start (the frame clock's tick) the frame started, milliseconds.
        var startDelayMs: Double = 0
        /// Of the time since the previous frame ended (its sleep and wake-up), how long the drawing thread waited for
        /// a core once woken, milliseconds: the part of ``startDelayMs`` this machine's scheduler added.
        var wakeQueuedMs: Double = 0
        /// Cells on screen.
        var cells: Int
        /// Of those, drawn as placeholders (no image yet).
        var placeholders: Int
        /// Of those, drawn with a preview (the file's embedded thumbnail) while their thumbnail decodes.
        var previews = 0
        /// Scroll offset, pixels.
        var offset: Double
        /// The frame also saved a screenshot (read back and PNG-encoded on the drawing thread): not a frame a user
        /// sees, so it is left out of the budget count.
        var screenshot = false
        /// Bitmaps copied into textures this frame (deliveries and animation frames).
        var uploads = 0
    }

    let budget: Double
    private(set) var frames: [Frame] = []
    /// How long cells showed a placeholder before their image (or before leaving the screen without one), seconds.
    private(set) var placeholderDurations: [Double] = []
    /// Cells that left the screen (or were there at the end) without their image ever drawn: when each left
    /// (seconds since the start) and how long it had shown its placeholder.
    private(set) var neverShown: [(at: Double, after: Double)] = []
    var cellsNeverShown: Int { neverShown.count }
    /// Cells whose image was drawn the first frame they were on screen.
    private(set) var cellsShownAtOnce = 0
    /// Cells whose first image drawn was a preview (an embedded thumbnail), not their thumbnail.
    private(set) var cellsPreviewFirst = 0
    /// Cells that left the screen (or were there at the end) showing a preview, their thumbnail never drawn.
    private(set) var cellsLeftWithPreview = 0
    /// Resident set size samples, MiB.
    private(set) var rssSamples: [Double] = []
    /// When the library scan finished, seconds since the start.
    private(set) var scanFinishedAt: Double?
    /// How long each script `settle` step waited, seconds.
    private(set) var settleTimes: [Double] = []
    private let start = MonotonicClock.seconds()

    init(fps: Double) { budget = 1 / fps }

    var now: Double { MonotonicClock.seconds() - start }

    mutating func record(_ frame: Frame) { frames.append(frame) }
    mutating func recordPlaceholder(shownFor seconds: Double, imageArrived: Bool) {
        placeholderDurations.append(seconds)
        if !imageArrived { neverShown.append((now, seconds)) }
    }
    mutating func recordShownAtOnce() { cellsShownAtOnce += 1 }
    mutating func recordPreviewFirst() { cellsPreviewFirst += 1 }
    mutating func recordLeftWithPreview() { cellsLeftWithPreview += 1 }
    mutating func recordRSS(_ mib: Double) { rssSamples.append(mib) }
    mutating func recordScanFinished() { scanFinishedAt = now }
    mutating func recordSettle(seconds: Double) { settleTimes.append(seconds) }

    /// The first frame with cells on screen.
    var firstCellsAt: Double? { frames.first { $0.cells > 0 }?.t }
    /// The first frame with cells on screen and none of them a placeholder or a preview.
    var firstScreenAt: Double? { frames.first { $0.cells > 0 && $0.placeholders == 0 && $0.previews == 0 }?.t }

    /// The frames a user sees (not the first, which maps the window, nor a screenshot frame or the one after it),
    /// how long after the one before each was presented (milliseconds), and which missed their vsync. The frame
    /// clock ticks once a budget; a frame must present before the tick after its own. It misses when its own work
    /// takes more than the budget, or when it started so late (the thread not scheduled in time) that its work, even
    /// within the budget, ends past that tick: the display showed the previous frame again. `late` counts the
    /// second kind, `missed` both.
    func presentIntervals(budgetMs: Double) -> (intervals: [Double], late: Int, missed: [Frame]) {
        var intervals: [Double] = []
        var late = 0
        var missed: [Frame] = []
        for i in frames.indices where i >= 2 && !frames[i].screenshot && !frames[i - 1].screenshot {
            let previous = frames[i - 1].t * 1000 + frames[i - 1].ms
            intervals.append(frames[i].t * 1000 + frames[i].ms - previous)
            let overBudget = frames[i].ms > budgetMs
            let pastTick = frames[i].startDelayMs + frames[i].ms > budgetMs
            if pastTick, !overBudget { late += 1 }
            if pastTick { missed.append(frames[i]) }
        }
        return (intervals, late, missed)
    }

    /// The summary and the frames as JSON.
    func json(extra: [String: Any]) throws -> Data {
        // The first frame maps the window and the screenshot frames encode a PNG: neither is scrolling work.
        let ms = frames.dropFirst().filter { !$0.screenshot }.map(\.ms)
        let starts = frames.dropFirst().filter { !$0.screenshot }.map(\.startDelayMs)
        let budgetMs = budget * 1000
        let placeholderMs = placeholderDurations.map { $0 * 1000 }
        let presents = presentIntervals(budgetMs: budgetMs)
        var summary: [String: Any] = [
            "frames": frames.count,
            "firstFrameMs": frames.first?.ms ?? 0,
            "screenshotFrames": frames.filter(\.screenshot).count,
            "seconds": frames.last.map { $0.t + $0.ms / 1000 } ?? 0,
            "budgetMs": budgetMs,
            "overBudget": ms.filter { $0 > budgetMs }.count,
            "lateFrames": presents.late,
            "missedFrames": presents.missed.count,
            // Where the missed frames' time went: their work (of it, the drawing thread's CPU and its wait for a
            // core; the rest blocked), and their late starts (of them, the wait for a core once woken).
            "missedFrameTimeMs": [
                "work": presents.missed.reduce(0) { $0 + $1.ms }, "cpu": presents.missed.reduce(0) { $0 + $1.cpuMs },
                "queued": presents.missed.reduce(0) { $0 + $1.queuedMs },
                "startDelay": presents.missed.reduce(0) { $0 + $1.startDelayMs },
                "wakeQueued": presents.missed.reduce(0) { $0 + $1.wakeQueuedMs },
            ],
            "intervalMs": [
                "p50": percentile(presents.intervals, 50), "p99": percentile(presents.intervals, 99),
                "max": presents.intervals.max() ?? 0,
            ],
            "startDelayMs": [
                "p50": percentile(starts, 50), "p99": percentile(starts, 99), "max": starts.max() ?? 0,
            ],
            "frameMs": [
                "p50": percentile(ms, 50), "p95": percentile(ms, 95), "p99": percentile(ms, 99),
                "max": ms.max() ?? 0,
            ],
            "placeholderFrames": frames.filter { $0.placeholders > 0 }.count,
            "placeholderCellFrames": frames.reduce(0) { $0 + $1.placeholders },
            "placeholderMs": [
                "count": placeholderMs.count, "p50": percentile(placeholderMs, 50),
                "p95": percentile(placeholderMs, 95), "max": placeholderMs.max() ?? 0,
            ],
            "cellsNeverShown": cellsNeverShown,
            "neverShownCells": neverShown.map { [$0.at, $0.after * 1000] },
            "cellsShownAtOnce": cellsShownAtOnce,
            "cellsPreviewFirst": cellsPreviewFirst,
            "cellsLeftWithPreview": cellsLeftWithPreview,
            "previewCellFrames": frames.reduce(0) { $0 + $1.previews },
            "rssMiB": ["first": rssSamples.first ?? 0, "max": rssSamples.max() ?? 0, "last": rssSamples.last ?? 0],
            "rssSamples": rssSamples,
            "scanFinishedAt": scanFinishedAt ?? NSNull(),
            "firstCellsAt": firstCellsAt ?? NSNull(),
            "firstScreenAt": firstScreenAt ?? NSNull(),
            "settleSeconds": settleTimes,
        ]
        summary.merge(extra) { _, new in new }
        var object = summary
        object["frameRecord"] = frames.map {
            [
                "t": $0.t, "ms": $0.ms, "cpuMs": $0.cpuMs, "queuedMs": $0.queuedMs, "startDelayMs": $0.startDelayMs,
                "wakeQueuedMs": $0.wakeQueuedMs, "cells": $0.cells,
                "placeholders": $0.placeholders, "previews": $0.previews,
                "offset": $0.offset,
                "screenshot": $0.screenshot, "uploads": $0.uploads,
            ]
        }
        return try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
    }
}
