import DarkroomImage

/// The key of a decoded, processed image in the memory cache: the source's key, the output geometry and the
/// processors' identifiers. Hashing costs one pass over the two strings and the geometry's few words.
public struct ImageCacheKey: Sendable, Hashable, CustomStringConvertible {
    /// ``ImageRequest/Source/key`` (or the request's ``ImageRequest/imageID``).
    public let source: String
    /// What the decode produces (``ImageRequest/geometry``).
    public let geometry: OutputGeometry
    /// Processor identifiers joined by `|` (empty when none).
    public let processors: String

    /// Creates a key.
    public init(source: String, geometry: OutputGeometry = OutputGeometry(), processors: String = "") {
        self.source = source
        self.geometry = geometry
        self.processors = processors
    }

    /// The disk-cache key of the processed image's encoded bytes.
    var processedDiskKey: String { "p|\(geometry.key)|\(processors)|\(source)" }

    /// The key of the decode task (shared by requests that differ only in processors).
    var decodeKey: String { "\(geometry.key)|\(source)" }

    /// The entry's name in an image table of ``geometry``: the source, and the processors when there are any.
    var tableEntity: String { processors.isEmpty ? source : source + "|" + processors }

    /// The key as one string (as used on disk).
    public var description: String { processedDiskKey }
}
