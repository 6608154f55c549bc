import Darkroom
import DarkroomCache
import DarkroomDesktop
import DarkroomImage
import DarkroomSupport
import DarkroomTables
import DarkroomVideo
import Dispatch
import Foundation

/// `darkroom view`: a window showing every image under a folder as a grid of thumbnails, and one image large.
///
/// One drawing thread (the caller of ``run()``) owns the window: each frame it takes input (or a script step),
/// moves the scroll, binds cells that came into view to pipeline requests, takes the images pipeline threads
/// delivered, uploads them to textures and draws. It never decodes, resamples or reads a file (with
/// ``ViewerOptions/Strategy/naive`` it does, on purpose, for comparison). Frames are paced at
/// ``ViewerOptions/fps``; every frame's work time and placeholder count go to ``FrameRecorder``.
///
/// What holds state of its own is a part that needs no window: ``ScrollModel``, ``CellBinder``, ``LargeView``,
/// ``FrameRecorder``, ``RSSSampler``. What is left here is the loop and its facets, a file each (input, drawing,
/// deliveries, the large view's window side), which share the window, the layout and the scroll.
public final class Viewer {
    let options: ViewerOptions
    let window: SDLWindow
    let pipeline: ImagePipeline
    let prefetcher: ImagePrefetcher
    let library: PhotoLibrary
    let placeholders: PlaceholderStore
    let desktop: DesktopThumbnails?
    let inbox = DeliveryInbox()
    /// Makes animation players (parsing an animation's header) off the drawing thread, at nice 10 like the pipeline.
    let helper = WorkQueue(name: "darkroom.view.helper", maxConcurrent: 1, idleTimeout: 30, niceness: 10)
    /// The image table's name, for the stats file; nil without a table.
    let tableName: String?
    /// The resident set size, once a second off the drawing thread.
    let rss = RSSSampler()

    var items: [LibraryItem] = []
    var scanFinished = false
    var layout: GridLayout
    var recorder: FrameRecorder

    /// Where the grid is scrolled and how it moves.
    var scroll = ScrollModel()

    /// Which cells are bound to which images.
    let binder: CellBinder
    /// The open image, when the large view is showing.
    var large: LargeView?
    var selected = 0

    // Loop state
    var running = true
    var script: ScriptRunner?
    var pendingScreenshot: String?
    /// Cells drawn last frame with a placeholder or a preview: what a script's `settle` waits to see at 0.
    var lastPlaceholders = 0
    var titleUpdatedAt = -1.0
    /// Texture uploads in the frame being made.
    var uploads = 0
    /// Cache writes still queued when quitting began, and whether they all finished within
    /// ``ViewerOptions/quitWriteWait`` (reported in the stats).
    var writesPendingAtQuit = 0
    var writesFinished = true
    /// Frames per second aimed at (the option, or the display's rate).
    let fps: Double

    /// Opens the window and starts scanning `options.root`.
    /// - Throws: ``ViewerError``: bad options, an unreadable script, no display.
    public init(options: ViewerOptions) throws(ViewerError) {
        try options.validate()
        self.options = options
        var scriptRunner: ScriptRunner?
        if let file = options.scriptFile {
            guard let data = FileManager.default.contents(atPath: file) else {
                throw ViewerError(.io, "cannot read script \(file)")
            }
            scriptRunner = ScriptRunner(try ViewerScript(parsing: String(decoding: data, as: UTF8.self)))
        }
        script = scriptRunner
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: options.root, isDirectory: &isDirectory) else {
            throw ViewerError(.io, "no such folder or file: \(options.root)")
        }
        window = try SDLWindow(
            title: "Darkroom — \(options.root)", width: options.width, height: options.height,
            renderer: options.renderer)
        let points = window.pointSize
        let pixels = window.pixelSize
        let scale = options.scale ?? Self.displayScale(points: points.width, pixels: pixels.width)
        layout = GridLayout(
            width: pixels.width, height: pixels.height, scale: scale, cellPoints: options.cellPoints, count: 0)
        fps = options.fps > 0 ? options.fps : window.displayRefreshRate ?? 120
        recorder = FrameRecorder(fps: fps)

