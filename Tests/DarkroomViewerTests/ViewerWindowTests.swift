import DarkroomDesktop
import DarkroomImage
import DarkroomTestSupport
import DarkroomVideo
import Foundation
import Testing

@testable import DarkroomViewer

/// `darkroom view` driven by scripts under Xvfb, checked by what it drew (screenshots) and its frame record.
@Suite(.serialized) struct ViewerWindowTests {
    /// The scroll offsets of the frames that saved screenshots, in order.
    static func screenshotOffsets(_ stats: [String: Any]) -> [Double] {
        let frames = stats["frameRecord"] as? [[String: Any]] ?? []
        return frames.filter { $0["screenshot"] as? Bool == true }.compactMap { $0["offset"] as? Double }
    }

    static func pipeline(_ stats: [String: Any], _ key: String) -> Int {
        (stats["pipeline"] as? [String: Any])?[key] as? Int ?? -1
    }

    @Test func theGridShowsEveryImageInItsCellAndReusedCellsNeverShowAStaleOne() throws {
        // Given 60 solid-colour images (the window shows 42 cells)
        let harness = try ViewerHarness("grid")
        defer { harness.work.remove() }
        try harness.writeSolidImages(60)
        // When the viewer settles, jumps to the end (cells from the top are reused below), opens the last image
        let stats = try harness.run(
            """
            settle 20
            screenshot \(harness.work.file("top.png"))
            key End
            settle 20
            screenshot \(harness.work.file("end.png"))
            key Return
            settle 20
            screenshot \(harness.work.file("large.png"))
            key Escape
            """)
        let offsets = Self.screenshotOffsets(stats)
        try #require(offsets.count == 3)
        let layout = ViewerHarness.layout(count: 60)
        // Then every whole cell on screen shows its own image, at the top and at the end
        let top = try harness.screenshot("top.png")
        #expect(top.width == ViewerHarness.width && top.height == ViewerHarness.height)
        #expect(offsets[0] == 0)
        #expect(ViewerHarness.wrongCells(top, layout: layout, offset: 0).isEmpty)
        let end = try harness.screenshot("end.png")
        #expect(offsets[1] == layout.maxOffset)
        #expect(ViewerHarness.wrongCells(end, layout: layout, offset: offsets[1]).isEmpty)
        // And the large view shows the last image in the window's middle, black around it (320×240 is not enlarged)
        let large = try harness.screenshot("large.png")
        #expect(ViewerHarness.close(ViewerHarness.pixel(large, 400, 300), ViewerHarness.color(59)))
        #expect(ViewerHarness.close(ViewerHarness.pixel(large, 400 - 165, 300), (0, 0, 0), 0))
        #expect(ViewerHarness.close(ViewerHarness.pixel(large, 400 - 155, 300), ViewerHarness.color(59)))
        // And each image was decoded once: the grid's 60 thumbnails, the large one and its neighbour (prefetched for
        // the next step); nothing failed
        #expect(Self.pipeline(stats, "decodes") == 62)
        #expect(Self.pipeline(stats, "failures") == 0)
        #expect(stats["images"] as? Int == 60)
        #expect((stats["frames"] as? Int ?? 0) > 10)
    }

