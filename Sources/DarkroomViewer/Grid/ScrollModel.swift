import Foundation

/// The grid's scroll: where it is (``offset``, pixels from the top) and how it moves — the wheel's easing towards a
/// target, a fling's decay, a script's constant speed, a dragged scrollbar thumb. A value the drawing thread owns
/// and advances once a frame; it knows the grid only through the ``GridLayout`` passed in, so it is tested without a
/// window. Every call is O(1).
struct ScrollModel {
    /// Pixels per wheel notch (times the layout's scale factor).
    static let wheelStep = 96.0
    /// A fling's velocity decays as e^(−t/τ) (about a UIScrollView's normal deceleration).
    static let flingTimeConstant = 0.35
    /// A fling slower than this (pixels per second) stops.
    static let restingSpeed = 20.0
    /// The wheel's easing closes this share of the distance to its target per second (capped at all of it).
    static let easingRate = 18.0

    /// The scroll offset, pixels from the top, within the layout's range after every call.
    private(set) var offset = 0.0
    /// A fling's velocity, pixels per second (0 at rest).
    private(set) var velocity = 0.0
    /// A script's constant speed, pixels per second, while it scrolls.
    private(set) var scriptVelocity: Double?
    /// Where the wheel's easing is heading.
    private(set) var wheelTarget: Double?
    /// Where on the scrollbar thumb the pointer holds it, while dragging.
    private(set) var dragGrab: Double?
    /// The way the offset last moved: 1 down, −1 up (prefetching looks that way).
    private(set) var direction = 1
    private var lastOffset = 0.0
    /// The offset when cells were last bound.
    private var lastBindingOffset = 0.0

    /// How fast a script or a fling moves the offset now, pixels per second (positive down; 0 for the wheel's
    /// short easing and a dragged thumb, which stop as soon as the hand does).
    var speed: Double { scriptVelocity ?? velocity }
    /// Whether anything is moving the offset (wheel, fling, script or drag).
    var isMoving: Bool { wheelTarget != nil || velocity != 0 || scriptVelocity != nil || dragGrab != nil }

    /// Whether nothing will move the offset by itself (a held scrollbar does not count).
    var isAtRest: Bool { wheelTarget == nil && velocity == 0 && scriptVelocity == nil }

    /// Advances one frame of `dt` seconds: a script's constant speed, else a fling's decay, else the wheel's
    /// easing; then clamps to the layout (a clamped fling stops) and notes the direction.
    mutating func advance(dt: Double, layout: GridLayout) {
        if let v = scriptVelocity {
            offset += v * dt
            wheelTarget = nil
        } else if velocity != 0 {
            offset += velocity * dt
            velocity *= exp(-dt / Self.flingTimeConstant)
            if abs(velocity) < Self.restingSpeed { velocity = 0 }
        } else if let target = wheelTarget {
            let next = offset + (target - offset) * min(1, dt * Self.easingRate)
            offset = abs(target - next) < 0.5 ? target : next
            if offset == target { wheelTarget = nil }
        }
        let clamped = layout.clamped(offset)
        if clamped != offset {
            offset = clamped
            velocity = 0
        }
        if offset != lastOffset { direction = offset > lastOffset ? 1 : -1 }
        lastOffset = offset
    }

    /// `notches` wheel notches (positive: up), added to the target of an easing already under way.
    mutating func wheel(notches: Double, layout: GridLayout) {
        velocity = 0
        wheelTarget = layout.clamped((wheelTarget ?? offset) - notches * Self.wheelStep * layout.scale)
    }

    /// Scrolls smoothly to `target` (the wheel's easing), clamped to the layout.
    mutating func ease(to target: Double, layout: GridLayout) {
        velocity = 0
        wheelTarget = layout.clamped(target)
    }

    /// Where keyboard moves start from: the easing's target while one runs, else the offset.
    var destination: Double { wheelTarget ?? offset }

    /// Goes to `offset` at once (a reflow, closing the large view), stopping any motion.
    mutating func jump(to offset: Double, layout: GridLayout) {
        self.offset = layout.clamped(offset)
        wheelTarget = nil
        velocity = 0
    }

    /// A fling at `velocity` pixels per second, replacing any easing.
    mutating func fling(velocity: Double) {
        wheelTarget = nil
        self.velocity = velocity
    }

    /// A script's constant speed (nil: it ends).
    mutating func setScriptVelocity(_ velocity: Double?) { scriptVelocity = velocity }

    /// The pointer took the scrollbar thumb `grab` pixels below its top.
    mutating func grabThumb(at grab: Double) { dragGrab = grab }

    /// The pointer moved to `y` while holding the thumb: the offset follows it at once.
    mutating func dragThumb(to y: Double, layout: GridLayout) {
        guard let grab = dragGrab else { return }
        offset = layout.offset(forThumbTop: y - grab)
        wheelTarget = nil
        velocity = 0
    }

    /// The pointer let go of the thumb.
    mutating func releaseThumb() { dragGrab = nil }

    /// Whether cells should be bound this frame, noting the offset as bound at: not while the scroll jumps more
    /// than a screen a frame (Home/End, a dragged scrollbar, a wild fling) — those cells would be gone by the next
    /// frame, and starting and cancelling their work would only cost frames.
    mutating func shouldBindCells(layout: GridLayout) -> Bool {
        defer { lastBindingOffset = offset }
        return !(isMoving && abs(offset - lastBindingOffset) > Double(layout.height))
    }
}