        let cacheDirectory = options.cacheDirectory ?? ViewerOptions.defaultCacheDirectory
        try? FileManager.default.createDirectory(atPath: cacheDirectory, withIntermediateDirectories: true)
        var configuration = ImagePipeline.Configuration()
        configuration.imageCache = MemoryCache<ImageCacheKey, ImageContainer>(
            limits: MemoryCacheLimits(costLimit: options.memoryCacheMiB << 20))
        if let threads = options.decodeThreads { configuration.processingLimit = threads }
        configuration.threadNiceness = options.decodeNiceness
        configuration.defersTaskControl = true  // the drawing thread never waits on a decoding thread's lock
        configuration.animationBufferBytes = options.animationBudgetMiB << 20
        configuration.decoder = VideoDecoder.imageDecoder  // a video's cell shows its poster frame
        configuration.decoder.isolation = options.decodeIsolation
        var tableName: String?
        if options.useTables, options.strategy == .pipeline {
            let side = layout.side
            let geometry = CellBinder.cellGeometry(side: side)
            do {
                let format = try ImageTableFormat(
                    name: "grid-\(side)", geometry: geometry, maximumCount: options.tableEntries)
                let table = try ImageTable(path: "\(cacheDirectory)/grid-\(side).table", format: format)
                configuration.imageTables = try ImageTableSet([geometry: table])
                tableName = format.name
            } catch {
                FileHandle.standardError.write(Data("darkroom view: no image table (\(error))\n".utf8))
            }
        }
        self.tableName = tableName
        pipeline = ImagePipeline(configuration: configuration)
        prefetcher = ImagePrefetcher(pipeline: pipeline, maxConcurrent: max(2, configuration.processingLimit))
        placeholders = PlaceholderStore(file: "\(cacheDirectory)/placeholders.tsv")
        library = PhotoLibrary(root: options.root)
        desktop =
            options.useDesktopThumbnails && options.strategy == .pipeline
            ? DesktopThumbnails(
                side: layout.side, root: options.desktopThumbnailRoot ?? DesktopThumbnailCache.userRoot())
            : nil
        binder = CellBinder(
            pipeline: pipeline, prefetcher: prefetcher, placeholders: placeholders, desktop: desktop, inbox: inbox,
            strategy: options.strategy, prefetchScreens: options.prefetchScreens,
            embeddedThumbnails: options.useEmbeddedThumbnails)
        rss.start()
    }

    /// Pixels per point: the drawable's width over the window's, else `DARKROOM_SCALE` or `GDK_SCALE`, else 1.
    static func displayScale(points: Int, pixels: Int) -> Double {
        if points > 0, pixels > points { return Double(pixels) / Double(points) }
        let environment = ProcessInfo.processInfo.environment
        for name in ["DARKROOM_SCALE", "GDK_SCALE"] {
            if let value = environment[name].flatMap(Double.init), (0.5...8).contains(value) { return value }
        }
        return 1
    }

    /// Runs until the window closes, `q` is pressed, the script ends or ``ViewerOptions/maxSeconds`` pass; then
    /// writes the screenshot and the frame record if asked.
    /// - Throws: ``ViewerError`` `io` when the stats or screenshot file cannot be written.
    public func run() throws(ViewerError) {
        let period = 1 / fps
        var next = MonotonicClock.seconds()
        var last = next
        var exiting = false
        let runQueue = ThreadRunQueue()
        var queuedBefore = runQueue.waitedSeconds() ?? 0
        while true {
            let t0 = MonotonicClock.seconds()
            let cpu0 = MonotonicClock.threadCPUSeconds()
            let queued0 = runQueue.waitedSeconds() ?? 0
            let now = recorder.now
            let dt = min(0.1, t0 - last)
            last = t0
            for event in window.pollEvents() { handle(event) }
            if var runner = script {
                runner.step(self, now: now)
                script = runner
            }
            if let limit = options.maxSeconds, now >= limit { running = false }
            if !running, !exiting {
                exiting = true  // one more frame: the final screenshot shows a finished frame
                if pendingScreenshot == nil { pendingScreenshot = options.screenshotFile }
            }
            takeNewItems()
            scroll.advance(dt: dt, layout: layout)
            if recorder.frames.isEmpty { waitForFirstScreen() }
            if large == nil { updateBindings() }
            applyDeliveries()
            let (cells, placeholderCount, previewCount) = draw(now: now)
            let screenshot = pendingScreenshot != nil
            if let file = pendingScreenshot {
                pendingScreenshot = nil
                try saveScreenshot(file)
            }
            window.present()
            let t1 = MonotonicClock.seconds()
            let queued1 = runQueue.waitedSeconds() ?? 0
            recorder.record(
                .init(
                    t: now, ms: (t1 - t0) * 1000, cpuMs: (MonotonicClock.threadCPUSeconds() - cpu0) * 1000,
                    queuedMs: (queued1 - queued0) * 1000, startDelayMs: max(0, t0 - next) * 1000,
                    wakeQueuedMs: (queued0 - queuedBefore) * 1000, cells: cells, placeholders: placeholderCount,
                    previews: previewCount, offset: scroll.offset, screenshot: screenshot, uploads: uploads))
            queuedBefore = queued1
            uploads = 0
            lastPlaceholders = placeholderCount + previewCount
            if exiting { break }
            next += period
            if next < t1 { next = t1 }
            let wait = next - MonotonicClock.seconds()
            if wait > 0 { Thread.sleep(forTimeInterval: wait) }
        }
        shutDown()
        if let file = options.statsFile { try writeStats(file) }
    }

    /// Before the first frame: waits up to ``ViewerOptions/firstScreenWait`` for the first screen's cells to have
    /// their images delivered (memory-cache and image-table hits take a millisecond or two on the pipeline's I/O
    /// threads), as an app keeps its launch screen until its first content is ready. Nothing is decoded here.
    private func waitForFirstScreen() {
        guard options.strategy == .pipeline, options.firstScreenWait > 0 else { return }
        let deadline = MonotonicClock.seconds() + options.firstScreenWait
        let screenful = layout.columns * (layout.height / layout.rowHeight + 1)
        // The first screen's files, and the desktop thumbnails of every cell the first binding binds (the margin rows
        // too: one bound before its lookup is done decodes its file), known before any cell is bound. A scan that has
        // listed the screen but not yet its margin row is waited for, or that row's lookups would not be asked for.
        while MonotonicClock.seconds() < deadline {
            takeNewItems()
            let visible = layout.visibleCells(offset: scroll.offset)
            let bound = CellBinder.boundCells(visible: visible, layout: layout, count: items.count)
            let listed =
                scanFinished || (visible.count >= screenful && bound.upperBound >= visible.upperBound + layout.columns)
            if listed, desktop?.isDone(bound) ?? true { break }
            Thread.sleep(forTimeInterval: 0.001)
        }
        while MonotonicClock.seconds() < deadline {
            if !scanFinished { takeNewItems() }
            updateBindings()
            applyDeliveries()
            let visible = layout.visibleCells(offset: scroll.offset)
            if scanFinished || visible.count >= layout.columns * max(1, layout.height / layout.rowHeight) {
                if visible.allSatisfy({ binder.bound[$0].map { $0.image.hasImage || $0.failed } ?? false }) { return }
            }
            Thread.sleep(forTimeInterval: 0.001)
        }
    }

    private func takeNewItems() {
        guard !scanFinished else { return }
        let (newItems, finished) = library.items(after: items.count)
        if !newItems.isEmpty {
            items.append(contentsOf: newItems)
            desktop?.append(newItems)
            layout.count = items.count
            let now = recorder.now
            if finished || now - titleUpdatedAt > 0.25 {  // a title is a round trip to the X server
                titleUpdatedAt = now
                window.setTitle("Darkroom — \(options.root) — \(items.count) images\(finished ? "" : " (scanning)")")
            }
        } else if finished {
            window.setTitle("Darkroom — \(options.root) — \(items.count) images")
        }
        if finished, !scanFinished { recorder.recordScanFinished() }
        scanFinished = finished
    }

    private func shutDown() {
        writesPendingAtQuit = pipeline.pendingCacheWrites
        rss.stop()
        library.cancel()
        desktop?.stop()
        prefetcher.stopPrefetching()
        binder.unbindAll(recorder: &recorder)
        closeLarge()
        for cell in binder.cellsBySlot.values { cell.destroyTextures(window) }
        placeholders.save()
        // The thumbnails shown but not yet in the table: written before the process ends (within a bound)
        writesFinished = pipeline.waitForCacheWrites(timeout: options.quitWriteWait)
        if !writesFinished {
            let message =
                "darkroom view: \(pipeline.pendingCacheWrites) table writes unfinished after \(options.quitWriteWait) s\n"
            FileHandle.standardError.write(Data(message.utf8))
        }
    }

    private func saveScreenshot(_ file: String) throws(ViewerError) {
        let bitmap = try window.readPixels()
        do {
            let png = try ImageEncoder.encode(bitmap, as: .png)
            try Data(png).write(to: URL(fileURLWithPath: file))
        } catch {
            throw ViewerError(.io, "cannot write screenshot \(file)", underlying: error)
        }
    }

    private func writeStats(_ file: String) throws(ViewerError) {
        for sample in rss.samples { recorder.recordRSS(sample) }
        let statistics = pipeline.statistics
        let extra: [String: Any] = [
            "strategy": options.strategy.rawValue, "renderer": window.rendererName, "fps": fps,
            "window": ["width": layout.width, "height": layout.height, "scale": layout.scale],
            "thumbnailSide": layout.side, "columns": layout.columns, "images": items.count,
            "table": tableName ?? NSNull(), "desktopThumbnailsUsed": binder.desktopSources,
            "desktopLookups": desktop?.lookups ?? 0,
            "peakRSSMiB": Double(ProcessStats.peakRSSBytes) / 1_048_576,
            "cacheWritesPendingAtQuit": writesPendingAtQuit, "cacheWritesFinished": writesFinished,
            "pipeline": [
                "requests": statistics.requests, "memoryHits": statistics.memoryHits,
                "tableHits": statistics.tableHits, "decodes": statistics.decodes, "fileReads": statistics.fileReads,
                "tableWrites": statistics.tableWrites,
                "cancellations": statistics.cancellations, "failures": statistics.failures,
            ],
        ]
        do {
            try recorder.json(extra: extra).write(to: URL(fileURLWithPath: file))
        } catch {
            throw ViewerError(.io, "cannot write stats \(file)", underlying: error)
        }
    }
}
