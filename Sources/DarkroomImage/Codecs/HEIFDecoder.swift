import CHeif

/// HEIC (HEVC in HEIF) through libheif.
///
/// libheif parses the container, decodes tiles (grids included) and applies the HEIF transformations
/// (`irot`, `imir`, `clap`; EXIF orientation is then ignored, as the HEIF specification requires), so the probe
/// reports the displayed size. There is no scaled decode in HEVC: when the primary image has a thumbnail item at
/// least as large as the output (iPhones write one), that is decoded instead, as ImageIO's
/// `CreateThumbnailFromImageIfAbsent` does; otherwise the full image is decoded to 8-bit RGB(A) — its bytes and
/// libheif's YCbCr planes counted against ``DecodeLimits/maxDecodedBytes`` before any pixel is decoded — and its
/// rows are streamed through the resampler. 10/12-bit images come out as 8-bit.
package struct HEIFDecoder: CodecDecoder {
    let format = ImageFileFormat.heic
    /// Whether the decoder's YCbCr planes are converted here, row by row (the default), rather than by libheif
    /// into a full-size RGB image (kept for the layouts the planes path does not take, and for comparisons).
    var convertsPlanes = true

    /// An open file: the context and its primary image handle, released together.
    final class Container {
        let context: OpaquePointer
        let primary: OpaquePointer

        convenience init(_ bytes: UnsafeRawBufferPointer, limits: DecodeLimits) throws(DarkroomImageError) {
            try self.init(limits: limits) {
                heif_context_read_from_memory_without_copy($0, bytes.baseAddress, bytes.count, nil)
            }
        }

        /// The container of the file at `path`, which libheif reads as it needs (the boxes, then an item's
        /// extents when asked for it), never whole.
        convenience init(fileAt path: String, limits: DecodeLimits) throws(DarkroomImageError) {
            try self.init(limits: limits) { heif_context_read_from_file($0, path, nil) }
        }

        private init(limits: DecodeLimits, read: (OpaquePointer) -> heif_error) throws(DarkroomImageError) {
            guard let context = heif_context_alloc() else {
                throw DarkroomImageError(.outOfMemory, "could not create a HEIF context")
            }
            heif_context_set_maximum_image_size_limit(context, Int32(clamping: limits.maxDimension))
            // Grid tiles are decoded on the calling thread: callers decode on their own bounded pools, and
            // libheif's tile threads would only oversubscribe the cores they already use.
            heif_context_set_max_decoding_threads(context, 0)
            var error = read(context)
            var handle: OpaquePointer?
            if error.code == heif_error_Ok {
                error = heif_context_get_primary_image_handle(context, &handle)
            }
            guard error.code == heif_error_Ok, var handle else {
                // The error's message lives in the context: read it before the context goes
                let failure = HEIFDecoder.failure(error, "reading the container")
                heif_context_free(context)
                throw failure
            }
            if let master = Self.masterOfPrimary(in: context) {
                heif_image_handle_release(handle)
                handle = master
            }
            self.context = context
            self.primary = handle
        }

        /// The image a `pitm` item is a thumbnail of, when the file names a thumbnail as its primary item (libheif's
        /// own writer made such files while its thumbnail-assignment arguments were swapped); nil when the
        /// primary is a top-level image, as it should be. Readers (`heif-info`, pillow-heif, browsers) show the
        /// top-level image that lists the item among its thumbnails, else the first top-level image: so does
        /// Darkroom, rather than showing a thumbnail at its own size and shape.
        private static func masterOfPrimary(in context: OpaquePointer) -> OpaquePointer? {
            var primaryID: heif_item_id = 0
            guard heif_context_get_primary_image_ID(context, &primaryID).code == heif_error_Ok,
                heif_context_is_top_level_image_ID(context, primaryID) == 0
            else { return nil }
            let count = Int(heif_context_get_number_of_top_level_images(context))
            guard count > 0 else { return nil }
            var ids = [heif_item_id](repeating: 0, count: count)
            let listed = Int(heif_context_get_list_of_top_level_image_IDs(context, &ids, Int32(count)))
            var fallback: OpaquePointer?
            for id in ids.prefix(listed) {
                var handle: OpaquePointer?
                guard heif_context_get_image_handle(context, id, &handle).code == heif_error_Ok, let handle else {
                    continue
                }
                if Self.thumbnailIDs(of: handle).contains(primaryID) {
                    if let fallback { heif_image_handle_release(fallback) }
                    return handle
                }
                if fallback == nil { fallback = handle } else { heif_image_handle_release(handle) }
            }
            return fallback
        }

        deinit {
            heif_image_handle_release(primary)
            heif_context_free(context)
        }

        /// The item IDs of the thumbnails `handle` lists (its `thmb` references).
        private static func thumbnailIDs(of handle: OpaquePointer) -> [heif_item_id] {
            let count = Int(heif_image_handle_get_number_of_thumbnails(handle))
            guard count > 0 else { return [] }
            var ids = [heif_item_id](repeating: 0, count: count)
            let listed = Int(heif_image_handle_get_list_of_thumbnail_IDs(handle, &ids, Int32(count)))
            return Array(ids.prefix(max(0, min(listed, count))))
        }

        /// The primary image's thumbnail handles with their sizes, largest first. The caller releases them.
        func thumbnails() -> [(handle: OpaquePointer, width: Int, height: Int)] {
            var result: [(handle: OpaquePointer, width: Int, height: Int)] = []
            for id in Self.thumbnailIDs(of: primary) {
                var thumb: OpaquePointer?
                guard heif_image_handle_get_thumbnail(primary, id, &thumb).code == heif_error_Ok, let thumb else {
                    continue
                }
                result.append(
                    (thumb, Int(heif_image_handle_get_width(thumb)), Int(heif_image_handle_get_height(thumb))))
            }
            return result.sorted { $0.width * $0.height > $1.width * $1.height }
        }
    }

    /// Reads the header: displayed size, alpha, bit depth, thumbnails and item count; no pixels decoded.
    static func probe(_ bytes: UnsafeRawBufferPointer, isComplete: Bool, limits: DecodeLimits) throws(ProbeStop)
        -> ImageProbe
    {
        let container: Container
        do { container = try Container(bytes, limits: limits) } catch {
            if !isComplete { throw .needMoreData(atLeast: bytes.count * 2) }
            throw .failed(error)
        }
        let h = container.primary
        let thumbs = container.thumbnails()
        defer { for t in thumbs { heif_image_handle_release(t.handle) } }
        let width = Int(heif_image_handle_get_width(h))
        let height = Int(heif_image_handle_get_height(h))
        let codedWidth = Int(heif_image_handle_get_ispe_width(h))
        let codedHeight = Int(heif_image_handle_get_ispe_height(h))
        let details = HEIFDetails(
            codedWidth: codedWidth, codedHeight: codedHeight,
            hasTransformations: codedWidth != width || codedHeight != height,
            imageCount: Int(heif_context_get_number_of_top_level_images(container.context)),
            thumbnailSizes: thumbs.map { [$0.width, $0.height] }, codec: "hevc")
        let profileType = heif_image_handle_get_color_profile_type(h)
        let hasICC = profileType == heif_color_profile_type_prof || profileType == heif_color_profile_type_rICC
        var probe = ImageProbe(
            format: .heic, width: width, height: height, hasAlpha: heif_image_handle_has_alpha_channel(h) != 0,
            hasICCProfile: hasICC, bitDepth: max(8, Int(heif_image_handle_get_luma_bits_per_pixel(h))),
            heif: details)
        if let cicp = hdrCICP(h, reading: readColor(h, limits: limits)) {
            probe.hdr = HDRDetails(
                primaries: cicp.primaries, transfer: cicp.transfer, hasICC: false,
                lightLevel: ISOBMFFBoxes.contentLightLevel(bytes))
        }
        return probe
    }

    /// The primary image's `colr` box: an ICC profile (`prof`/`rICC`) or CICP (`nclx`).
    static func readColor(_ bytes: UnsafeRawBufferPointer, limits: DecodeLimits) -> ColorReading {
        guard let container = try? Container(bytes, limits: limits) else { return .none }
        return readColor(container.primary, limits: limits)
    }

    static func readColor(_ handle: OpaquePointer, limits: DecodeLimits) -> ColorReading {
        let type = heif_image_handle_get_color_profile_type(handle)
        if type == heif_color_profile_type_prof || type == heif_color_profile_type_rICC {
            let size = heif_image_handle_get_raw_color_profile_size(handle)
            guard size <= limits.maxColorProfileBytes else {
                return ColorReading(
                    color: nil,
                    problem:
                        "the ICC profile of \(size) bytes exceeds maxColorProfileBytes (\(limits.maxColorProfileBytes))"
                )
            }
            var data = [UInt8](repeating: 0, count: size)
            guard size > 0, heif_image_handle_get_raw_color_profile(handle, &data).code == heif_error_Ok else {
                return ColorReading(color: nil, problem: "the HEIF colr profile could not be read")
            }
            return ColorReading(color: .icc(data))
        }
        if type == heif_color_profile_type_nclx {
            var nclx: UnsafeMutablePointer<heif_color_profile_nclx>?
            guard heif_image_handle_get_nclx_color_profile(handle, &nclx).code == heif_error_Ok, let nclx else {
                return .none
            }
            defer { heif_nclx_color_profile_free(nclx) }
            let cicp = EmbeddedColor.CICP(
                primaries: Int(nclx.pointee.color_primaries.rawValue),
                transfer: Int(nclx.pointee.transfer_characteristics.rawValue),
                matrix: Int(nclx.pointee.matrix_coefficients.rawValue),
                fullRange: nclx.pointee.full_range_flag != 0)
            return cicp.isSRGB ? ColorReading(color: nil, srgbSource: .cicp) : ColorReading(color: .cicp(cicp))
        }
        return .none
    }

    func decode(
        _ bytes: UnsafeRawBufferPointer, probe: ImageProbe, plan: DecodePlan, working: PixelFormat,
        options: DecodeOptions, allocate: BitmapAllocator
    ) throws(DarkroomImageError) -> CodecOutput {
        let container = try Container(bytes, limits: options.limits)
        let thumbs = container.thumbnails()
        defer { for t in thumbs { heif_image_handle_release(t.handle) } }
        // The smallest thumbnail that still covers the output (at the shrink-on-load margin), else the primary.
        // libheif applies each thumbnail's own clap/irot/imir; one whose displayed shape is not the primary's
        // (written without the primary's crop or rotation, or another picture altogether) is passed over, and so
        // is one no smaller than the primary, which would cost more to decode than the primary itself.
        // For a quick preview (``DecodeOptions/embeddedThumbnailOnly``) the largest such thumbnail is taken even when
        // it does not cover the output, and a file without one is refused rather than decoded whole.
        let margin = max(options.shrinkOnLoadMargin, 1)
        let usable = thumbs.filter { Self.canStandIn($0.width, $0.height, for: probe) }
        let covering = usable.last {
            Double($0.width) >= Double(plan.outputWidth) * margin * plan.sourceRect.width / Double(plan.sourceWidth)
                && Double($0.height) >= Double(plan.outputHeight) * margin * plan.sourceRect.height
                    / Double(plan.sourceHeight)
        }
        let chosen = options.embeddedThumbnailOnly ? covering ?? usable.first : covering
        if options.embeddedThumbnailOnly && chosen == nil {
            throw DarkroomImageError(.unsupportedFeature, "the HEIF image has no thumbnail of its shape")
        }
        let handle = chosen?.handle ?? container.primary
        let width = chosen?.width ?? probe.width
        let height = chosen?.height ?? probe.height
        let hasAlpha = heif_image_handle_has_alpha_channel(handle) != 0
        let bitsPerSample = max(8, Int(heif_image_handle_get_luma_bits_per_pixel(handle)))
        let frameBytes = Self.workingBytes(width: width, height: height, hasAlpha: hasAlpha, bitDepth: bitsPerSample)
        guard frameBytes + plan.outputBytes(working) <= options.limits.maxDecodedBytes else {
            throw DarkroomImageError(
                .limitExceeded,
                "decoding a \(width)×\(height) HEIC needs \(frameBytes) bytes of frames, over maxDecodedBytes (\(options.limits.maxDecodedBytes))"
            )
        }
        guard let decodeOptions = heif_decoding_options_alloc() else {
            throw DarkroomImageError(.outOfMemory, "could not allocate HEIF decoding options")
        }
        defer { heif_decoding_options_free(decodeOptions) }
        let meter = PixelMemory.allocated(frameBytes)  // libheif's frames, counted while they exist
        defer { PixelMemory.released(frameBytes, meter: meter) }
        let colorReading = Self.readColor(container.primary, limits: options.limits)
        // The primary's signal as the probe read it; a thumbnail item has its own colour, read here
        let handleReading = chosen == nil ? colorReading : Self.readColor(handle, limits: options.limits)
        let signal =
            chosen == nil
            ? probe.hdr.flatMap { Self.hdrSignal(handle, details: $0) }
            : Self.hdrSignal(handle, reading: handleReading)
        if let hdr = try decodeHDR(
            handle, signal: signal, reading: handleReading, width: width, height: height, hasAlpha: hasAlpha,
            plan: plan, options: options, decodeOptions: decodeOptions, allocate: allocate)
        {
            return CodecOutput(
                bitmap: hdr.bitmap, shrinkDenominator: hdr.shrinkDenominator, colorReading: hdr.colorReading,
                usedEmbeddedThumbnail: chosen != nil)
        }
        let destination = try RowDestination(
            plan: plan, sourceWidth: width, sourceHeight: height, format: .bgra8Premultiplied,
            isOpaque: !hasAlpha, filter: options.filter, allocate: allocate)
        let rows = destination.requiredRows.clamped(to: 0..<height)
        let row = try ScratchBuffer<UInt8>(count: width * 4, zeroed: false)
        // The decoder's own planes, converted a row at a time; libheif's RGB conversion only for what that
        // does not cover (premultiplied alpha, unknown matrices). YCbCr 4:2:0 is asked for explicitly: left to
        // choose, libheif 1.15 assembles grid images as planar RGB.
        var image: OpaquePointer?
        var error: heif_error
        if convertsPlanes {
            error = heif_decode_image(handle, &image, heif_colorspace_YCbCr, heif_chroma_420, decodeOptions)
            guard error.code == heif_error_Ok, let planar = image else { throw Self.failure(error, "decoding") }
            if let converter = Self.planes(planar, handle: handle, hasAlpha: hasAlpha, width: width, height: height) {
                defer { heif_image_release(planar) }
                for y in rows {
                    converter.convert(row: y, width: width, into: row.pointer)
                    destination.consume(row: row.pointer, y: y)
                }
                return CodecOutput(
                    bitmap: destination.finish(), colorReading: colorReading, usedEmbeddedThumbnail: chosen != nil)
            }
            heif_image_release(planar)
            image = nil
        }
        decodeOptions.pointee.convert_hdr_to_8bit = 1
        error = heif_decode_image(
            handle, &image, heif_colorspace_RGB,
            hasAlpha ? heif_chroma_interleaved_RGBA : heif_chroma_interleaved_RGB, decodeOptions)
        guard error.code == heif_error_Ok, let image else { throw Self.failure(error, "decoding") }
        defer { heif_image_release(image) }
        var stride: Int32 = 0
        guard let plane = heif_image_get_plane_readonly(image, heif_channel_interleaved, &stride),
            Int(heif_image_get_primary_width(image)) == width, Int(heif_image_get_primary_height(image)) == height
        else { throw DarkroomImageError(.corrupt, "libheif returned an image of an unexpected size or layout") }
        let premultiplied = heif_image_is_premultiplied_alpha(image) != 0
        for y in rows {
            let source = plane + y * Int(stride)
            if hasAlpha {
                PixelConversion.convertRow(
                    source, from: premultiplied ? .bgra8Premultiplied : .rgba8, row.pointer,
                    to: .bgra8Premultiplied, width: width)
                if premultiplied { Self.swapRedBlue(row.pointer, width: width) }
            } else {
                Self.rgbToBGRA(source, row.pointer, width: width)
            }
            destination.consume(row: row.pointer, y: y)
        }
        return CodecOutput(
            bitmap: destination.finish(), colorReading: colorReading, usedEmbeddedThumbnail: chosen != nil)
    }

    /// One plane of a decoded image, when it covers `w × h` samples of `depth` bits; nil otherwise.
    static func plane(_ image: OpaquePointer, _ channel: heif_channel, _ w: Int, _ h: Int, depth: Int)
        -> YCbCrRows.Plane?
    {
        var stride: Int32 = 0
        guard let base = heif_image_get_plane_readonly(image, channel, &stride),
            Int(heif_image_get_width(image, channel)) >= w, Int(heif_image_get_height(image, channel)) >= h,
            Int(heif_image_get_bits_per_pixel_range(image, channel)) == depth
        else { return nil }
        return YCbCrRows.Plane(base: base, stride: Int(stride))
    }

    /// A row converter over a decoded YCbCr image's planes, or nil when it is another layout.
    static func planes(_ image: OpaquePointer, handle: OpaquePointer, hasAlpha: Bool, width: Int, height: Int)
        -> YCbCrRows?
    {
        guard heif_image_get_colorspace(image) == heif_colorspace_YCbCr,
            Int(heif_image_get_primary_width(image)) == width, Int(heif_image_get_primary_height(image)) == height,
            !hasAlpha || heif_image_is_premultiplied_alpha(image) == 0
        else { return nil }
        let shift: (Int, Int)
        switch heif_image_get_chroma_format(image) {
        case heif_chroma_420: shift = (1, 1)
        case heif_chroma_422: shift = (1, 0)
        case heif_chroma_444: shift = (0, 0)
        default: return nil
        }
        let depth = Int(heif_image_get_bits_per_pixel_range(image, heif_channel_Y))
        let plane = { (channel: heif_channel, w: Int, h: Int) in Self.plane(image, channel, w, h, depth: depth) }
        let cw = (width + (1 << shift.0) - 1) >> shift.0
        let ch = (height + (1 << shift.1) - 1) >> shift.1
        guard let y = plane(heif_channel_Y, width, height), let cb = plane(heif_channel_Cb, cw, ch),
            let cr = plane(heif_channel_Cr, cw, ch)
        else { return nil }
        var alpha: YCbCrRows.Plane?
        if hasAlpha {
            guard let a = plane(heif_channel_Alpha, width, height) else { return nil }
            alpha = a
        }
        let coding = sampleCoding(image)
        return YCbCrRows(
            y: y, cb: cb, cr: cr, alpha: alpha, shiftX: shift.0, shiftY: shift.1, bitDepth: depth,
            matrix: coding.matrix, fullRange: coding.fullRange)
    }

    /// The Y'CbCr matrix and range of a decoded image's samples as libheif's own RGB conversion reads them: the
    /// decoded image's nclx, else libheif's defaults (BT.601, full range) — not the `colr` box of the handle.
    /// libheif 1.15 attaches no nclx to a decoded image, so there every image converts as BT.601, as libheif's own
    /// conversion does; files written through libheif (pillow-heif among them) are coded that way whatever matrix
    /// their `colr` box names (a 4:4:4 PQ HEIC naming BT.2020 converted with BT.2020 weights comes out with green and
    /// blue levels off). Following libheif keeps Darkroom's planes equal to libheif's RGB for every file it reads.
    static func sampleCoding(_ image: OpaquePointer) -> (matrix: Int, fullRange: Bool) {
        var nclx: UnsafeMutablePointer<heif_color_profile_nclx>?
        guard heif_image_get_nclx_color_profile(image, &nclx).code == heif_error_Ok, let nclx else {
            return (6, true)
        }
        defer { heif_nclx_color_profile_free(nclx) }
        return (Int(nclx.pointee.matrix_coefficients.rawValue), nclx.pointee.full_range_flag != 0)
    }

    /// Whether a `width × height` thumbnail has the shape of a `primaryWidth × primaryHeight` image to within a
    /// pixel of rounding: some scale `s` puts `width` within a pixel of `primaryWidth · s` and `height` within a
    /// pixel of `primaryHeight · s`. The intervals `(width ± 1) / primaryWidth` and `(height ± 1) / primaryHeight`
    /// overlap exactly when `|width · primaryHeight − height · primaryWidth| ≤ primaryWidth + primaryHeight`.
    static func hasSameShape(_ width: Int, _ height: Int, as primaryWidth: Int, _ primaryHeight: Int) -> Bool {
        guard width > 0, height > 0, primaryWidth > 0, primaryHeight > 0 else { return false }
        let crossError = abs(width * primaryHeight - height * primaryWidth)
        return crossError <= primaryWidth + primaryHeight
    }

    /// Whether a `width × height` thumbnail item may stand in for the image `probe` describes: smaller than it on
    /// both axes (a larger one costs more to decode than the image) and of its shape (``hasSameShape(_:_:as:_:)``).
    static func canStandIn(_ width: Int, _ height: Int, for probe: ImageProbe) -> Bool {
        width < probe.width && height < probe.height && hasSameShape(width, height, as: probe.width, probe.height)
    }

    /// The memory libheif holds while decoding a `width × height` image: its YCbCr planes (4:4:4 at most, two
    /// bytes a sample above 8 bits, plus alpha) and the interleaved 8-bit RGB(A) conversion.
    package static func workingBytes(width: Int, height: Int, hasAlpha: Bool, bitDepth: Int) -> Int {
        let pixels = width * height
        let sample = bitDepth > 8 ? 2 : 1
        return pixels * sample * (hasAlpha ? 4 : 3) + pixels * (hasAlpha ? 4 : 3)
    }

    /// RGB → opaque BGRA.
    static func rgbToBGRA(_ source: UnsafePointer<UInt8>, _ destination: UnsafeMutablePointer<UInt8>, width: Int) {
        for x in 0..<width {
            destination[4 * x] = source[3 * x + 2]
            destination[4 * x + 1] = source[3 * x + 1]
            destination[4 * x + 2] = source[3 * x]
            destination[4 * x + 3] = 255
        }
    }

    /// Swaps bytes 0 and 2 of every pixel (RGBA ↔ BGRA).
    static func swapRedBlue(_ pixels: UnsafeMutablePointer<UInt8>, width: Int) {
        for x in 0..<width { swap(&pixels[4 * x], &pixels[4 * x + 2]) }
    }

    /// Maps a libheif error to a typed one.
    static func failure(_ error: heif_error, _ what: String) -> DarkroomImageError {
        let codec = error.message.map { String(cString: $0) }
        switch error.code {
        case heif_error_Invalid_input where error.subcode == heif_suberror_End_of_data:
            return DarkroomImageError(.truncated, "the HEIF data ends early (\(what))", codecMessage: codec)
        case heif_error_Unsupported_feature, heif_error_Unsupported_filetype:
            return DarkroomImageError(
                .unsupportedFeature, "this HEIF variant is not supported (\(what))", codecMessage: codec)
        case heif_error_Memory_allocation_error:
            return DarkroomImageError(
                .limitExceeded, "libheif could not allocate memory (\(what))", codecMessage: codec)
        case heif_error_Usage_error where error.subcode == heif_suberror_Security_limit_exceeded:
            return DarkroomImageError(
                .limitExceeded, "the HEIF image exceeds a configured limit (\(what))", codecMessage: codec)
        default:
            return DarkroomImageError(.corrupt, "the HEIF data is corrupt (\(what))", codecMessage: codec)
        }
    }
}
