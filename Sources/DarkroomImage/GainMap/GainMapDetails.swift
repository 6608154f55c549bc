/// A gain map an image carries: where, how large, and how it turns the base image into the other rendition.
public struct GainMapDetails: Sendable, Hashable, Codable {
    /// How the file holds it: `jpeg-mpf` (Ultra HDR: a second JPEG listed by the Multi-Picture Format index) or
    /// `heif-aux` (an iPhone HEIC's auxiliary image).
    public var container: String
    /// Where the parameters came from: `iso21496-1` (the binary APP2 record), `xmp` (Adobe's `hdrgm` XMP), or
    /// `apple-makernote` (an iPhone's headroom, maker tags 0x21 and 0x30; its map follows Apple's curve, not
    /// ISO 21496-1's: ``GainMapMetadata`` then records the gain range only).
    public var metadataFormat: String?
    /// The gain map image's stored width; 0 when it could not be read.
    public var width: Int
    /// The gain map image's stored height; 0 when it could not be read.
    public var height: Int
    /// The gain map image's channels: 1 (gray, one gain for R, G and B) or 3; 0 when it could not be read.
    public var channels: Int
    /// The encoded gain map's length, bytes; 0 when the container does not say (HEIF).
    public var byteCount: Int
    /// The parameters; nil when the file marks a gain map but its parameters are missing or damaged.
    public var metadata: GainMapMetadata?
    /// What is wrong with the gain map, when something is: the image is then shown from its base alone.
    public var warning: String?

    /// Creates details.
    public init(
        container: String, metadataFormat: String?, width: Int, height: Int, channels: Int, byteCount: Int,
        metadata: GainMapMetadata?, warning: String?
    ) {
        self.container = container
        self.metadataFormat = metadataFormat
        self.width = width
        self.height = height
        self.channels = channels
        self.byteCount = byteCount
        self.metadata = metadata
        self.warning = warning
    }

    /// Whether a decode can apply the gain map: its parameters read and its image found, nothing wrong.
    public var isUsable: Bool { metadata != nil && warning == nil && width > 0 }
}

extension ImageProber {
    /// The gain map an image carries, or nil when it marks none. Reads the container's index and metadata
    /// segments only (no pixels): the primary's marker segments, the gain map JPEG's, and its frame header.
    ///
    /// A file that marks a gain map (an `hdrgm` XMP packet or an ISO 21496-1 record in the primary) whose map or
    /// parameters cannot be found or read gives details with a ``GainMapDetails/warning``; a decode then shows the
    /// base image, as every SDR reader does. Today: Ultra HDR JPEG (both metadata forms) and iPhone HEIC (Apple's
    /// auxiliary gain map, its headroom from the EXIF maker note: ``GainMapDetails/metadataFormat``
    /// `apple-makernote`). ISO 21496-1 gain maps in HEIF and AVIF need libheif 1.19 and libavif 1.1 or later; the
    /// system libraries this builds with are older, so such a file gives nil.
    public static func gainMap(of bytes: UnsafeRawBufferPointer, limits: DecodeLimits = .default)
        -> GainMapDetails?
    {
        GainMapSource.locate(in: bytes, limits: limits)?.details
    }

    /// The gain map a byte array carries. See ``gainMap(of:limits:)-(UnsafeRawBufferPointer,_)``.
    public static func gainMap(of bytes: [UInt8], limits: DecodeLimits = .default) -> GainMapDetails? {
        bytes.withUnsafeBytes { gainMap(of: $0, limits: limits) }
    }
}
