// STUB: replaced by the probe implementation (helper). Signatures are the contract.

/// Reads an encoded image's header without decoding pixels.
public enum ImageProber {
    /// The format named by the first bytes, or nil when they match no supported format.
    public static func format(of bytes: UnsafeRawBufferPointer) -> ImageFileFormat? { nil }

    /// Probes an in-memory image. Reads only the header structures; decodes no pixels.
    public static func probe(_ bytes: UnsafeRawBufferPointer, limits: DecodeLimits = .default) throws(DarkroomImageError) -> ImageProbe {
        throw DarkroomImageError(.unsupportedFormat, "not implemented")
    }

    /// Probes a file, reading a prefix and more only when the header needs it.
    public static func probe(fileAt path: String, limits: DecodeLimits = .default) throws(DarkroomImageError) -> ImageProbe {
        throw DarkroomImageError(.unsupportedFormat, "not implemented")
    }
}
