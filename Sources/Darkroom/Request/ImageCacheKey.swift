import DarkroomImage

/// The key of a decoded, processed image in the memory cache: the source's key, the target size, the pixel
/// format preference and the processors' identifiers. Hashing costs one pass over the two strings (tens of ns).
public struct ImageCacheKey: Sendable, Hashable, CustomStringConvertible {
    /// ``ImageRequest/Source/key``.
    public let source: String
    /// The decode size.
    public let size: TargetSize
    /// The region kept before the resize (``ImageRequest/crop``).
    public let crop: CropRegion?
    /// The smallest result (``ImageRequest/minimumSize``).
    public let minimumSize: MinimumSize?
    /// Whether the decode may enlarge (``ImageRequest/allowsUpscaling``).
    public let allowsUpscaling: Bool
    /// The decode pixel format preference.
    public let pixelFormat: PixelFormatPreference
    /// Processor identifiers joined by `|` (empty when none).
    public let processors: String

    /// Creates a key.
    public init(
        source: String, size: TargetSize, crop: CropRegion? = nil, minimumSize: MinimumSize? = nil,
        allowsUpscaling: Bool = false,
        pixelFormat: PixelFormatPreference = .auto, processors: String = ""
    ) {
        self.source = source
        self.size = size
        self.crop = crop
        self.minimumSize = minimumSize
        self.allowsUpscaling = allowsUpscaling
        self.pixelFormat = pixelFormat
        self.processors = processors
    }

    /// `size` as a short string, for disk keys and logs.
    var sizeDescription: String {
        let geometry =
            (crop.map { $0.key + "|" } ?? "") + (minimumSize.map { $0.key + "|" } ?? "")
            + (allowsUpscaling ? "up|" : "")
        return geometry + baseSizeDescription
    }

    private var baseSizeDescription: String {
        switch size {
        case .original: "original"
        case .maxPixelSize(let n): "max\(n)"
        case .fit(let w, let h): "fit\(w)x\(h)"
        case .fill(let w, let h): "fill\(w)x\(h)"
        case .cover(let w, let h): "cover\(w)x\(h)"
        case .stretch(let w, let h): "stretch\(w)x\(h)"
        case .fillDown(let w, let h): "filldown\(w)x\(h)"
        case .auto(let w, let h): "auto\(w)x\(h)"
        }
    }

    /// The disk-cache key of the processed image's encoded bytes.
    var processedDiskKey: String { "p|\(sizeDescription)|\(pixelFormat)|\(processors)|\(source)" }

    /// The key of the decode task (shared by requests that differ only in processors).
    var decodeKey: String { "\(sizeDescription)|\(pixelFormat)|\(source)" }

    /// The key as one string (as used on disk).
    public var description: String { processedDiskKey }
}
