/// An encoded image format, recognized by its magic bytes.
public enum ImageFileFormat: String, Sendable, Hashable, CaseIterable, Codable {
    case jpeg, png, webp, gif, heic, avif
    /// JPEG XL, a bare codestream or in its ISO BMFF container.
    case jxl
    /// TIFF and BigTIFF (camera RAWs built on TIFF are ``raw``).
    case tiff
    /// A camera RAW (CR2, CR3, NEF, ARW, RAF, ORF, RW2, PEF, DNG…), read through libraw.
    case raw
    /// SVG, rasterized at the requested size.
    case svg
    /// Windows and OS/2 bitmaps.
    case bmp
    /// Windows icons and cursors (ICO, CUR).
    case ico
    /// A video: ISO BMFF (MP4, MOV, 3GP, M4V), Matroska (MKV, WebM) or AVI, recognized here and read by
    /// DarkroomVideo's `VideoDecoder` (a decoder given to ``ImageDecoder/customDecoders``); its probe's
    /// ``ImageProbe/video`` names the container and codec.
    case video

    /// The usual file extension, without a dot (for ``video``, MP4's: ``VideoDetails/fileExtension`` names the
    /// container's own).
    public var fileExtension: String {
        switch self {
        case .jpeg: "jpg"
        case .png: "png"
        case .webp: "webp"
        case .gif: "gif"
        case .heic: "heic"
        case .avif: "avif"
        case .jxl: "jxl"
        case .tiff: "tiff"
        case .raw: "raw"
        case .svg: "svg"
        case .bmp: "bmp"
        case .ico: "ico"
        case .video: "mp4"
        }
    }

    /// The MIME type (for ``video``, MP4's: ``VideoDetails/mimeType`` names the container's own).
    public var mimeType: String {
        switch self {
        case .svg: "image/svg+xml"
        case .ico: "image/x-icon"
        case .raw: "image/x-dcraw"
        case .video: "video/mp4"
        default: "image/\(rawValue)"
        }
    }
}

/// The EXIF orientation tag (1–8): how the stored pixels must be transformed to show the image upright.
public enum ExifOrientation: Int, Sendable, Hashable, CaseIterable, Codable {
    /// Stored upright.
    case up = 1
    /// Mirrored left-right.
    case upMirrored = 2
    /// Rotated 180°.
    case down = 3
    /// Mirrored top-bottom.
    case downMirrored = 4
    /// Mirrored along the main diagonal (transpose).
    case leftMirrored = 5
    /// Needs a 90° clockwise rotation to be upright.
    case right = 6
    /// Mirrored along the anti-diagonal (transverse).
    case rightMirrored = 7
    /// Needs a 90° counter-clockwise rotation to be upright.
    case left = 8

    /// Whether showing the image upright swaps its width and height.
    public var swapsDimensions: Bool { rawValue >= 5 }
}

/// What the header of an encoded image says, read without decoding any pixels.
public struct ImageProbe: Sendable, Hashable, Codable {
    /// The format, from magic bytes.
    public var format: ImageFileFormat
    /// Width as stored (before orientation).
    public var width: Int
    /// Height as stored (before orientation).
    public var height: Int
    /// The EXIF orientation, ``ExifOrientation/up`` when absent.
    public var orientation: ExifOrientation
    /// Whether the image can have transparent pixels (an alpha channel, a tRNS chunk, a GIF transparent index).
    public var hasAlpha: Bool
    /// Whether the pixels are grayscale (a 1-component JPEG, a gray PNG).
    public var isGrayscale: Bool
    /// Number of frames: 1 for still images.
    public var frameCount: Int
    /// A progressive JPEG or an interlaced (Adam7/GIF-interlaced) image.
    public var isProgressive: Bool
    /// Whether an ICC color profile is embedded.
    public var hasICCProfile: Bool
    /// Bits per channel as stored (8 for JPEG, 1–16 for PNG, 8–12 for HEIC and AVIF).
    public var bitDepth: Int
    /// Whether the samples are CMYK (a 4-component JPEG, Adobe's YCCK included); decoded to sRGB BGRA.
    public var isCMYK: Bool
    /// HEIC and AVIF: what the container says beyond size (thumbnails, grids, transforms); nil for other formats.
    public var heif: HEIFDetails?
    /// The colour description, read only on request (``ImageProber/colorProfile(of:limits:)``; `darkroom probe`
    /// and `/v1/info` fill it in): nil from a plain probe.
    public var colorProfile: ColorProfileSummary?
    /// An animation's timing (durations, loop count), read only on request like ``colorProfile``
    /// (``ImageProber/animationInfo(_:limits:)``); nil from a plain probe and for still images.
    public var animation: AnimationInfo?
    /// A ThumbHash placeholder (``ThumbHash``), computed only on request like ``colorProfile`` (`/v1/info`); nil
    /// from a plain probe.
    public var thumbHash: [UInt8]?
    /// Pages (TIFF directories that are full images, not reduced-resolution levels); 1 for other formats. The
    /// probe describes the page ``OutputGeometry/page`` names when probed with it, else the first.
    public var pageCount: Int = 1
    /// Camera RAW only: the camera and the embedded previews; nil for other formats.
    public var raw: RAWDetails?
    /// HDR images (a PQ or HLG transfer): the transfer, primaries and content light level, and whether a decode to
    /// sRGB tone-maps them; nil for SDR images.
    public var hdr: HDRDetails?
    /// A gain map (Ultra HDR JPEG): where it is and its parameters, read only on request like ``colorProfile``
    /// (``ImageProber/gainMap(of:limits:)-(UnsafeRawBufferPointer,_)``); nil from a plain probe and for images
    /// without one.
    public var gainMap: GainMapDetails?
    /// A video (``ImageFileFormat/video``): its container, codec, duration, frame rate, rotation and pixel aspect;
    /// nil for images. The probe's size is then the displayed size of a frame before rotation (the coded size with
    /// non-square pixels made square), ``orientation`` the rotation, and ``frameCount`` 1: a video decodes to one
    /// still frame.
    public var video: VideoDetails?

