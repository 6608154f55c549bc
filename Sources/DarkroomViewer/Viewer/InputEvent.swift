/// Input the viewer reacts to, from the window or from a script (both go through the same handlers).
enum InputEvent: Sendable, Equatable {
    case quit
    /// The window changed size (the new size is read from the window).
    case resized
    /// Wheel or two-finger scroll: notches (fractions from a trackpad), positive away from the user (up).
    case wheel(dy: Double)
    case key(Key)
    /// Left button pressed at a point in window points; `clicks` 2 for a double click.
    case mouseDown(x: Double, y: Double, clicks: Int)
    case mouseUp(x: Double, y: Double)
    case mouseMoved(x: Double, y: Double)
}

/// The keys the viewer uses.
enum Key: String, Sendable, CaseIterable {
    case up = "Up"
    case down = "Down"
    case left = "Left"
    case right = "Right"
    case pageUp = "PageUp"
    case pageDown = "PageDown"
    case home = "Home"
    case end = "End"
    case enter = "Return"
    case escape = "Escape"
    case quit = "q"
}
