import Foundation
import Testing

@testable import DarkroomViewer

@Suite struct FrameRecorderTests {
    @Test func aFrameThatStartsLateMissesItsVsyncWhateverItsOwnWorkTook() throws {
        // Given frames at 120 fps (8.33 ms ticks): twice a quick one and then one on time whose 7 ms of work fits its
        // tick though it presents 14 ms after the quick one; one that starts 5 ms after its tick with 4 ms of work;
        // one on time whose own work takes 10 ms; and a steady one
        var recorder = FrameRecorder(fps: 120)
        let budget = 1.0 / 120
        let frames: [(delayMs: Double, ms: Double)] = [
            (0, 30), (0, 2), (0, 1), (0, 7), (0, 1), (0, 7), (5, 4), (0, 10), (0, 2),
        ]
        for (i, frame) in frames.enumerated() {
            let t = Double(i) * budget + frame.delayMs / 1000
            recorder.record(
                .init(t: t, ms: frame.ms, startDelayMs: frame.delayMs, cells: 42, placeholders: 0, offset: 0))
        }
        // When the record is summarised
        let json = try #require(
            try JSONSerialization.jsonObject(with: recorder.json(extra: [:])) as? [String: Any])
        // Then only the 10 ms frame is over budget by its work (the first frame, mapping the window, is left out);
        // the frame that started late misses its tick though its work fit, the slow-but-on-time 7 ms frames do not;
        // each missed frame counts once
        #expect(json["overBudget"] as? Int == 1)
        #expect(json["lateFrames"] as? Int == 1)
        #expect(json["missedFrames"] as? Int == 2)
        let interval = try #require(json["intervalMs"] as? [String: Double])
        // the longest gap between presents: the 7 ms frame after the 1 ms one, a tick plus 6 ms
        #expect(abs((interval["max"] ?? 0) - (budget * 1000 + 7 - 1)) < 1e-6)
    }

    @Test func theMissedFramesTimeIsSplitIntoWorkWaitingForACoreAndALateStart() throws {
        // Given at 120 fps a quick frame, one that starts 6 ms late (1 ms of that waiting for a core once woken) with
        // 3 ms of work, and one on time with 12 ms of work of which 2 ms CPU and 7 ms waiting for a core
        var recorder = FrameRecorder(fps: 120)
        let budget = 1.0 / 120
        recorder.record(.init(t: 0, ms: 30, cells: 1, placeholders: 0, offset: 0))
        recorder.record(.init(t: budget, ms: 1, cpuMs: 1, cells: 1, placeholders: 0, offset: 0))
        recorder.record(
            .init(
                t: 2 * budget + 0.006, ms: 3, cpuMs: 3, startDelayMs: 6, wakeQueuedMs: 1, cells: 1, placeholders: 0,
                offset: 0))
        recorder.record(.init(t: 3 * budget, ms: 12, cpuMs: 2, queuedMs: 7, cells: 1, placeholders: 0, offset: 0))
        // When the record is summarised
        let json = try #require(
            try JSONSerialization.jsonObject(with: recorder.json(extra: [:])) as? [String: Any])
        // Then both late frames count, and their time adds up by kind
        #expect(json["missedFrames"] as? Int == 2)
        let time = try #require(json["missedFrameTimeMs"] as? [String: Double])
        #expect(time == ["work": 15, "cpu": 5, "queued": 7, "startDelay": 6, "wakeQueued": 1])
    }
}
