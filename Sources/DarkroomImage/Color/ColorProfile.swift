/// What a decode does with the colours an image file describes.
public enum OutputColorSpace: String, Sendable, Hashable, Codable, CaseIterable {
    /// Convert the pixels to sRGB with the embedded profile (lcms2) and drop the profile: the result shows the
    /// same on every display that assumes sRGB, as browsers do. The default.
    case sRGB = "srgb"
    /// Keep the pixels as the file stores them and carry the embedded ICC profile on the result
    /// (``DecodedImage/colorProfile``) so an encoder can write it back out. CMYK images are still converted,
    /// since bitmaps hold RGB or gray only.
    case original
}

/// An ICC colour profile's bytes with a summary of what they describe.
///
/// Building the summary opens the profile with lcms2 once (tens of microseconds for matrix/TRC profiles);
/// the bytes are kept as they were embedded, so they can be written back out unchanged.
public struct ColorProfile: Sendable, Hashable {
    /// The ICC profile as embedded (at most ``DecodeLimits/maxColorProfileBytes``).
    public let data: [UInt8]
    /// What the profile describes.
    public let summary: ColorProfileSummary

    /// Wraps profile bytes, reading their description and colour space with lcms2. Never fails: unusable
    /// bytes give a summary with ``ColorProfileSummary/isUsable`` `false` and the reason in
    /// ``ColorProfileSummary/problem``.
    public init(data: [UInt8]) {
        self.data = data
        self.summary = ColorProfileSummary(icc: data)
    }

    /// Profile bytes with the summary another process already read from them (a decode worker's): nothing is
    /// parsed here, so a hostile profile reaches no parser in this process.
    package init(data: [UInt8], summary: ColorProfileSummary) {
        self.data = data
        self.summary = summary
    }
}

/// A summary of the colour description an image carries: for `darkroom probe`, `/v1/info` and logs.
public struct ColorProfileSummary: Sendable, Hashable, Codable {
    /// Where the description comes from.
    public enum Source: String, Sendable, Hashable, Codable {
        /// An embedded ICC profile (JPEG APP2, PNG iCCP, WebP ICCP, HEIF/AVIF `colr` `prof`/`rICC`).
        case icc
        /// CICP code points (HEIF/AVIF `colr` `nclx`).
        case cicp
        /// PNG `gAMA` and/or `cHRM` without a profile.
        case pngChunks = "png-chunks"
        /// PNG `sRGB` chunk.
        case srgbChunk = "srgb-chunk"
    }

    /// The kind of colour data the profile converts.
    public enum Model: String, Sendable, Hashable, Codable {
        case rgb, gray, cmyk, other
    }

    /// Where the description comes from.
    public var source: Source
    /// The profile's description tag (`desc`), or a description of CICP / PNG values.
    public var description: String?
    /// The colour model of the data the profile describes.
    public var model: Model
    /// Whether converting to sRGB changes no pixel by more than one level: such images are left as they are.
    /// Only known once a transform was built (on decode); `false` in summaries made without one.
    public var isSRGB: Bool
    /// Whether lcms2 accepted the description. An unusable one is ignored: the image is treated as sRGB.
    public var isUsable: Bool
    /// Why the description was not usable, or what was ignored.
    public var problem: String?
    /// Size of the embedded ICC profile in bytes (0 for CICP or PNG chunks).
    public var byteCount: Int

    /// Creates a summary.
    public init(
        source: Source, description: String?, model: Model, isSRGB: Bool, isUsable: Bool,
        problem: String? = nil, byteCount: Int = 0
    ) {
        self.source = source
        self.description = description
        self.model = model
        self.isSRGB = isSRGB
        self.isUsable = isUsable
        self.problem = problem
        self.byteCount = byteCount
    }
}
