import CDarkroomTIFF

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// TIFF through libtiff (via the C shim), read a band at a time into the row resampler.
///
/// Pages are the top-level directories that are not reduced-resolution images; ``OutputGeometry/page`` picks one
/// (the first by default). A page's pyramid — its SubIFDs and the reduced-resolution directories that follow it —
/// offers smaller renditions: the smallest that still covers the output is decoded instead of the page.
///
/// Contiguous 1–16-bit gray, palette, RGB(A) and CMYK(A), and 32-bit float gray and RGB (nominal range 0…1) are
/// read one row at a time as stored (strips through libtiff's scanline reader, tiles a row of tiles at a time)
/// and converted here; CMYK keeps its samples for the colour-managed conversion with the embedded profile.
/// Everything else libtiff converts (planar separate, YCbCr, CIE Lab, old-style JPEG…) goes through
/// `TIFFRGBAImage` a strip or a row of tiles at a time. Every compression the system's libtiff was built with is
/// read. The orientation tag is applied like EXIF's.
struct TIFFDecoder: CodecDecoder {
    let format = ImageFileFormat.tiff

    /// An open TIFF over bytes that outlive it, or over a file it reads as libtiff asks.
    final class Handle {
        let tiff: OpaquePointer
        /// The file's descriptor, closed with the handle; -1 over bytes.
        private let fd: Int32
        /// The pages as ``TIFFDecoder/pages(_:limits:)`` listed them, with the directory limit they were listed
        /// under: a probe and the decode that follows it walk the directories once.
        fileprivate var listed: (maxPages: Int, pages: [Page])?
        /// Directories read so far (each ``select(_:sub:)``): what the tests count.
        private(set) var directoryReads = 0

        init(_ bytes: UnsafeRawBufferPointer, limits: DecodeLimits) throws(DarkroomImageError) {
            var tiff: OpaquePointer?
            let status = dr_tiff_open(bytes.baseAddress, bytes.count, UInt64(limits.maxDecodedBytes), &tiff)
            guard status == Int32(DR_TIFF_OK.rawValue), let tiff else {
                throw DarkroomImageError(.corrupt, "libtiff cannot open the data as TIFF")
            }
            self.tiff = tiff
            fd = -1
        }

        /// Opens the file at `path` (a regular file within ``DecodeLimits/maxInputBytes``). libtiff reads its
        /// directories and then only the strips or tiles a decode needs, one at a time: the file is never held
        /// whole in memory.
        init(path: String, limits: DecodeLimits) throws(DarkroomImageError) {
            let (fd, size) = try FileBytes.openRegularFile(path, limit: limits.maxInputBytes)
            var tiff: OpaquePointer?
            let status = dr_tiff_open_fd(fd, UInt64(size), UInt64(limits.maxDecodedBytes), &tiff)
            guard status == Int32(DR_TIFF_OK.rawValue), let tiff else {
                close(fd)
                throw DarkroomImageError(.corrupt, "libtiff cannot open \(path) as TIFF")
            }
            self.tiff = tiff
            self.fd = fd
        }

        deinit {
            dr_tiff_close(tiff)
            if fd >= 0 { close(fd) }
        }

        var message: String { String(cString: dr_tiff_message(tiff)) }

        func select(_ index: Int, sub: Int = -1) throws(DarkroomImageError) -> dr_tiff_image {
            var image = dr_tiff_image()
            directoryReads += 1
            let status = dr_tiff_select(tiff, Int32(index), Int32(sub), &image)
            guard status == Int32(DR_TIFF_OK.rawValue) else {
                throw DarkroomImageError(.corrupt, "TIFF directory \(index) cannot be read", codecMessage: message)
            }
            return image
        }
    }

    /// A full-resolution page and the reduced renditions of it.
    struct Page {
        var index: Int
        /// The page's fields as read while listing; its pointers (`icc`) are valid only until another directory
        /// is read.
        var image: dr_tiff_image
        var levels: [(index: Int, sub: Int, width: Int, height: Int)] = []
    }

