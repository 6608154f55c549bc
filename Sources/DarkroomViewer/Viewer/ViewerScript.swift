/// A scripted session for benchmarks and tests (`darkroom view --script FILE`): one step per line, run in order
/// on the drawing thread, through the same handlers as real input. `#` at the start of a line or after a space or
/// tab starts a comment (outside double quotes); `screenshot` takes the rest of its line as the file name, spaces
/// included, or a name in double quotes (which may hold ` #`).
///
/// ```
/// wait 0.5                  # seconds
/// settle 10                 # until no cell on screen shows a placeholder (at most 10 s)
/// scroll 5000 10            # scroll down at 5000 px/s for 10 s (negative: up)
/// fling 9000                # let go at 9000 px/s; the scroll decelerates; the step ends when it stops
/// key End                   # Up Down Left Right PageUp PageDown Home End Return Escape
/// wheel -3                  # wheel notches (negative: toward the user, scrolls down)
/// click 200 150             # left click at a point (window points)
/// drag 1275 10 1275 700 1   # press, move over 1 s, release (the scrollbar's thumb, say)
/// resize 900 600            # the window's new size in points
/// screenshot FILE.png       # what the window shows now (`screenshot shots/grid 1.png`, `screenshot "a #1.png"`)
/// quit
/// ```
/// A script ends the viewer after its last step.
struct ViewerScript: Sendable, Equatable {
    enum Step: Sendable, Equatable {
        case wait(Double)
        case settle(timeout: Double)
        case scroll(velocity: Double, seconds: Double)
        case fling(velocity: Double)
        case key(Key)
        case wheel(Double)
        case click(x: Double, y: Double)
        case drag(x0: Double, y0: Double, x1: Double, y1: Double, seconds: Double)
        case resize(width: Int, height: Int)
        case screenshot(String)
        case quit
    }

    var steps: [Step]

    /// Parses a script.
    /// - Throws: ``ViewerError`` `script` naming the first line it cannot read.
    init(parsing text: String) throws(ViewerError) {
        var steps: [Step] = []
        for (number, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = Self.withoutComment(raw)
            let words = line.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
            guard let verb = words.first else { continue }
            let args = Array(words.dropFirst())
            func fail(_ why: String) -> ViewerError {
                ViewerError(.script, "line \(number + 1) (\(raw.trimmingSpaces)): \(why)")
            }
            func numbers(_ count: Int) throws(ViewerError) -> [Double] {
                let values = args.compactMap(Double.init)
                guard values.count == args.count, values.count == count, values.allSatisfy(\.isFinite) else {
                    throw fail("expected \(count) number\(count == 1 ? "" : "s")")
                }
                return values
            }
            switch verb {
            case "wait": steps.append(.wait(max(0, try numbers(1)[0])))
            case "settle": steps.append(.settle(timeout: args.isEmpty ? 30 : max(0, try numbers(1)[0])))
            case "scroll":
                let n = try numbers(2)
                steps.append(.scroll(velocity: n[0], seconds: max(0, n[1])))
            case "fling": steps.append(.fling(velocity: try numbers(1)[0]))
            case "key":
                guard args.count == 1, let key = Key(rawValue: args[0]) else {
                    throw fail("expected one of \(Key.allCases.map(\.rawValue).joined(separator: " "))")
                }
                steps.append(.key(key))
            case "wheel": steps.append(.wheel(try numbers(1)[0]))
            case "click":
                let n = try numbers(2)
                steps.append(.click(x: n[0], y: n[1]))
            case "drag":
                let n = try numbers(5)
                steps.append(.drag(x0: n[0], y0: n[1], x1: n[2], y1: n[3], seconds: max(0, n[4])))
            case "resize":
                let n = try numbers(2)
                guard n[0] >= 64, n[1] >= 64, n[0] <= 16384, n[1] <= 16384 else { throw fail("size out of 64…16384") }
                steps.append(.resize(width: Int(n[0]), height: Int(n[1])))
            case "screenshot":
                var name = line.trimmingSpaces.dropFirst(verb.count).trimmingSpaces.trimmingTrailingSpaces
                if name.first == "\"" {
                    guard name.count >= 2, name.last == "\"" else { throw fail("the quoted file name is not closed") }
                    name = name.dropFirst().dropLast()
                }
                guard !name.isEmpty else { throw fail("expected a file name") }
                steps.append(.screenshot(String(name)))
            case "quit": steps.append(.quit)
            default: throw fail("unknown step '\(verb)'")
            }
        }
        self.steps = steps
    }

    /// `line` up to its comment: a `#` that begins the line or follows a space or tab, outside double quotes.
    static func withoutComment(_ line: Substring) -> Substring {
        var quoted = false
        var previous: Character = " "
        for index in line.indices {
            let c = line[index]
            if c == "\"" { quoted.toggle() }
            if c == "#", !quoted, previous == " " || previous == "\t" { return line[..<index] }
            previous = c
        }
        return line
    }
}

extension Substring {
    fileprivate var trimmingSpaces: Substring {
        drop(while: { $0 == " " || $0 == "\t" })
    }

    fileprivate var trimmingTrailingSpaces: Substring {
        var end = endIndex
        while end > startIndex, [" ", "\t", "\r"].contains(self[index(before: end)]) { end = index(before: end) }
        return self[..<end]
    }
}
