import DarkroomSupport

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension ImageDecoder {
    /// Decodes the file at `path`, reading no more of it than the format needs.
    ///
    /// A camera RAW (recognised by its first 64 KiB) is opened by libraw, which reads its structures and then only
    /// the preview — a small part of the file — or, without a large enough preview, the sensor data; a TIFF is read
    /// by libtiff, a strip or tile at a time as it decodes: neither is held whole. A video goes to the first custom
    /// decoder that reads it from its file (DarkroomVideo's `VideoDecoder`, reading only the parts it needs). Every other format is read whole (``FileBytes/read(_:limit:)``) and decoded as
    /// ``decode(_:options:)-(UnsafeRawBufferPointer,_)`` does. With an ``isolation``, the open file is handed to it
    /// and read there the same way. Thread-safe.
    /// - Throws: ``DarkroomImageError``: `.notFound`/`.io` for the file, `.limitExceeded` past
    ///   ``DecodeLimits/maxInputBytes``, and everything the bytes overload throws.
    public func decode(fileAt path: String, options: DecodeOptions = DecodeOptions()) throws(DarkroomImageError)
        -> DecodedImage
    {
        try decode(fileAt: path, options: options, reading: nil)
    }

    /// Decodes the file `ranges` reads where it lies (a remote video): a custom decoder that reads ranges decodes it
    /// (`VideoDecoder` reads the parts a frame needs; with an ``isolation``, a video is decoded there, the ranges it
    /// asks for read here), else it is read whole, within `DecodeLimits/maxInputBytes`, and decoded from its bytes.
    /// Blocking as `ranges`' reads are. Thread-safe.
    /// - Throws: ``DarkroomImageError`` as ``decode(_:options:)-(UnsafeRawBufferPointer,_)``, and what the reads throw.
    public func decode(ranges: any ByteRangeReading, options: DecodeOptions = DecodeOptions())
        throws(DarkroomImageError) -> DecodedImage
    {
        let head = try Self.head(of: ranges)
        if head.isVideo {
            if let isolation { return try isolation.decode(ranges: ranges, options: options) }
            for custom in customDecoders {
                if let image = try custom.decode(ranges: ranges, format: .video, options: options) { return image }
            }
        }
        return try decode(ranges.readAll(limit: options.limits.maxInputBytes, head: head.bytes), options: options)
    }

    /// The header of the file `ranges` reads where it lies (a remote video): a custom decoder that reads ranges
    /// reads only what the header needs (`VideoDecoder`: the container's header; with an ``isolation``, a video's is
    /// read there, the ranges it asks for read here), else the file is read whole, within
    /// `limits.maxInputBytes`, and probed from its bytes. Blocking as `ranges`' reads are. Thread-safe.
    /// - Throws: ``DarkroomImageError`` as ``probe(_:limits:page:)``, and what the reads throw.
    public func probe(ranges: any ByteRangeReading, limits: DecodeLimits = .default) throws(DarkroomImageError)
        -> ImageProbe
    {
        let head = try Self.head(of: ranges)
        if head.isVideo {
            if let isolation { return try isolation.probe(ranges: ranges, limits: limits) }
            for custom in customDecoders {
                if let probe = try custom.probe(ranges: ranges, format: .video, limits: limits) { return probe }
            }
        }
        let bytes = try ranges.readAll(limit: limits.maxInputBytes, head: head.bytes)
        return try bytes.withBytes { (raw) throws(DarkroomImageError) in try probe(raw, limits: limits) }
    }

    /// The first 4 KiB of the file `ranges` reads, and whether they are a video's (left to a custom decoder).
    private static func head(of ranges: any ByteRangeReading) throws(DarkroomImageError) -> (
        bytes: [UInt8], isVideo: Bool
    ) {
        let bytes = try ranges.read(at: 0, count: Int(min(ranges.size, 4096)))
        return (bytes, bytes.withUnsafeBytes { ImageProber.format(of: $0) } == .video)
    }

    /// The header of the file at `path`: the built-in prober's (a prefix read, see
    /// ``ImageProber/probe(fileAt:limits:)``), or for a file it recognizes but does not read (a video), the first
    /// custom decoder's that reads it from the file (with an ``isolation``, a video's header is read there, the open
    /// file handed over). Thread-safe.
    /// - Throws: ``DarkroomImageError`` as ``ImageProber/probe(fileAt:limits:)``, and what the custom decoder throws.
    public func probe(fileAt path: String, limits: DecodeLimits = .default) throws(DarkroomImageError) -> ImageProbe {
        if isolation != nil || !customDecoders.isEmpty,
            try ImageProber.format(ofFileAt: path, limits: limits) == .video
        {
            if let isolation {
                let (fd, size) = try FileBytes.openRegularFile(path, limit: .max)
                defer { close(fd) }
                return try isolation.probe(file: fd, range: 0..<Int64(size), limits: limits)
            }
            for custom in customDecoders {
                if let probe = try custom.probe(fileAt: path, format: .video, limits: limits) { return probe }
            }
        }
        return try ImageProber.probe(fileAt: path, limits: limits)
    }

    /// ``decode(fileAt:options:)`` reading non-RAW files into `buffer` (kept by a worker across files) instead of
    /// fresh memory.
    package func decode(fileAt path: String, options: DecodeOptions, reading buffer: FileReadBuffer?)
        throws(DarkroomImageError) -> DecodedImage
    {
        if let isolation {
            // One open: the input limit checked (but for a video), then the descriptor handed over
            let (fd, size) = try FileBytes.openRegularFile(path, limit: .max)
            defer { close(fd) }
            _ = try ImageProber.format(ofOpenFile: fd, size: size, path: path, limits: options.limits)
            return try isolation.decode(file: fd, length: size, options: options)
        }
        switch try ImageProber.format(ofFileAt: path, limits: options.limits) {
        case .raw where customDecoders.isEmpty: return try decodeCameraRAW(fileAt: path, options: options)
        case .tiff where customDecoders.isEmpty: return try decodeTIFF(fileAt: path, options: options)
        case .video:
            for custom in customDecoders {
                if let image = try custom.decode(fileAt: path, format: .video, options: options) { return image }
            }
        default: break
        }
        if let buffer {
            return try decode(buffer.read(path, limit: options.limits.maxInputBytes), options: options)
        }
        return try decode(FileBytes.read(path, limit: options.limits.maxInputBytes), options: options)
    }

    /// A TIFF read by libtiff itself (see ``decode(fileAt:options:)``): its directories, then only the strips or
    /// tiles of the page (or the pyramid level) being decoded, one at a time; never the whole file.
    package func decodeTIFF(fileAt path: String, options: DecodeOptions) throws(DarkroomImageError) -> DecodedImage {
        let handle = try TIFFDecoder.Handle(path: path, limits: options.limits)
        let probe = try TIFFDecoder.probe(handle, page: options.geometry.page, limits: options.limits)
        try Self.checkSource(probe, options.limits)
        return try decode(.tiffFile(handle), probe: probe, options: options, into: Bitmap.allocateOnHeap)
    }

    /// A camera RAW file read by libraw itself (see ``decode(fileAt:options:)``), for callers that already know the
    /// format from ``ImageProber/format(ofFileAt:limits:)`` and need not read its first bytes again.
    package func decodeCameraRAW(fileAt path: String, options: DecodeOptions) throws(DarkroomImageError)
        -> DecodedImage
    {
        let handle = try RAWDecoder.Handle(path: path)
        let probe = RAWDecoder.probe(handle)
        try Self.checkSource(probe, options.limits)
        guard options.geometry.page == 0 else {
            throw DarkroomImageError(.invalidArgument, "page \(options.geometry.page) asked of a raw with one page")
        }
        let plan = try options.geometry.plan(for: probe)
        let output = try RAWDecoder.decode(handle, plan: plan, options: options, allocate: Bitmap.allocateOnHeap)
        // The preview or the develop is sRGB already: only the pixel format and the orientation are left
        var bitmap = output.bitmap
        let final = Self.outputFormat(probe, options.geometry.pixelFormat)
        if bitmap.format != final { bitmap = try bitmap.converted(to: final, allocate: Bitmap.allocateOnHeap) }
        if options.geometry.appliesOrientation && probe.orientation != .up {
            bitmap = try bitmap.applying(probe.orientation, allocate: Bitmap.allocateOnHeap)
        }
        var result = DecodedImage(bitmap: bitmap, probe: probe, shrinkDenominator: output.shrinkDenominator)
        result.usedEmbeddedThumbnail = output.usedEmbeddedThumbnail
        return result
    }
}

