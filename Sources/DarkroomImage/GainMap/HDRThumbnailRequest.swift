import DarkroomSupport

/// One HDR thumbnail made from a source's own bytes rather than from a decoded bitmap: which output, the geometry and
/// limits it is decoded at, and how it is encoded. A value, so that it can be handed whole to where it is made (a
/// decode worker, ``ImageDecoder/encodeHDRThumbnail(_:_:)-(UnsafeRawBufferPointer,_)``).
public struct HDRThumbnailRequest: Sendable, Hashable, Codable {
    /// Which HDR output.
    public enum Output: Sendable, Hashable, Codable {
        /// An Ultra HDR JPEG of a gain-map source
        /// (``ImageEncoder/encodeUltraHDRThumbnail(_:options:encode:)-(UnsafeRawBufferPointer,_,_)``); declined
        /// when the source has no usable gain map or the geometry crops.
        case ultraHDR
        /// A 10-bit AVIF of a PQ or HLG source in its own transfer
        /// (``ImageEncoder/encodeHDRSignalThumbnail(_:options:encode:)-(UnsafeRawBufferPointer,_,_)``); declined
        /// for other sources.
        case signal
        /// A 10-bit PQ AVIF for a display with `headroom` (log2 of its peak over SDR white; nil: the source's own)
        /// (``ImageEncoder/encodeHDRDisplayThumbnail(_:options:displayHeadroom:encode:)-(UnsafeRawBufferPointer,_,_,_)``);
        /// never declined.
        case display(headroom: Double?)

        /// The HDR output `mode` asks of a source written as `format`, or nil when the thumbnail is SDR: `apply` is
        /// always a PQ AVIF for the display's `headroom`; `keep` is an Ultra HDR JPEG of a JPEG or HEIC source
        /// (its gain map) or an AVIF of a PQ or HLG source in its own signal, and nothing else stays HDR. A video's
        /// frame is SDR whatever the mode, and a camera RAW kept is its SDR rendering. The one place this is
        /// decided, by every front end; the output itself may still decline the source (no usable gain map, no PQ
        /// or HLG signal, a crop), and the caller then writes SDR.
        ///
        /// - Parameters:
        ///   - mode: what the request asks (`hdr=`, `--hdr`).
        ///   - headroom: with `apply`, the display's headroom in stops (nil: the source's own).
        ///   - format: the output format the thumbnail is written in.
        ///   - source: the source's format, or nil while it is not known (a remote source not fetched yet: the
        ///     output then declines it if it does not fit).
        ///   - sourceIsHDRSignal: whether the source carries a PQ or HLG signal Darkroom reads, or nil while it
        ///     is not known.
        public static func asked(
            by mode: HDROutputMode, headroom: Double?, writing format: ImageFileFormat, source: ImageFileFormat?,
            sourceIsHDRSignal: Bool? = nil
        ) -> Self? {
            guard mode != .sdr, source != .video, mode == .apply || source != .raw else { return nil }
            switch (mode, format) {
            case (.apply, _): return .display(headroom: headroom)
            case (.keep, .avif) where sourceIsHDRSignal != false: return .signal
            case (.keep, .jpeg) where source == nil || source == .jpeg || source == .heic: return .ultraHDR
            default: return nil
            }
        }
    }

    /// Which HDR output.
    public var output: Output
    /// The geometry, colour and limits the source is decoded with.
    public var options: DecodeOptions
    /// How the output is encoded.
    public var encode: EncodeOptions

    /// A request for `output` at `options`, encoded as `encode` says.
    public init(_ output: Output, options: DecodeOptions, encode: EncodeOptions = EncodeOptions()) {
        self.output = output
        self.options = options
        self.encode = encode
    }
}

extension ImageEncoder {
    /// Makes the HDR thumbnail `request` asks for from `bytes`, in this process: the one place the three HDR outputs
    /// are told apart. Cost: that of the output's own encoder.
    /// - Returns: the encoded file, or nil when the output declines the source (see ``HDRThumbnailRequest/Output``).
    /// - Throws: ``DarkroomImageError`` from decoding or encoding.
    public static func encodeHDRThumbnail(_ bytes: UnsafeRawBufferPointer, _ request: HDRThumbnailRequest)
        throws(DarkroomImageError) -> [UInt8]?
    {
        switch request.output {
        case .ultraHDR:
            try encodeUltraHDRThumbnail(bytes, options: request.options, encode: request.encode)
        case .signal:
            try encodeHDRSignalThumbnail(bytes, options: request.options, encode: request.encode)
        case .display(let headroom):
            try encodeHDRDisplayThumbnail(
                bytes, options: request.options, displayHeadroom: headroom, encode: request.encode)
        }
    }
}

extension ImageDecoder {
    /// Makes the HDR thumbnail `request` asks for from `bytes` where this decoder decodes: in its ``isolation``
    /// when it has one (the source's bytes copied there once, the encoded file copied back), else in this process
    /// (``ImageEncoder/encodeHDRThumbnail(_:_:)``). Blocking.
    /// - Returns: the encoded file, or nil when the output declines the source.
    /// - Throws: ``DarkroomImageError`` from decoding or encoding, and the isolation's own (`.decoderCrashed`,
    ///   `.limitExceeded`).
    public func encodeHDRThumbnail(_ bytes: UnsafeRawBufferPointer, _ request: HDRThumbnailRequest)
        throws(DarkroomImageError) -> [UInt8]?
    {
        if let isolation { return try isolation.encodeHDRThumbnail(bytes, request) }
        return try ImageEncoder.encodeHDRThumbnail(bytes, request)
    }

    /// Makes the HDR thumbnail `request` asks for from a byte array. See
    /// ``encodeHDRThumbnail(_:_:)-(UnsafeRawBufferPointer,_)``.
    public func encodeHDRThumbnail(_ bytes: [UInt8], _ request: HDRThumbnailRequest) throws(DarkroomImageError)
        -> [UInt8]?
    {
        try bytes.withBytes { (raw) throws(DarkroomImageError) in try encodeHDRThumbnail(raw, request) }
    }
}
