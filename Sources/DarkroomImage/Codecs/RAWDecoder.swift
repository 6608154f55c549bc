import CRaw

/// Camera RAW files through libraw (its thread-safe build): the preview the camera embedded when it covers the
/// output, else a half-size develop.
///
/// A camera writes a JPEG of what it rendered (often full size) beside the sensor data; a thumbnail from it is
/// the photographer's picture and costs a JPEG decode with DCT scaling. Only when that preview is smaller than
/// the output (with ``DecodeOptions/shrinkOnLoadMargin``) is the sensor data developed, at half size (one pixel
/// per Bayer quad: no demosaicing, camera white balance, sRGB, 8 bits), holding libraw's unpacked sensor data and
/// its half-size 16-bit image (both counted against ``DecodeLimits/maxDecodedBytes`` before unpacking).
/// Orientation comes from the RAW metadata (libraw's `flip`), for the preview and the develop alike.
struct RAWDecoder: CodecDecoder {
    let format = ImageFileFormat.raw

    /// An open libraw handle over bytes that outlive it.
    final class Handle {
        let data: UnsafeMutablePointer<libraw_data_t>

        init(_ bytes: UnsafeRawBufferPointer) throws(DarkroomImageError) {
            guard let data = libraw_init(0) else {
                throw DarkroomImageError(.outOfMemory, "could not create a libraw handle")
            }
            self.data = data
            let status = libraw_open_buffer(data, UnsafeMutableRawPointer(mutating: bytes.baseAddress), bytes.count)
            guard status == LIBRAW_SUCCESS.rawValue else { throw RAWDecoder.failure(status, "opening the file") }
        }

        /// Opens a file that libraw reads itself, on demand: the structures it parses, then the preview or the
        /// sensor data — never the whole file for a preview.
        init(path: String) throws(DarkroomImageError) {
            guard let data = libraw_init(0) else {
                throw DarkroomImageError(.outOfMemory, "could not create a libraw handle")
            }
            self.data = data
            let status = libraw_open_file(data, path)
            guard status == LIBRAW_SUCCESS.rawValue else { throw RAWDecoder.failure(status, "opening \(path)") }
        }

        deinit { libraw_close(data) }

        var make: String { withUnsafeBytes(of: data.pointee.idata.make) { Self.string($0) } }
        var model: String { withUnsafeBytes(of: data.pointee.idata.model) { Self.string($0) } }
        var width: Int { Int(data.pointee.sizes.width) }
        var height: Int { Int(data.pointee.sizes.height) }
        var previewSize: (width: Int, height: Int)? {
            // Before `libraw_unpack_thumb` the format is still unknown; the size and length are read at open
            let t = data.pointee.thumbnail
            guard
                t.tformat == LIBRAW_THUMBNAIL_JPEG || t.tformat == LIBRAW_THUMBNAIL_BITMAP
                    || (t.tformat == LIBRAW_THUMBNAIL_UNKNOWN && t.tlength > 0),
                t.twidth > 0, t.theight > 0
            else { return nil }
            return (Int(t.twidth), Int(t.theight))
        }
        /// libraw's `flip` (dcraw's encoding) as the EXIF orientation.
        var orientation: ExifOrientation {
            switch data.pointee.sizes.flip {
            case 1: .upMirrored
            case 2: .downMirrored
            case 3: .down
            case 4: .leftMirrored
            case 5: .left
            case 6: .right
            case 7: .rightMirrored
            default: .up
            }
        }

        private static func string(_ bytes: UnsafeRawBufferPointer) -> String {
            String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
        }
    }

