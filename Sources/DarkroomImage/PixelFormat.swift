/// The layout of one pixel in a ``Bitmap``.
///
/// Decoded images cost `bytesPerRow × height` bytes, so the format is the single largest memory lever:
/// ``gray8`` is a quarter of ``bgra8Premultiplied``. ``OutputGeometry/pixelFormat`` defaults to the smallest
/// format that loses nothing.
public enum PixelFormat: String, Sendable, Hashable, CaseIterable, Codable {
    /// 4 bytes: blue, green, red, alpha; color premultiplied by alpha. The default for color images.
    case bgra8Premultiplied = "bgra8"
    /// 4 bytes: red, green, blue, alpha; straight (not premultiplied) alpha.
    case rgba8 = "rgba8"
    /// 1 byte of luminance; opaque.
    case gray8 = "gray8"
    /// 2 bytes: 5 bits red, 6 green, 5 blue (little-endian `UInt16`); opaque, lossy for 8-bit sources.
    case rgb565 = "rgb565"
    /// 1 byte of alpha coverage (a mask); no color.
    case alpha8 = "alpha8"

    /// Bytes one pixel occupies.
    @inlinable
    public var bytesPerPixel: Int {
        switch self {
        case .bgra8Premultiplied, .rgba8: 4
        case .rgb565: 2
        case .gray8, .alpha8: 1
        }
    }

    /// Whether the format can carry transparency.
    public var hasAlpha: Bool {
        switch self {
        case .bgra8Premultiplied, .rgba8, .alpha8: true
        case .gray8, .rgb565: false
        }
    }
}

/// Which pixel format a decode produces.
public enum PixelFormatPreference: Sendable, Hashable, Codable {
    /// The smallest format that loses nothing: ``PixelFormat/gray8`` for opaque grayscale sources,
    /// ``PixelFormat/bgra8Premultiplied`` otherwise.
    case auto
    /// Exactly this format, converting if the source differs (color to gray uses Rec. 601 luma).
    case exactly(PixelFormat)
}