    /// Creates a probe result.
    public init(
        format: ImageFileFormat, width: Int, height: Int, orientation: ExifOrientation = .up,
        hasAlpha: Bool = false, isGrayscale: Bool = false, frameCount: Int = 1, isProgressive: Bool = false,
        hasICCProfile: Bool = false, bitDepth: Int = 8, isCMYK: Bool = false, heif: HEIFDetails? = nil
    ) {
        self.format = format
        self.width = width
        self.height = height
        self.orientation = orientation
        self.hasAlpha = hasAlpha
        self.isGrayscale = isGrayscale
        self.frameCount = frameCount
        self.isProgressive = isProgressive
        self.hasICCProfile = hasICCProfile
        self.bitDepth = bitDepth
        self.isCMYK = isCMYK
        self.heif = heif
        self.colorProfile = nil
    }

    /// Width once the orientation is applied.
    public var orientedWidth: Int { orientation.swapsDimensions ? height : width }
    /// Height once the orientation is applied.
    public var orientedHeight: Int { orientation.swapsDimensions ? width : height }
}

/// What a HEIC or AVIF container says about its primary image beyond its size.
public struct HEIFDetails: Sendable, Hashable, Codable {
    /// The primary image's size as coded, before `irot`/`imir`/`clap` (``ImageProbe/width`` and
    /// ``ImageProbe/height`` are the displayed size: HEIF transformations are always applied).
    public var codedWidth: Int
    public var codedHeight: Int
    /// Whether the container rotates or mirrors the coded image (`irot`, `imir`).
    public var hasTransformations: Bool
    /// Top-level images (items) in the file.
    public var imageCount: Int
    /// Sizes of the primary image's thumbnail items, largest first (iPhone HEICs carry one).
    public var thumbnailSizes: [[Int]]
    /// The codec: `hevc` for HEIC, `av1` for AVIF.
    public var codec: String

    /// Creates details.
    public init(
        codedWidth: Int, codedHeight: Int, hasTransformations: Bool, imageCount: Int,
        thumbnailSizes: [[Int]], codec: String
    ) {
        self.codedWidth = codedWidth
        self.codedHeight = codedHeight
        self.hasTransformations = hasTransformations
        self.imageCount = imageCount
        self.thumbnailSizes = thumbnailSizes
        self.codec = codec
    }
}

/// What a camera RAW file carries besides its sensor data.
public struct RAWDetails: Sendable, Hashable, Codable {
    /// The camera's maker and model, as libraw names them.
    public var make: String
    public var model: String
    /// The sensor image's size once developed (before orientation).
    public var sensorWidth: Int
    public var sensorHeight: Int
    /// The embedded previews' sizes, largest first, and their encoding (`jpeg`, `bitmap`).
    public var previewSizes: [[Int]]
    public var previewFormat: String?

    /// Creates details.
    public init(
        make: String, model: String, sensorWidth: Int, sensorHeight: Int, previewSizes: [[Int]],
        previewFormat: String?
    ) {
        self.make = make
        self.model = model
        self.sensorWidth = sensorWidth
        self.sensorHeight = sensorHeight
        self.previewSizes = previewSizes
        self.previewFormat = previewFormat
    }
}