    /// The file's pages with their pyramids, listed once per handle: every directory is read the first time.
    static func pages(_ handle: Handle, limits: DecodeLimits) throws(DarkroomImageError) -> [Page] {
        if let listed = handle.listed, listed.maxPages == limits.maxPages { return listed.pages }
        let count = Int(dr_tiff_directory_count(handle.tiff, Int32(clamping: limits.maxPages)))
        guard count <= limits.maxPages else {
            throw DarkroomImageError(
                .limitExceeded, "the TIFF has more than \(limits.maxPages) directories (maxPages)")
        }
        var pages: [Page] = []
        for index in 0..<count {
            let image = try handle.select(index)
            if image.subfile_type & 1 != 0, !pages.isEmpty {
                pages[pages.count - 1].levels.append((index, -1, Int(image.width), Int(image.height)))
                continue
            }
            var page = Page(index: index, image: image)
            for sub in 0..<min(Int(image.sub_ifd_count), limits.maxPages) {
                guard let level = try? handle.select(index, sub: sub), level.width > 0, level.height > 0,
                    level.width < image.width
                else { continue }
                page.levels.append((index, sub, Int(level.width), Int(level.height)))
            }
            pages.append(page)
        }
        guard !pages.isEmpty else { throw DarkroomImageError(.corrupt, "the TIFF has no image") }
        handle.listed = (limits.maxPages, pages)
        return pages
    }

    /// The header of page `page`: size, orientation, samples, profile, page count. Needs the whole file (TIFF
    /// directories may sit anywhere in it, often at its end).
    static func probe(_ bytes: UnsafeRawBufferPointer, isComplete: Bool, page: Int, limits: DecodeLimits)
        throws(ProbeStop) -> ImageProbe
    {
        guard isComplete else { throw .needMoreData(atLeast: Int.max) }
        do throws(DarkroomImageError) {
            return try probe(Handle(bytes, limits: limits), page: page, limits: limits)
        } catch {
            throw .failed(error)
        }
    }

    /// The header of page `page` of an open TIFF. See ``probe(_:isComplete:page:limits:)``.
    static func probe(_ handle: Handle, page: Int, limits: DecodeLimits) throws(DarkroomImageError) -> ImageProbe {
        let pages = try pages(handle, limits: limits)
        guard page >= 0, page < pages.count else {
            throw DarkroomImageError(.invalidArgument, "page \(page) asked of a TIFF with \(pages.count)")
        }
        let image = pages[page].image
        let base = Int(image.samples_per_pixel) - (image.alpha != 0 ? 1 : 0)
        var probe = ImageProbe(
            format: .tiff, width: Int(image.width), height: Int(image.height),
            orientation: ExifOrientation(rawValue: Int(image.orientation)) ?? .up,
            hasAlpha: image.alpha != 0,
            isGrayscale: (image.photometric == 0 || image.photometric == 1) && base == 1,
            hasICCProfile: image.icc_length > 0, bitDepth: Int(image.bits_per_sample),
            isCMYK: image.photometric == 5 && image.ink_set == 1 && base >= 4)
        probe.pageCount = pages.count
        // Only a page in a layout the HDR decode reads, with a profile, is read again for it (the listing's profile
        // pointer may be gone)
        if image.icc_length > 0, RowLayout(image)?.isHDR16 == true,
            let signal = hdrSignal(try handle.select(pages[page].index), limits: limits)
        {
            probe.hdr = HDRDetails(
                primaries: signal.primaries, transfer: signal.transfer, hasICC: false, lightLevel: nil)
        }
        return probe
    }

    /// The embedded ICC profile of the first page.
    static func readColor(_ bytes: UnsafeRawBufferPointer, limits: DecodeLimits) -> ColorReading {
        guard let handle = try? Handle(bytes, limits: limits), let image = try? handle.select(0) else { return .none }
        return reading(image, limits: limits)
    }

