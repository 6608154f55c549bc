import Foundation
import Testing

@testable import DarkroomViewer

/// The grid's scroll physics, without a window: a layout and frames of 1/120 s.
@Suite struct ScrollModelTests {
    /// 2,000 cells of 100 px in 7 columns: 286 rows, far more than a screen.
    let layout = GridLayout(width: 800, height: 600, scale: 1, cellPoints: 100, count: 2_000)
    let frame = 1.0 / 120

    /// Advances `model` frame by frame until it rests (at most `seconds`), returning the offsets it passed.
    func run(_ model: inout ScrollModel, seconds: Double = 5) -> [Double] {
        var offsets: [Double] = []
        for _ in 0..<Int(seconds / frame) {
            model.advance(dt: frame, layout: layout)
            offsets.append(model.offset)
            if model.isAtRest { break }
        }
        return offsets
    }

    @Test func wheelNotchesEaseToTheirTargetAndAddUp() {
        // Given a grid at the top
        var model = ScrollModel()
        // When the wheel turns three notches down, then two more while the first easing runs
        model.wheel(notches: -3, layout: layout)
        model.advance(dt: frame, layout: layout)
        let partWay = model.offset
        model.wheel(notches: -2, layout: layout)
        let offsets = run(&model)
        // Then the offset moved part of the way in the first frame, never overshot, and came to rest at five notches
        #expect(partWay > 0 && partWay < 3 * ScrollModel.wheelStep)
        #expect(offsets.allSatisfy { $0 <= 5 * ScrollModel.wheelStep })
        #expect(model.offset == 5 * ScrollModel.wheelStep)
        #expect(model.isAtRest && !model.isMoving && model.direction == 1)
    }

    @Test func aFlingDecaysToRestAndStopsAtTheEnd() {
        // Given a fling down at 3,000 px/s from the top
        var model = ScrollModel()
        model.fling(velocity: 3_000)
        // When it runs until it rests
        let offsets = run(&model)
        // Then the offset only grew, by about v·τ (the integral of the decay), and the velocity reached 0
        #expect(zip(offsets, offsets.dropFirst()).allSatisfy { $0 <= $1 })
        #expect(abs(model.offset - 3_000 * ScrollModel.flingTimeConstant) < 60, "\(model.offset)")
        #expect(model.velocity == 0 && model.isAtRest)
        // And a fling up from near the top stops at 0 at once, not after decaying below it
        model.fling(velocity: -50_000)
        _ = run(&model)
        #expect(model.offset == 0 && model.velocity == 0 && model.direction == -1)
    }

    @Test func theThumbDragsTheOffsetAndAJumpStopsMotion() {
        // Given a fling under way
        var model = ScrollModel()
        model.fling(velocity: 5_000)
        model.advance(dt: frame, layout: layout)
        // When the scrollbar thumb is taken 10 px below its top and dragged to the bottom of the window
        model.grabThumb(at: 10)
        model.dragThumb(to: 600, layout: layout)
        // Then the offset follows the thumb and the fling stopped
        #expect(model.offset == layout.offset(forThumbTop: 590))
        #expect(model.velocity == 0 && model.isMoving)
        model.releaseThumb()
        #expect(!model.isMoving)
        // And a jump past the end is clamped
        model.jump(to: 1e9, layout: layout)
        #expect(model.offset == layout.maxOffset && model.isAtRest)
    }

    @Test func cellsAreNotBoundWhileTheScrollJumpsMoreThanAScreenAFrame() {
        // Given a grid at rest, bound at the top
        var model = ScrollModel()
        let atTop = model.shouldBindCells(layout: layout)
        // When the thumb is dragged several screens in one frame
        model.grabThumb(at: 0)
        model.dragThumb(to: 300, layout: layout)
        let afterJump = model.shouldBindCells(layout: layout)
        model.dragThumb(to: 301, layout: layout)
        let afterStep = model.shouldBindCells(layout: layout)
        // Then that frame binds nothing, and the next one, a little further, does
        #expect(atTop && !afterJump && afterStep)
        // And a jump at rest binds at once, however far
        model.releaseThumb()
        model.jump(to: 0, layout: layout)
        let atRest = model.shouldBindCells(layout: layout)
        #expect(atRest)
    }
}
