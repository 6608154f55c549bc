import Foundation
import Testing

@testable import DarkroomViewer

@Suite struct FrameRecorderTests {
    @Test func aFrameThatStartsLateMissesItsVsyncWhateverItsOwnWorkTook() throws {
        // Given frames at 120 fps (8.33 ms): steady, then one that starts 25 ms after the one before with 2 ms of
        // work, then one on time whose own work takes 10 ms
        var recorder = FrameRecorder(fps: 120)
        let budget = 1.0 / 120
        let starts = [0, budget, 2 * budget, 3 * budget, 3 * budget + 0.025, 4 * budget + 0.025, 5 * budget + 0.025]
        let work = [30.0, 2, 2, 2, 2, 10, 2]
        for (t, ms) in zip(starts, work) {
            recorder.record(.init(t: t, ms: ms, cells: 42, placeholders: 0, offset: 0))
        }
        // When the record is summarised
        let json = try #require(
            try JSONSerialization.jsonObject(with: recorder.json(extra: [:])) as? [String: Any])
        // Then only the 10 ms frame is over budget by its work (the first frame, mapping the window, is left out);
        // the frame that started late is late though its work fit, and so is the slow one (presented 16 ms after
        // the one before); each missed frame counts once
        #expect(json["overBudget"] as? Int == 1)
        #expect(json["lateFrames"] as? Int == 2)
        #expect(json["missedFrames"] as? Int == 2)
        let interval = try #require(json["intervalMs"] as? [String: Double])
        #expect(abs((interval["max"] ?? 0) - 25) < 1e-6)  // the late start: 25 ms after the present before it
    }
}