    private static func reading(_ image: dr_tiff_image, limits: DecodeLimits) -> ColorReading {
        guard image.icc_length > 0, let icc = image.icc else { return .none }
        guard Int(image.icc_length) <= limits.maxColorProfileBytes else {
            return ColorReading(
                color: nil,
                problem:
                    "the ICC profile of \(image.icc_length) bytes exceeds maxColorProfileBytes (\(limits.maxColorProfileBytes))"
            )
        }
        return ColorReading(color: .icc(Array(UnsafeBufferPointer(start: icc, count: Int(image.icc_length)))))
    }

    func decode(
        _ bytes: UnsafeRawBufferPointer, probe: ImageProbe, plan: DecodePlan, working: PixelFormat,
        options: DecodeOptions, allocate: BitmapAllocator
    ) throws(DarkroomImageError) -> CodecOutput {
        try Self.decode(
            Handle(bytes, limits: options.limits), hdr: probe.hdr, plan: plan, options: options, allocate: allocate)
    }

    /// Decodes the page ``OutputGeometry/page`` of an open TIFF (or the smallest rendition of it that covers the
    /// plan's output), a band of rows at a time. `hdr`: what the probe of that page found of a PQ or HLG profile
    /// (its signal is not read again); a page it says is tone-mapped is decoded by ``decodeHDR``.
    static func decode(
        _ handle: Handle, hdr: HDRDetails?, plan: DecodePlan, options: DecodeOptions, allocate: BitmapAllocator
    ) throws(DarkroomImageError) -> CodecOutput {
        let pages = try Self.pages(handle, limits: options.limits)
        guard options.geometry.page >= 0, options.geometry.page < pages.count else {
            throw DarkroomImageError(
                .invalidArgument, "page \(options.geometry.page) asked of a TIFF with \(pages.count)")
        }
        let page = pages[options.geometry.page]
        var renditions = [(index: page.index, sub: -1, width: Int(page.image.width), height: Int(page.image.height))]
        renditions += page.levels
        let chosen =
            renditions[
                plan.bestRendition(renditions.map { ($0.width, $0.height) }, margin: options.shrinkOnLoadMargin) ?? 0]
        // The profile is copied while its page's directory is the current one: libtiff frees a directory's tag
        // data when another is read, so `page.image.icc` (read while listing pages) may already be gone
        let color = Self.reading(try handle.select(page.index), limits: options.limits)
        let image = try handle.select(chosen.index, sub: chosen.sub)
        let levelPlan = plan.retargeted(sourceWidth: Int(image.width), sourceHeight: Int(image.height))
        // The page's profile names the signal; a reduced rendition of it (which may carry no profile) holds the same
        if options.colorSpace == .sRGB, let hdr, hdr.toneMapped {
            var output = try Self.decodeHDR(
                handle, image, signal: hdr.cicp, plan: levelPlan, options: options, allocate: allocate)
            output.usedEmbeddedThumbnail = chosen.index != page.index || chosen.sub >= 0
            return output
        }
        var output: CodecOutput
        if let layout = RowLayout(image) {
            output = try Self.decodeRows(
                handle, image, layout: layout, plan: levelPlan, options: options, allocate: allocate)
        } else if image.rgba_ok != 0 {
            output = try Self.decodeRGBA(handle, image, plan: levelPlan, options: options, allocate: allocate)
        } else {
            throw DarkroomImageError(
                .unsupportedFeature,
                "this TIFF layout (photometric \(image.photometric), \(image.bits_per_sample)-bit) is not supported",
                codecMessage: handle.message)
        }
        output.colorReading = color
        output.usedEmbeddedThumbnail = chosen.index != page.index || chosen.sub >= 0
        return output
    }

