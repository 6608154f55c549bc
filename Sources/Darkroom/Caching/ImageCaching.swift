import DarkroomImage

/// A decoded image as the caches hold it: the bitmap and the facts read from the source's header.
public struct ImageContainer: Sendable {
    /// The pixels, at the requested size, processed.
    public var bitmap: Bitmap
    /// The source's header facts (format, original size, orientation), when the image was decoded here.
    public var probe: ImageProbe?
    /// Whether this is a low-quality preview decoded from part of the bytes.
    public var isPreview: Bool
    /// The ICC profile the pixels are in, when decoded with `OutputColorSpace.original` and the source had one
    /// (an encoder writes it back out); nil for sRGB pixels.
    public var colorProfile: ColorProfile?
    /// The animation, for ``ImageRequest/Options/animated`` requests whose source has more than one frame.
    public var animation: AnimatedImage?

    /// Creates a container.
    public init(bitmap: Bitmap, probe: ImageProbe? = nil, isPreview: Bool = false, colorProfile: ColorProfile? = nil) {
        self.bitmap = bitmap
        self.probe = probe
        self.isPreview = isPreview
        self.colorProfile = colorProfile
    }

    /// Memory the pixels hold, in bytes (the memory cache's cost): the bitmap, and for an animation its bytes and
    /// its player's frame buffer budget.
    public var cost: Int { bitmap.cost + (animation?.cost ?? 0) }
}

/// The memory cache seam: decoded images by ``ImageCacheKey``.
///
/// The pipeline calls ``image(for:)`` synchronously on the caller's thread for its fast path, so an
/// implementation must answer in well under a microsecond and never block on I/O (a lock-protected LRU
/// such as DarkroomCache's `MemoryCache` fits).
public protocol ImageCaching: AnyObject, Sendable {
    /// The cached image, or `nil`. Counts as a use for eviction order.
    func image(for key: ImageCacheKey) -> ImageContainer?
    /// Stores an image; the cache may refuse or evict by ``ImageContainer/cost``.
    func store(_ image: ImageContainer, for key: ImageCacheKey)
    /// Removes an image.
    func removeImage(for key: ImageCacheKey)
}

/// One entry of a ``DataCaching``: the bytes and an opaque metadata blob the pipeline stores beside them
/// (HTTP validators and freshness for original data).
public struct CachedData: Sendable {
    /// The stored bytes.
    public var data: [UInt8]
    /// The metadata stored with them, if any.
    public var metadata: [UInt8]?

    /// Creates an entry.
    public init(data: [UInt8], metadata: [UInt8]? = nil) {
        self.data = data
        self.metadata = metadata
    }
}

/// The disk cache seam: encoded bytes by string key (original data under `o|…` keys, processed images under
/// `p|…` keys).
///
/// Calls may block on disk; the pipeline makes them only on its own I/O threads, never on the caller's thread or
/// Swift's cooperative pool. DarkroomCache's `DiskCache` fits.
public protocol DataCaching: Sendable {
    /// The entry for `key`, or `nil`.
    func cachedData(forKey key: String) -> CachedData?
    /// Stores (or replaces) an entry. Failures are the cache's to log; the pipeline carries on without it.
    func storeData(_ data: [UInt8], metadata: [UInt8]?, forKey key: String)
    /// Removes an entry.
    func removeData(forKey key: String)
}

/// The image-table seam (DarkroomTables): fixed-size, display-ready bitmaps by entity and output geometry.
///
/// Asked for requests whose ``ImageRequest/geometry`` it ``holds(_:)``, after the memory cache and before the disk
/// cache; reads and stores may block briefly and run on the pipeline's I/O threads.
public protocol ImageTableCaching: Sendable {
    /// Whether there is a table for `geometry`; asked on the calling thread, so it must be cheap (a lookup).
    func holds(_ geometry: OutputGeometry) -> Bool
    /// The bitmap stored for `entity` in the table of `geometry`, or `nil`.
    func image(forEntity entity: String, geometry: OutputGeometry) -> Bitmap?
    /// Stores `bitmap` for `entity` in the table of `geometry` (the table may refuse it).
    func store(_ bitmap: Bitmap, forEntity entity: String, geometry: OutputGeometry)
}
