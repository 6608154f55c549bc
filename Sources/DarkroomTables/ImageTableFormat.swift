import DarkroomImage

/// What every entry of one image table looks like: a name, a pixel size, a pixel format and how many entries the
/// table keeps. One table file per format.
///
/// Changing ``width``, ``height`` or ``pixelFormat`` (or Darkroom's table layout version) makes the next writable
/// open rebuild the table from empty; changing ``maximumCount`` keeps the entries (the least recently used are
/// evicted down to the new bound) and ``name`` is a label only.
public struct ImageTableFormat: Sendable, Hashable {
    /// A label for people and `darkroom table stats` (at most 255 UTF-8 bytes are stored).
    public var name: String
    /// Entry width in pixels, 1...16384. An entry may hold a smaller image (a `.fit` thumbnail of a tall photo).
    public var width: Int
    /// Entry height in pixels, 1...16384.
    public var height: Int
    /// The pixel format of every entry: `PixelFormat.bgra8Premultiplied` and `PixelFormat.gray8` are the
    /// usual ones; every `PixelFormat` works.
    public var pixelFormat: PixelFormat
    /// How many entries the table keeps, 1...1,000,000; when full, the least recently used unpinned entry is
    /// replaced. Pinned entries (a `Bitmap` from the table is alive) are never replaced, so the count can exceed
    /// this bound by the number of pinned entries, up to a hard limit of `2 × maximumCount + 64` slots.
    public var maximumCount: Int

    /// Creates a format; values are checked when a table is opened with it.
    public init(
        name: String, width: Int, height: Int, pixelFormat: PixelFormat = .bgra8Premultiplied,
        maximumCount: Int
    ) {
        self.name = name
        self.width = width
        self.height = height
        self.pixelFormat = pixelFormat
        self.maximumCount = maximumCount
    }

    /// The format of a table that holds images decoded with `geometry`: entries as large as the geometry's box
    /// (`TargetSize.bounds`) in its exact pixel format (`PixelFormat.bgra8Premultiplied` for
    /// `PixelFormatPreference.auto`). Stating the geometry once keeps a table and the requests it serves in step.
    /// - Throws: `.invalidArgument` for a geometry with no bound (`TargetSize.original`, `TargetSize.cover(width:height:)`).
    public init(name: String, geometry: OutputGeometry, maximumCount: Int) throws(ImageTableError) {
        guard let bounds = geometry.size.bounds else {
            throw ImageTableError(
                .invalidArgument, "an image table needs a bounded size (fit, fill, max…), got \(geometry.size.key)")
        }
        let pixelFormat: PixelFormat =
            switch geometry.pixelFormat {
            case .auto: .bgra8Premultiplied
            case .exactly(let format): format
            }
        self.init(
            name: name, width: bounds.width, height: bounds.height, pixelFormat: pixelFormat,
            maximumCount: maximumCount)
    }

    /// Whether every image decoded with `geometry` fits an entry of this format: the geometry's box within the entry
    /// and its pixel format this one's (or `PixelFormatPreference.auto`, converted on store).
    public func holds(_ geometry: OutputGeometry) -> Bool {
        guard let bounds = geometry.size.bounds, bounds.width <= width, bounds.height <= height else { return false }
        if case .exactly(let format) = geometry.pixelFormat { return format == pixelFormat }
        return true
    }

    /// The largest accepted side and count.
    static let maximumSide = 16_384
    static let maximumEntries = 1_000_000

    func validate() throws(ImageTableError) {
        guard (1...Self.maximumSide).contains(width), (1...Self.maximumSide).contains(height) else {
            throw ImageTableError(
                .invalidArgument, "format size must be 1...\(Self.maximumSide) on each side, got \(width)×\(height)")
        }
        guard (1...Self.maximumEntries).contains(maximumCount) else {
            throw ImageTableError(
                .invalidArgument, "maximumCount must be 1...\(Self.maximumEntries), got \(maximumCount)")
        }
    }
}

/// How `TableEntryWriter.decode(_:mode:decoder:options:)` fits an image into an entry's size.
public enum TableContentMode: String, Sendable, Hashable, CaseIterable {
    /// Scale to fit inside the entry, keeping aspect; the entry holds a smaller image on one side.
    case fit
    /// Scale to cover the entry and crop the center: the entry is filled exactly (unless the source is smaller).
    case fill
}
