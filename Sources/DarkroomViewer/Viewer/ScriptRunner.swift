/// Plays a ``ViewerScript`` on the drawing thread, one frame at a time, through the viewer's own input handlers.
struct ScriptRunner {
    private let steps: [ViewerScript.Step]
    private var index = 0
    private var stepStart: Double?

    init(_ script: ViewerScript) { steps = script.steps }

    /// Advances the current step at frame time `now`; quits the viewer after the last one.
    mutating func step(_ viewer: Viewer, now: Double) {
        guard index < steps.count else {
            viewer.running = false
            return
        }
        let started = stepStart ?? now
        let entering = stepStart == nil
        stepStart = started
        let elapsed = now - started
        var done = true
        switch steps[index] {
        case .wait(let seconds): done = elapsed >= seconds
        case .settle(let timeout):
            done = viewer.isSettled || elapsed >= timeout
            if done { viewer.recorder.recordSettle(seconds: elapsed) }
        case .scroll(let velocity, let seconds):
            viewer.scroll.setScriptVelocity(velocity)
            done = elapsed >= seconds
            if done { viewer.scroll.setScriptVelocity(nil) }
        case .fling(let velocity):
            if entering { viewer.scroll.fling(velocity: velocity) }
            done = viewer.scroll.velocity == 0
        case .key(let key): viewer.handle(.key(key))
        case .wheel(let dy): viewer.handle(.wheel(dy: dy))
        case .click(let x, let y):
            viewer.handle(.mouseDown(x: x, y: y, clicks: 1))
            viewer.handle(.mouseUp(x: x, y: y))
        case .drag(let x0, let y0, let x1, let y1, let seconds):
            if entering { viewer.handle(.mouseDown(x: x0, y: y0, clicks: 1)) }
            let f = seconds > 0 ? min(1, elapsed / seconds) : 1
            viewer.handle(.mouseMoved(x: x0 + (x1 - x0) * f, y: y0 + (y1 - y0) * f))
            done = f >= 1
            if done { viewer.handle(.mouseUp(x: x1, y: y1)) }
        case .resize(let width, let height):
            viewer.window.resize(width: width, height: height)
            viewer.handleResize()
        case .screenshot(let file): viewer.pendingScreenshot = file
        case .quit: viewer.running = false
        }
        if done {
            index += 1
            stepStart = nil
        }
    }
}

extension Viewer {
    /// Nothing moves and nothing on screen waits for an image: the scan is over, the scroll has stopped, and no
    /// placeholder was drawn last frame (what a script's `settle` waits for).
    var isSettled: Bool {
        guard scanFinished, lastPlaceholders == 0, scroll.isAtRest else {
            return false
        }
        if let large { return large.hasImage || large.failed }
        return true
    }
}