    /// `.raw` for a file that starts like a camera RAW, `.tiff` for other TIFF files, nil otherwise.
    ///
    /// RAWs with their own signatures (CR3 is found by its `ftyp` brand): Fujifilm RAF, Olympus ORF, Panasonic
    /// RW2. TIFF-based ones: Canon CR2 (`CR` after the header), DNG (a `DNGVersion` tag in the first directory),
    /// and NEF, ARW, PEF, SRW and the like: a camera maker's `Make` with a first directory that is a reduced image,
    /// has sub-directories, or is CFA or compressed in a way no TIFF writer uses. A camera maker's ordinary RGB TIFF
    /// stays TIFF.
    static func signatureFormat(_ reader: ByteReader) -> ImageFileFormat? {
        if reader.matches(Array("FUJIFILMCCD-RAW".utf8), at: 0) { return .raw }
        guard let head = try? reader.u32be(0) else { return nil }
        switch head {
        case 0x4949_524F, 0x4949_5253, 0x4D4D_4F52, 0x4949_5500: return .raw  // IIRO, IIRS, MMOR, IIU\0
        case 0x4949_2A00, 0x4D4D_002A: break
        case 0x4949_2B00, 0x4D4D_002B: return .tiff  // BigTIFF
        default: return nil
        }
        if reader.matches([0x43, 0x52, 0x02], at: 8) { return .raw }  // "CR\x02": Canon CR2
        return (try? isCameraTIFF(reader, littleEndian: head == 0x4949_2A00)) == true ? .raw : .tiff
    }

    private static let cameraMakers = [
        "canon", "nikon", "sony", "pentax", "ricoh", "samsung", "olympus", "om digital", "panasonic", "leica", "fuji",
        "hasselblad", "phase one", "mamiya", "kodak", "minolta", "konica", "sigma", "epson", "leaf", "sinar", "apple",
        "google", "xiaomi", "huawei", "oneplus", "dji", "gopro", "parrot", "zeiss",
    ]