extension ImageProber {
    /// The format named by the first 64 KiB of the file at `path` (see ``format(of:)``), nil when they match none.
    /// Cost: one open and one read of at most 64 KiB.
    /// - Throws: `.notFound`/`.io` when the file cannot be read, `.limitExceeded` past ``DecodeLimits/maxInputBytes``
    ///   unless it is a video (whose decoder reads only the parts it needs, however long the file).
    public static func format(ofFileAt path: String, limits: DecodeLimits = .default) throws(DarkroomImageError)
        -> ImageFileFormat?
    {
        let (fd, size) = try FileBytes.openRegularFile(path, limit: .max)
        defer { close(fd) }
        return try format(ofOpenFile: fd, size: size, path: path, limits: limits)
    }

    /// ``format(ofFileAt:limits:)`` of a regular file already open at `fd` (`size` bytes; `path` for messages).
    package static func format(ofOpenFile fd: Int32, size: Int, path: String, limits: DecodeLimits)
        throws(DarkroomImageError) -> ImageFileFormat?
    {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: min(size, initialPrefixBytes), alignment: 16)
        defer { buffer.deallocate() }
        guard let read = POSIXIO.read(fd, into: buffer, at: 0) else {
            throw DarkroomImageError.ioError("cannot read \(path)")
        }
        let format = format(of: UnsafeRawBufferPointer(rebasing: buffer[0..<read]))
        guard size <= limits.maxInputBytes || format == .video else {
            throw DarkroomImageError(
                .limitExceeded, "\(path) is \(size) bytes, over the input limit (\(limits.maxInputBytes))")
        }
        return format
    }
}