    /// Rows as stored, converted here.
    private static func decodeRows(
        _ handle: Handle, _ image: dr_tiff_image, layout: RowLayout, plan: DecodePlan, options: DecodeOptions,
        allocate: BitmapAllocator
    ) throws(DarkroomImageError) -> CodecOutput {
        let width = Int(image.width)
        let height = Int(image.height)
        let destination = try RowDestination(
            plan: plan, sourceWidth: width, sourceHeight: height, format: .bgra8Premultiplied,
            isOpaque: !layout.hasAlpha, filter: options.filter, allocate: allocate)
        let stride = (width * Int(image.samples_per_pixel) * Int(image.bits_per_sample) + 7) / 8 + 64
        let stored = try ScratchBuffer<UInt8>(count: stride, zeroed: true)
        let row = try ScratchBuffer<UInt8>(count: width * 4, zeroed: false)
        var palette: [UInt32] = []
        if layout.kind == .palette {
            var r: UnsafePointer<UInt16>?
            var g: UnsafePointer<UInt16>?
            var b: UnsafePointer<UInt16>?
            let count = Int(dr_tiff_colormap(handle.tiff, &r, &g, &b))
            guard count > 0, let r, let g, let b else {
                throw DarkroomImageError(.corrupt, "the palette TIFF has no colour map")
            }
            palette = (0..<count).map { i in
                UInt32(b[i] >> 8) | UInt32(g[i] >> 8) << 8 | UInt32(r[i] >> 8) << 16 | 0xFF00_0000
            }
        }
        for y in destination.requiredRows.clamped(to: 0..<height) {
            let status = dr_tiff_read_raw(handle.tiff, UInt32(y), 1, stored.pointer, stride)
            guard status == Int32(DR_TIFF_OK.rawValue) else { throw failure(status, handle, row: y) }
            layout.convert(stored.pointer, row.pointer, width: width, palette: palette)
            destination.consume(row: row.pointer, y: y)
        }
        return CodecOutput(bitmap: destination.finish(), isCMYK: layout.kind == .cmyk)
    }

    /// Anything else libtiff's RGBA interface converts, a strip (or a row of tiles) at a time.
    private static func decodeRGBA(
        _ handle: Handle, _ image: dr_tiff_image, plan: DecodePlan, options: DecodeOptions, allocate: BitmapAllocator
    ) throws(DarkroomImageError) -> CodecOutput {
        let width = Int(image.width)
        let height = Int(image.height)
        let band = max(1, min(height, Int(image.tiled != 0 ? image.tile_height : image.rows_per_strip)))
        guard width * band * 4 + plan.outputBytes(.bgra8Premultiplied) <= options.limits.maxDecodedBytes else {
            throw DarkroomImageError(
                .limitExceeded,
                "a \(width)×\(band) band of this TIFF is over maxDecodedBytes (\(options.limits.maxDecodedBytes))")
        }
        let destination = try RowDestination(
            plan: plan, sourceWidth: width, sourceHeight: height, format: .bgra8Premultiplied,
            isOpaque: image.alpha == 0, filter: options.filter, allocate: allocate)
        let buffer = try ScratchBuffer<UInt8>(count: width * band * 4, zeroed: false)
        let rows = destination.requiredRows.clamped(to: 0..<height)
        var start = rows.lowerBound / band * band
        while start < rows.upperBound {
            let count = min(band, height - start)
            let status = dr_tiff_read_rgba(handle.tiff, UInt32(start), UInt32(count), buffer.pointer, width * 4)
            guard status == Int32(DR_TIFF_OK.rawValue) else { throw failure(status, handle, row: start) }
            for y in max(start, rows.lowerBound)..<min(start + count, rows.upperBound) {
                let line = buffer.pointer + (y - start) * width * 4
                for x in 0..<width { swap(&line[4 * x], &line[4 * x + 2]) }  // RGBA → BGRA
                destination.consume(row: line, y: y)
            }
            start += count
        }
        return CodecOutput(bitmap: destination.finish())
    }

    static func failure(_ status: Int32, _ handle: Handle, row: Int) -> DarkroomImageError {
        switch dr_tiff_status(rawValue: UInt32(status)) {
        case DR_TIFF_ERR_NO_MEMORY:
            return DarkroomImageError(.limitExceeded, "libtiff could not allocate memory", codecMessage: handle.message)
        case DR_TIFF_ERR_UNSUPPORTED:
            return DarkroomImageError(
                .unsupportedFeature, "this TIFF variant is not supported", codecMessage: handle.message)
        default:
            return DarkroomImageError(
                .corrupt, "the TIFF pixel data is corrupt or truncated (at row \(row))", codecMessage: handle.message)
        }
    }
}