    private static func isCameraTIFF(_ reader: ByteReader, littleEndian: Bool) throws(ProbeStop) -> Bool {
        func u16(_ o: Int) throws(ProbeStop) -> Int { littleEndian ? try reader.u16le(o) : try reader.u16be(o) }
        func u32(_ o: Int) throws(ProbeStop) -> Int { littleEndian ? try reader.u32le(o) : try reader.u32be(o) }
        let ifd = try u32(4)
        let count = try u16(ifd)
        guard count < 1000 else { return false }
        var make: String?
        var reduced = false
        var subIFDs = false
        var unusual = false
        for i in 0..<count {
            let entry = ifd + 2 + 12 * i
            let tag = try u16(entry)
            let type = try u16(entry + 2)
            let value = type == 3 ? try u16(entry + 8) : try u32(entry + 8)
            switch tag {
            case 50706: return true  // DNGVersion
            case 254: reduced = value & 1 != 0
            case 330: subIFDs = true
            case 262: unusual = unusual || value == 32803 || value == 34892  // CFA, LinearRaw
            case 259: unusual = unusual || ![1, 5, 7, 8, 32773, 32946, 34712, 50000, 50001].contains(value)
            case 271:
                let length = try u32(entry + 4)
                let offset = length <= 4 ? entry + 8 : try u32(entry + 8)
                let bytes = try reader.slice(offset, min(length, 64))
                make = String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self).lowercased()
            default: break
            }
        }
        guard let make, cameraMakers.contains(where: { make.hasPrefix($0) }) else { return false }
        return reduced || subIFDs || unusual
    }

    /// Size (as developed), orientation, camera and preview. Needs the whole file: libraw reads structures
    /// anywhere in it.
    static func probe(_ bytes: UnsafeRawBufferPointer, isComplete: Bool, limits: DecodeLimits) throws(ProbeStop)
        -> ImageProbe
    {
        guard isComplete else { throw .needMoreData(atLeast: Int.max) }
        do throws(DarkroomImageError) { return probe(try Handle(bytes)) } catch { throw .failed(error) }
    }

    /// The probe of an open handle (see ``probe(_:isComplete:limits:)``).
    static func probe(_ handle: Handle) -> ImageProbe {
        var probe = ImageProbe(
            format: .raw, width: handle.width, height: handle.height, orientation: handle.orientation, bitDepth: 8)
        var preview = handle.previewSize
        // The preview's encoding is known once it is read (a copy of its bytes: milliseconds)
        if preview != nil, handle.data.pointee.thumbnail.thumb == nil,
            libraw_unpack_thumb(handle.data) != LIBRAW_SUCCESS.rawValue
        {
            preview = nil
        }
        let tformat = handle.data.pointee.thumbnail.tformat
        probe.raw = RAWDetails(
            make: handle.make, model: handle.model, sensorWidth: handle.width, sensorHeight: handle.height,
            previewSizes: preview.map { [[$0.width, $0.height]] } ?? [],
            previewFormat: preview == nil ? nil : (tformat == LIBRAW_THUMBNAIL_JPEG ? "jpeg" : "bitmap"))
        return probe
    }

    func decode(
        _ bytes: UnsafeRawBufferPointer, probe: ImageProbe, plan: DecodePlan, working: PixelFormat,
        options: DecodeOptions, allocate: BitmapAllocator
    ) throws(DarkroomImageError) -> CodecOutput {
        try Self.decode(Handle(bytes), plan: plan, options: options, allocate: allocate)
    }

    /// The preview when it covers the plan's output, else the half-size develop, from an open handle.
    static func decode(_ handle: Handle, plan: DecodePlan, options: DecodeOptions, allocate: BitmapAllocator)
        throws(DarkroomImageError) -> CodecOutput
    {
        if let preview = handle.previewSize,
            plan.isCovered(byWidth: preview.width, height: preview.height, margin: options.shrinkOnLoadMargin),
            let output = try Self.decodePreview(handle, plan: plan, options: options, allocate: allocate)
        {
            return output
        }
        return try Self.develop(handle, plan: plan, options: options, allocate: allocate)
    }

    /// Decodes the embedded preview to the plan's output, or nil when libraw cannot hand it out.
    private static func decodePreview(
        _ handle: Handle, plan: DecodePlan, options: DecodeOptions, allocate: BitmapAllocator
    ) throws(DarkroomImageError) -> CodecOutput? {
        // Unpacked once per handle (the probe of a file path has done it already; libraw's file reader does not
        // read it a second time)
        guard handle.data.pointee.thumbnail.thumb != nil || libraw_unpack_thumb(handle.data) == LIBRAW_SUCCESS.rawValue
        else { return nil }
        var status: Int32 = 0
        guard let image = libraw_dcraw_make_mem_thumb(handle.data, &status) else { return nil }
        defer { libraw_dcraw_clear_mem(image) }
        let size = Int(image.pointee.data_size)
        let data = UnsafeRawBufferPointer(
            start: UnsafeRawPointer(image).advanced(by: MemoryLayout<libraw_processed_image_t>.offset(of: \.data)!),
            count: size)
        if image.pointee.type == LIBRAW_IMAGE_JPEG {
            guard var jpeg = try? ImageProber.probe(data, limits: options.limits), jpeg.format == .jpeg else {
                return nil
            }
            jpeg.orientation = .up  // the RAW's orientation is applied to the result, not the preview's own
            var jpegOptions = options
            jpegOptions.geometry.appliesOrientation = false
            var output = try JPEGDecoder().decode(
                data, probe: jpeg, plan: plan.retargeted(sourceWidth: jpeg.width, sourceHeight: jpeg.height),
                working: .bgra8Premultiplied, options: jpegOptions, allocate: allocate)
            output.usedEmbeddedThumbnail = true
            return output
        }
        var output = try rgbRows(image, plan: plan, options: options, allocate: allocate)
        output.usedEmbeddedThumbnail = true
        return output
    }

    /// Develops the sensor data at half size and resamples it to the plan's output.
    private static func develop(
        _ handle: Handle, plan: DecodePlan, options: DecodeOptions, allocate: BitmapAllocator
    ) throws(DarkroomImageError) -> CodecOutput {
        let sizes = handle.data.pointee.sizes
        let sensorBytes = Int(sizes.raw_width) * Int(sizes.raw_height) * 2
        let halfBytes = (Int(sizes.width) / 2 + 1) * (Int(sizes.height) / 2 + 1) * (8 + 3)
        let needed = sensorBytes + halfBytes + plan.outputBytes(.bgra8Premultiplied)
        guard needed <= options.limits.maxDecodedBytes else {
            throw DarkroomImageError(
                .limitExceeded,
                "developing a \(sizes.raw_width)×\(sizes.raw_height) RAW needs \(needed) bytes, over maxDecodedBytes (\(options.limits.maxDecodedBytes))"
            )
        }
        let meter = PixelMemory.allocated(sensorBytes + halfBytes)
        defer { PixelMemory.released(sensorBytes + halfBytes, meter: meter) }
        handle.data.pointee.params.half_size = 1
        handle.data.pointee.params.use_camera_wb = 1
        handle.data.pointee.params.output_bps = 8
        handle.data.pointee.params.user_flip = 0  // stored orientation: Darkroom turns the small result
        var status = libraw_unpack(handle.data)
        guard status == LIBRAW_SUCCESS.rawValue else { throw failure(status, "unpacking the sensor data") }
        status = libraw_dcraw_process(handle.data)
        guard status == LIBRAW_SUCCESS.rawValue else { throw failure(status, "developing") }
        guard let image = libraw_dcraw_make_mem_image(handle.data, &status) else {
            throw failure(status, "developing")
        }
        defer { libraw_dcraw_clear_mem(image) }
        return try rgbRows(image, plan: plan, options: options, allocate: allocate)
    }

    /// An 8-bit RGB (or gray) image from libraw, resampled to the plan's output.
    private static func rgbRows(
        _ image: UnsafeMutablePointer<libraw_processed_image_t>, plan: DecodePlan, options: DecodeOptions,
        allocate: BitmapAllocator
    ) throws(DarkroomImageError) -> CodecOutput {
        let w = Int(image.pointee.width)
        let h = Int(image.pointee.height)
        let colors = Int(image.pointee.colors)
        guard image.pointee.bits == 8, colors == 3 || colors == 1, w > 0, h > 0,
            Int(image.pointee.data_size) >= w * h * colors
        else { throw DarkroomImageError(.unsupportedFeature, "libraw returned a \(image.pointee.bits)-bit image") }
        let pixels = UnsafeRawPointer(image).advanced(by: MemoryLayout<libraw_processed_image_t>.offset(of: \.data)!)
            .assumingMemoryBound(to: UInt8.self)
        let destination = try RowDestination(
            plan: plan.retargeted(sourceWidth: w, sourceHeight: h), sourceWidth: w, sourceHeight: h,
            format: .bgra8Premultiplied, isOpaque: true, filter: options.filter, allocate: allocate)
        let row = try ScratchBuffer<UInt8>(count: w * 4, zeroed: false)
        for y in destination.requiredRows.clamped(to: 0..<h) {
            let source = pixels + y * w * colors
            for x in 0..<w {
                let r = source[x * colors]
                let g = colors == 3 ? source[x * 3 + 1] : r
                let b = colors == 3 ? source[x * 3 + 2] : r
                (row.pointer[4 * x], row.pointer[4 * x + 1], row.pointer[4 * x + 2], row.pointer[4 * x + 3]) =
                    (b, g, r, 255)
            }
            destination.consume(row: row.pointer, y: y)
        }
        return CodecOutput(bitmap: destination.finish())
    }

    /// A libraw status as a typed error.
    static func failure(_ status: Int32, _ what: String) -> DarkroomImageError {
        let codec = libraw_strerror(status).map { String(cString: $0) }
        switch status {
        case LIBRAW_FILE_UNSUPPORTED.rawValue:
            return DarkroomImageError(
                .unsupportedFeature, "libraw does not read this RAW (\(what))", codecMessage: codec)
        case LIBRAW_UNSUFFICIENT_MEMORY.rawValue, LIBRAW_TOO_BIG.rawValue, LIBRAW_MEMPOOL_OVERFLOW.rawValue:
            return DarkroomImageError(.limitExceeded, "the RAW is too large for libraw (\(what))", codecMessage: codec)
        case LIBRAW_IO_ERROR.rawValue:
            return DarkroomImageError(.truncated, "the RAW data ends early (\(what))", codecMessage: codec)
        default:
            return DarkroomImageError(.corrupt, "the RAW data is corrupt (\(what))", codecMessage: codec)
        }
    }
}
