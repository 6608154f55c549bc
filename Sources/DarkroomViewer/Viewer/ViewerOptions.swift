import DarkroomImage
import Foundation

/// How `darkroom view` runs: the folder, the window, the grid's thumbnail size, the caches and the scripted-run
/// outputs. A value type; every limit has a safe default.
public struct ViewerOptions: Sendable {
    /// How cells get their images.
    public enum Strategy: String, Sendable, CaseIterable {
        /// The library as designed: the pipeline decodes on its own threads at the cell's size, visible cells
        /// first, prefetching in the scroll direction, cancelling what scrolled away; memory cache and image table.
        case pipeline
        /// For comparison only: each cell decoded at its size on the drawing thread when it is bound, no caches
        /// (what an app does without a pipeline).
        case naive
    }

    /// The folder (or one file) to show.
    public var root: String
    /// The window's size in points. Default 1280 × 800.
    public var width = 1280
    public var height = 800
    /// Thumbnail side in points (times the scale factor in pixels). Default 180.
    public var cellPoints = 180
    /// Pixels per point; nil: the display's (drawable ÷ window), else `DARKROOM_SCALE` or `GDK_SCALE`.
    public var scale: Double?
    /// Frames per second the drawing thread aims at (its budget is 1/fps). Default 120; 0: the display's refresh
    /// rate (120 when the display does not report one).
    public var fps = 120.0
    /// How long the first frame may wait for the first screen's memory-cache and image-table hits (a warm start
    /// then never flashes placeholders; a cold one shows them after this). Default 0.1 s.
    public var firstScreenWait = 0.1
    /// How long quitting waits for thumbnails still being written to the image table (written at low priority after
    /// they are shown), so the next visit finds every thumbnail this one decoded. Default 5 s; 0 quits at once.
    public var quitWriteWait = 5.0
    /// A script to replay (``ViewerScript``); the viewer quits after its last step.
    public var scriptFile: String?
    /// Where to write the frame record (JSON) when the viewer quits.
    public var statsFile: String?
    /// Where to save what the window shows when the viewer quits (PNG).
    public var screenshotFile: String?
    /// The viewer's own cache folder (image tables, placeholders); nil: `$XDG_CACHE_HOME/darkroom/view` or
    /// `~/.cache/darkroom/view`.
    public var cacheDirectory: String?
    /// Whether grid thumbnails are kept in an image table on disk (a second visit draws from it). Default true.
    public var useTables = true
    /// Whether cold cells are read from the desktop's thumbnail cache (freedesktop.org) when it holds a valid
    /// thumbnail large enough. Default true.
    public var useDesktopThumbnails = true
    /// Whether a cell shows the photo's own embedded thumbnail (a camera JPEG's EXIF thumbnail, a HEIF thumbnail
    /// item) while its thumbnail decodes, when the photo has one of its shape. Default true.
    public var useEmbeddedThumbnails = true
    /// The desktop thumbnail cache's folder; nil: `$XDG_CACHE_HOME/thumbnails` or `~/.cache/thumbnails`.
    public var desktopThumbnailRoot: String?
    /// Most thumbnails the table keeps (least recently used go first). Default 20,000.
    public var tableEntries = 20_000
    /// The memory cache's limit, MiB. Default 256.
    public var memoryCacheMiB = 256
    /// Decoding threads; nil: the active cores.
    public var decodeThreads: Int?
    /// Where the grid's decodes run (DarkroomWorkers' `DecodeWorkerPool`: confined worker processes); nil decodes
    /// in this process. `darkroom view` isolates them unless `--in-process`. Default nil.
    public var decodeIsolation: (any DecodeIsolation)?
    /// The nice value of the pipeline's threads (0…19): above the drawing thread's 0, so decoding never takes a
    /// core the next frame needs. Default 10: higher values start fewer frames late on an otherwise idle machine,
    /// but starve the thumbnails whenever another program keeps the cores busy.
    public var decodeNiceness: Int32 = 10
    /// Screens' worth of rows prefetched ahead in the scroll direction. Default 3.
    public var prefetchScreens = 3.0
    /// Frame buffer budget of each playing animation, MiB. Default 4.
    public var animationBudgetMiB = 4
    /// How cells get their images. Default ``Strategy/pipeline``.
    public var strategy = Strategy.pipeline
    /// An SDL render driver (`software`, `opengl`); nil lets SDL choose.
    public var renderer: String?
    /// Quit after this many seconds (a guard for unattended runs); nil: never.
    public var maxSeconds: Double?

    /// Options for `root` with every default.
    public init(root: String) { self.root = root }

    /// The cache folder used when ``cacheDirectory`` is nil.
    public static var defaultCacheDirectory: String {
        let environment = ProcessInfo.processInfo.environment
        if let xdg = environment["XDG_CACHE_HOME"], xdg.hasPrefix("/") { return xdg + "/darkroom/view" }
        return (environment["HOME"] ?? NSHomeDirectory()) + "/.cache/darkroom/view"
    }

    func validate() throws(ViewerError) {
        func check(_ ok: Bool, _ what: String) throws(ViewerError) {
            if !ok { throw ViewerError(.invalidArgument, what) }
        }
        try check((64...16384).contains(width) && (64...16384).contains(height), "window size must be 64…16384")
        try check((16...1024).contains(cellPoints), "cell size must be 16…1024 points")
        try check(scale.map { (0.5...8).contains($0) } ?? true, "scale must be 0.5…8")
        try check(fps == 0 || (1...1000).contains(fps), "fps must be 1…1000, or 0 for the display's rate")
        try check((0...5).contains(firstScreenWait), "first-screen wait must be 0…5 s")
        try check((0...60).contains(quitWriteWait), "quit write wait must be 0…60 s")
        try check((1...1_000_000).contains(tableEntries), "table entries must be 1…1,000,000")
        try check((16...65536).contains(memoryCacheMiB), "memory cache must be 16…65536 MiB")
        try check(decodeThreads.map { (1...256).contains($0) } ?? true, "decode threads must be 1…256")
        try check((0...19).contains(decodeNiceness), "decode niceness must be 0…19")
        try check((0...50).contains(prefetchScreens), "prefetch screens must be 0…50")
        try check((1...1024).contains(animationBudgetMiB), "animation budget must be 1…1024 MiB")
    }
}