    @Test func aSecondVisitDrawsFromTheImageTableWithoutDecoding() throws {
        // Given a folder viewed once to the end
        let harness = try ViewerHarness("warm")
        defer { harness.work.remove() }
        try harness.writeSolidImages(60)
        let script = "settle 20\nkey End\nsettle 20\nscreenshot \(harness.work.file("end.png"))\n"
        let cold = try harness.run(script)
        #expect(Self.pipeline(cold, "decodes") == 60)
        // When it is viewed again (a new process, the same cache folder)
        let warm = try harness.run(script)
        // Then nothing is decoded: every thumbnail comes from the table, and they are the right ones
        #expect(Self.pipeline(warm, "decodes") == 0)
        #expect(Self.pipeline(warm, "tableHits") >= 42)
        let layout = ViewerHarness.layout(count: 60)
        #expect(
            ViewerHarness.wrongCells(try harness.screenshot("end.png"), layout: layout, offset: layout.maxOffset)
                .isEmpty)
        // And no frame drew a placeholder, the first included (it waits for the table's answers, a millisecond or two)
        let frames = warm["frameRecord"] as? [[String: Any]] ?? []
        #expect(frames.count > 10)
        #expect(frames.allSatisfy { ($0["placeholders"] as? Int) == 0 })
    }

    @Test func quittingRightAfterAScrollLeavesEveryDecodedThumbnailInTheTable() throws {
        // Given 300 images never viewed
        let harness = try ViewerHarness("quit")
        defer { harness.work.remove() }
        try harness.writeSolidImages(300)
        // When a fast scroll is followed at once by quitting
        let stats = try harness.run("scroll 6000 1.5\nquit\n")
        // Then the table writes still queued at the quit were finished before the process ended
        #expect(stats["cacheWritesFinished"] as? Bool == true, "\(stats["cacheWritesPendingAtQuit"] ?? "-")")
        // And the table holds every thumbnail the run queued for it (the next visit decodes none of them again)
        let decodes = Self.pipeline(stats, "decodes")
        let queued = Self.pipeline(stats, "tableWrites")
        let table = try #require(
            try FileManager.default.contentsOfDirectory(atPath: harness.cache).first { $0.hasSuffix(".table") })
        let listed = try ReferenceTool.run(
            try SamplePhotos.darkroomBinary(), ["table", "list", "--table", harness.cache + "/" + table])
        let entries = String(decoding: listed, as: UTF8.self).split(separator: "\n").count
        print(
            "quit at once: \(decodes) decodes, \(queued) table writes queued, \(entries) table entries, "
                + "\(stats["cacheWritesPendingAtQuit"] ?? "-") writes pending at the quit")
        #expect(queued > 42 && entries == queued, "\(entries) entries for \(queued) writes queued")
    }

    @Test func coldCellsReadTheDesktopsThumbnailsWhenValid() throws {
        // Given 60 images whose desktop thumbnails (freedesktop.org `large`) were written by `thumbnail-cache fill`,
        // and image 0's replaced by a valid thumbnail of another colour (so its use shows on screen)
        let harness = try ViewerHarness("desktop")
        defer { harness.work.remove() }
        try harness.writeSolidImages(60)
        _ = try ReferenceTool.runDetached(
            try SamplePhotos.darkroomBinary(),
            ["thumbnail-cache", "fill", harness.folder, "--cache-dir", harness.desktop, "--size", "large"])
        let marker = try Bitmap(width: 200, height: 150, format: .rgba8, isOpaque: true)
        for y in 0..<150 {
            let row = marker.row(y).assumingMemoryBound(to: UInt8.self)
            for x in 0..<200 { (row[4 * x], row[4 * x + 1], row[4 * x + 2], row[4 * x + 3]) = (250, 250, 250, 255) }
        }
        let cache = DesktopThumbnailCache(root: harness.desktop)
        try cache.store(marker, for: "\(harness.folder)/img000.png", size: .large, mimeType: "image/png")
        // And image 1 given the marker too, then made stale (its file touched since)
        try cache.store(marker, for: "\(harness.folder)/img001.png", size: .large, mimeType: "image/png")
        let later = Date().addingTimeInterval(5)
        try FileManager.default.setAttributes([.modificationDate: later], ofItemAtPath: "\(harness.folder)/img001.png")
        // When the viewer shows the first screen (allowed to wait for the desktop's thumbnails however loaded the
        // machine running the tests is; it starts as soon as they are known)
        let stats = try harness.run(
            "settle 20\nscreenshot \(harness.work.file("shot.png"))\n", extra: ["--first-screen-wait", "5"])
        // Then the first screen came from the desktop's thumbnails: image 0 is the marker, image 1 (stale marker) its
        // own colour, every other cell its own colour
        let layout = ViewerHarness.layout(count: 60)
        let shot = try harness.screenshot("shot.png")
        #expect(ViewerHarness.wrongCells(shot, layout: layout, offset: 0) == [0])
        let first = layout.frame(of: 0, offset: 0)
        #expect(ViewerHarness.close(ViewerHarness.pixel(shot, first.x + 50, first.y + 50), (250, 250, 250)))
        let used = stats["desktopThumbnailsUsed"] as? Int ?? 0
        let visible = layout.visibleCells(offset: 0).count + layout.columns
        #expect(used >= visible - 1 && used <= 60)
    }

    @Test func coldCellsShowThePhotosOwnThumbnailUntilThePhotoIsDecoded() throws {
        // Given 30 large photos (solid colours, 6000 × 4000) whose EXIF thumbnails are a white marker, decoded on one
        // thread: the first screen needs about 30 full decodes and 30 thumbnail decodes
        let harness = try ViewerHarness("embedded")
        defer { harness.work.remove() }
        let colors = (0..<30).map { i in
            let c = ViewerHarness.color(i)
            return "\(c.r),\(c.g),\(c.b)"
        }
        _ = try PythonReference.run(
            """
            import runpy, sys
            from PIL import Image
            folder, tool = sys.argv[1], sys.argv[2]
            for i, color in enumerate(sys.argv[3:]):
                source = f"{folder}/source.jpg"
                Image.new("RGB", (6000, 4000), tuple(int(v) for v in color.split(","))).save(source, quality=90)
                sys.argv = [tool, source, f"{folder}/img{i:03}.jpg", "--fill", "250,250,250"]
                runpy.run_path(tool, run_name="__main__")
            """,
            [harness.folder, SamplePhotos.packageRoot.appendingPathComponent("scripts/add-exif-thumbnail.py").path]
                + colors)
        try FileManager.default.removeItem(atPath: harness.folder + "/source.jpg")
        // When the viewer shows the first screen until it settles
        let stats = try harness.run(
            "settle 30\nscreenshot \(harness.work.file("shot.png"))\n",
            extra: ["--decode-threads", "1", "--no-table"])
        // Then cells drew the photo's own thumbnail before the photo, no cell stayed grey, and once settled every
        // cell shows its photo (no marker left)
        let previewFirst = stats["cellsPreviewFirst"] as? Int ?? -1
        #expect(previewFirst > 0, "\(previewFirst) cells drew the embedded thumbnail first")
        #expect(stats["cellsLeftWithPreview"] as? Int == 0)
        let layout = ViewerHarness.layout(count: 30)
        #expect(ViewerHarness.wrongCells(try harness.screenshot("shot.png"), layout: layout, offset: 0) == [])
        // And with the previews turned off, none is drawn
        let off = try harness.run(
            "settle 30\n", extra: ["--decode-threads", "1", "--no-table", "--no-embedded-thumbnails"])
        #expect(off["cellsPreviewFirst"] as? Int == 0)
    }

    @Test func resizingReflowsAndTheScrollbarDrags() throws {
        // Given 60 images
        let harness = try ViewerHarness("resize")
        defer { harness.work.remove() }
        try harness.writeSolidImages(60)
        // When the window shrinks to 500×400, then the scrollbar's thumb is dragged to the bottom
        let stats = try harness.run(
            """
            settle 20
            resize 500 400
            settle 20
            screenshot \(harness.work.file("small.png"))
            drag 495 20 495 399 0.3
            settle 20
            screenshot \(harness.work.file("dragged.png"))
            """)
        let offsets = Self.screenshotOffsets(stats)
        try #require(offsets.count == 2)
        // Then the grid has 4 columns and still shows each image in its cell
        let layout = ViewerHarness.layout(count: 60, width: 500, height: 400)
        #expect(layout.columns == 4)
        let small = try harness.screenshot("small.png")
        #expect(small.width == 500 && small.height == 400)
        #expect(ViewerHarness.wrongCells(small, layout: layout, offset: offsets[0]).isEmpty)
        // And the drag took it to the end
        #expect(offsets[1] == layout.maxOffset)
        #expect(
            ViewerHarness.wrongCells(try harness.screenshot("dragged.png"), layout: layout, offset: offsets[1]).isEmpty)
    }

    @Test func animationsPlayInTheGridAndTheLargeView() throws {
        // Given an animated GIF of four solid frames (red, green, blue, yellow; 150 ms each) and one still
        let harness = try ViewerHarness("animation")
        defer { harness.work.remove() }
        let palette: [(UInt8, UInt8, UInt8)] = [(230, 20, 20), (20, 230, 20), (20, 20, 230), (230, 230, 20)]
        let frames = (0..<4).map {
            AnimationFiles.GIFFrame(
                width: 160, height: 120, indices: [UInt8](repeating: UInt8($0), count: 160 * 120), delay: 15)
        }
        try TemporaryDirectory.write(
            AnimationFiles.gif(width: 160, height: 120, palette: palette, frames: frames),
            to: "\(harness.folder)/a-anim.gif")
        try harness.writeSolidImages(1)
        // When the grid is captured twice 300 ms apart, then the large view twice
        _ = try harness.run(
            """
            settle 20
            wait 0.3
            screenshot \(harness.work.file("g1.png"))
            wait 0.3
            screenshot \(harness.work.file("g2.png"))
            key Return
            settle 20
            wait 0.3
            screenshot \(harness.work.file("l1.png"))
            wait 0.3
            screenshot \(harness.work.file("l2.png"))
            """)
        let layout = ViewerHarness.layout(count: 2)
        let f = layout.frame(of: 0, offset: 0)
        func frameColor(_ name: String, _ x: Int, _ y: Int) throws -> Int? {
            let p = ViewerHarness.pixel(try harness.screenshot(name), x, y)
            return palette.firstIndex { ViewerHarness.close(p, ($0.0, $0.1, $0.2), 4) }
        }
        // Then each capture shows one of the frames, and the frame changed between captures
        let g1 = try frameColor("g1.png", f.x + f.width / 2, f.y + f.height / 2)
        let g2 = try frameColor("g2.png", f.x + f.width / 2, f.y + f.height / 2)
        #expect(g1 != nil && g2 != nil && g1 != g2)
        let l1 = try frameColor("l1.png", 400, 300)
        let l2 = try frameColor("l2.png", 400, 300)
        #expect(l1 != nil && l2 != nil && l1 != l2)
        // And the still beside it is itself
        let s = layout.frame(of: 1, offset: 0)
        #expect(
            ViewerHarness.close(
                ViewerHarness.pixel(try harness.screenshot("g1.png"), s.x + 50, s.y + 50), ViewerHarness.color(0)))
    }

    @Test func aVideosCellShowsItsPosterFrame() throws {
        // Given a clip (a pan across a photo) beside a still, and the clip's poster frame as the library decodes it
        let harness = try ViewerHarness("video")
        defer { harness.work.remove() }
        let clip = try MotionPhotoSamples.path("clip.mp4")
        try TemporaryDirectory.write(try FileBytes.read(clip), to: "\(harness.folder)/a-clip.mp4")
        try harness.writeSolidImages(1)
        let poster = try VideoDecoder().decode(
            fileAt: clip, options: DecodeOptions(geometry: CellBinder.cellGeometry(side: ViewerHarness.cell))
        ).bitmap
        // When the grid is shown
        _ = try harness.run(
            """
            settle 20
            screenshot \(harness.work.file("grid.png"))
            """)
        // Then the clip's cell shows its poster frame (the middle of the cell, pixel by pixel), the still its colour
        let shot = try harness.screenshot("grid.png")
        let layout = ViewerHarness.layout(count: 2)
        let f = layout.frame(of: 0, offset: 0)
        var worst = 0
        for dy in -20...20 {
            for dx in -20...20 {
                let seen = ViewerHarness.pixel(shot, f.x + f.width / 2 + dx, f.y + f.height / 2 + dy)
                let p =
                    poster.row(poster.height / 2 + dy).assumingMemoryBound(to: UInt8.self) + 4 * (poster.width / 2 + dx)
                worst = max(
                    worst, abs(Int(seen.r) - Int(p[2])), abs(Int(seen.g) - Int(p[1])), abs(Int(seen.b) - Int(p[0])))
            }
        }
        #expect(worst <= 12, "the clip's cell differs from its poster frame by up to \(worst) levels")
        let s = layout.frame(of: 1, offset: 0)
        #expect(ViewerHarness.close(ViewerHarness.pixel(shot, s.x + 50, s.y + 50), ViewerHarness.color(0)))
    }

    @Test func aDamagedFileIsAFailedCellAndBadInputIsATypedError() throws {
        // Given a damaged JPEG beside a good image
        let harness = try ViewerHarness("damaged")
        defer { harness.work.remove() }
        try harness.writeSolidImages(1)
        try TemporaryDirectory.write(
            [0xFF, 0xD8, 0xFF, 0xE0] + [UInt8](repeating: 7, count: 500), to: "\(harness.folder)/z-bad.jpg")
        // When the viewer settles
        let stats = try harness.run("settle 20\nscreenshot \(harness.work.file("shot.png"))\n")
        // Then the damaged cell is drawn in the failure colour and the good one is itself
        let layout = ViewerHarness.layout(count: 2)
        let shot = try harness.screenshot("shot.png")
        let bad = layout.frame(of: 1, offset: 0)
        #expect(ViewerHarness.close(ViewerHarness.pixel(shot, bad.x + 50, bad.y + 50), (90, 24, 28), 0))
        #expect(ViewerHarness.wrongCells(shot, layout: layout, offset: 0) == [1])
        #expect(Self.pipeline(stats, "failures") == 1)
        // And a missing folder or a bad script stops the tool with a typed error, not a crash
        for (arguments, message) in [
            (["view", harness.work.file("missing")], "io: no such folder or file"),
            (["view", harness.folder, "--script", harness.work.file("nope.txt")], "io: cannot read script"),
        ] {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: try SamplePhotos.darkroomBinary())
            process.arguments = arguments
            let errors = Pipe()
            process.standardError = errors
            try process.run()
            let text = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            #expect(process.terminationStatus != 0)
            #expect(text.contains(message), "\(text)")
        }
    }
}
