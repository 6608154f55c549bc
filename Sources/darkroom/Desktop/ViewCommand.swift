import ArgumentParser
import DarkroomImage
import DarkroomSupport
import DarkroomViewer

/// `darkroom view [DIR]`: the photo browser window.
struct ViewCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "view",
        abstract: "Browse a folder of images in a window: a scrolling grid of thumbnails and a large view.",
        discussion: """
            Keys: arrows move the selection, Page Up/Down and Home/End jump, Return (or a click) opens the image \
            large, arrows step through, Escape returns, q quits. Wheel, trackpad and the scrollbar scroll.
            Needs a display (X11 or Wayland through SDL2); under Xvfb for unattended runs.
            """)

    @Argument(help: "A folder (searched recursively) or one image.") var folder = "."
    @Option(help: "Window width in points.") var width = 1280
    @Option(help: "Window height in points.") var height = 800
    @Option(help: "Thumbnail side in points.") var cellSize = 180
    @Option(help: "Pixels per point (default: the display's, else DARKROOM_SCALE or GDK_SCALE).") var scale: Double?
    @Option(help: "Frames per second to aim at (the drawing thread's budget is 1/fps); 0: the display's rate.")
    var fps = 120.0
    @Option(help: "Replay a script of scrolls, keys and screenshots, then quit.") var script: String?
    @Option(help: "Write every frame's time and placeholder count to this JSON file on quitting.") var stats: String?
    @Option(help: "Save what the window shows to this PNG file on quitting.") var screenshot: String?
    @Option(help: "The viewer's cache folder (image tables, placeholders).") var cacheDir: String?
    @Flag(help: "Keep no image table (every visit decodes).") var noTable = false
    @Flag(help: "Do not read the desktop's thumbnail cache (~/.cache/thumbnails).") var noDesktopThumbnails = false
    @Flag(help: "Do not show a photo's embedded (EXIF or HEIF) thumbnail while its own thumbnail decodes.")
    var noEmbeddedThumbnails = false
    @Option(help: "The desktop thumbnail cache's folder (default: $XDG_CACHE_HOME/thumbnails or ~/.cache/thumbnails).")
    var desktopThumbnails: String?
    @Option(help: "Most thumbnails the image table keeps.") var tableEntries = 20_000
    @Option(help: "Memory cache limit, MiB.") var memoryMb = 256
    @Option(help: "Decoding threads (default: active cores).") var decodeThreads: Int?
    @OptionGroup var decoding: DecodingOptions
    @Option(help: "How long the first frame may wait for the first screen's cached images, seconds (0-5).")
    var firstScreenWait = ViewerOptions(root: "").firstScreenWait
    @Option(help: "Nice value (0-19) of the decoding threads, above the drawing thread's 0.") var decodeNiceness:
        Int32 = ViewerOptions(root: "").decodeNiceness
    @Option(help: "Screens of rows prefetched ahead of the scroll.") var prefetchScreens = 3.0
    @Option(help: "pipeline (the library) or naive (decode on the drawing thread, for comparison).")
    var strategy = "pipeline"
    @Option(help: "SDL render driver (software, opengl; default: SDL's choice).") var renderer: String?
    @Option(help: "Quit after this many seconds.") var maxSeconds: Double?
    @Option(help: "Seconds quitting waits for thumbnails still being written to the image table (0: none).")
    var quitWriteWait = 5.0

    func validate() throws {
        guard ViewerOptions.Strategy(rawValue: strategy) != nil else {
            throw ValidationError("--strategy must be pipeline or naive")
        }
    }

    func run() throws {
        var options = ViewerOptions(root: folder)
        options.width = width
        options.height = height
        options.cellPoints = cellSize
        options.scale = scale
        options.fps = fps
        options.scriptFile = script
        options.quitWriteWait = quitWriteWait
        options.statsFile = stats
        options.screenshotFile = screenshot
        options.cacheDirectory = cacheDir
        options.useTables = !noTable
        options.useDesktopThumbnails = !noDesktopThumbnails
        options.useEmbeddedThumbnails = !noEmbeddedThumbnails
        options.desktopThumbnailRoot = desktopThumbnails
        options.tableEntries = tableEntries
        options.memoryCacheMiB = memoryMb
        options.decodeThreads = decodeThreads
        // One worker per decoding thread, and one for the pipeline's preview lane (embedded thumbnails) when it is used
        let workers = (decodeThreads ?? ProcessStats.activeCores) + (noEmbeddedThumbnails ? 0 : 1)
        options.decodeIsolation = try decoding.decoder(workers: workers, niceness: decodeNiceness).isolation
        options.prefetchScreens = prefetchScreens
        options.decodeNiceness = decodeNiceness
        options.firstScreenWait = firstScreenWait
        options.strategy = ViewerOptions.Strategy(rawValue: strategy)!
        options.renderer = renderer
        options.maxSeconds = maxSeconds
        let viewer = try Viewer(options: options)
        try viewer.run()
    }
}
