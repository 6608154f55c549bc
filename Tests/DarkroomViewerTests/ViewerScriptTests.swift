import Testing

@testable import DarkroomViewer

@Suite struct ViewerScriptTests {
    @Test func everyStepParses() throws {
        // Given a script using every step, with comments and blank lines
        let script = try ViewerScript(
            parsing: """
                # a benchmark
                wait 0.5
                settle
                settle 10
                scroll 5000 10   # down
                fling -9000
                key End
                wheel -3
                click 200 150

                drag 1275 10 1275 700 1
                resize 900 600
                screenshot /tmp/grid.png
                quit
                """)
        // Then each line is one step, in order
        #expect(
            script.steps == [
                .wait(0.5), .settle(timeout: 30), .settle(timeout: 10), .scroll(velocity: 5000, seconds: 10),
                .fling(velocity: -9000), .key(.end), .wheel(-3), .click(x: 200, y: 150),
                .drag(x0: 1275, y0: 10, x1: 1275, y1: 700, seconds: 1), .resize(width: 900, height: 600),
                .screenshot("/tmp/grid.png"), .quit,
            ])
    }

    @Test(
        "screenshot takes the rest of its line, spaces and # included; a quoted name may hold ' #'",
        arguments: [
            ("screenshot shots/grid 1.png", "shots/grid 1.png"),
            ("screenshot  /tmp/my shots/#2.png   # the second", "/tmp/my shots/#2.png"),
            ("screenshot \"/tmp/a #1.png\"", "/tmp/a #1.png"),
            ("screenshot \"/tmp/q.png\"  # quoted", "/tmp/q.png"),
            ("screenshot /tmp/x.png\t", "/tmp/x.png"),
        ])
    func screenshotNames(line: String, name: String) throws {
        // Given a screenshot step, When it is parsed, Then the file name is kept whole
        #expect(try ViewerScript(parsing: line).steps == [.screenshot(name)])
    }

    @Test(arguments: [
        ("jump 3", "unknown step 'jump'"), ("scroll 100", "expected 2 numbers"), ("key Space", "expected one of"),
        ("wait soon", "expected 1 number"), ("resize 10 10", "size out of"), ("wait nan", "expected 1 number"),
        ("screenshot", "expected a file name"), ("screenshot \"/tmp/open.png", "not closed"),
    ])
    func badLinesAreNamed(line: String, why: String) {
        // Given a script whose second line is wrong
        // Then the error is a script error naming the line and the reason
        #expect {
            _ = try ViewerScript(parsing: "wait 1\n\(line)\n")
        } throws: { error in
            guard let error = error as? ViewerError else { return false }
            return error.code == .script && error.message.contains("line 2") && error.message.contains(why)
        }
    }
}
