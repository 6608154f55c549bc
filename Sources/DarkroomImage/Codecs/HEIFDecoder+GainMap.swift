import CHeif
import Foundation

/// Apple's HDR gain map in an iPhone HEIC: an auxiliary image of the primary (`auxC`
/// `urn:com:apple:photo:2020:aux:hdrgainmap`, monochrome, usually half the primary's size) whose headroom is in the
/// primary's EXIF maker note (``AppleHDRHeadroom``). ISO 21496-1 gain maps in HEIF (`tmap` items) need libheif 1.19;
/// the libheif this builds with (1.15) does not list them.
extension HEIFDecoder {
    /// The auxiliary type Apple's camera gives the gain map.
    static let appleGainMapType = "urn:com:apple:photo:2020:aux:hdrgainmap"

    /// The gain map of a HEIC, or nil when it has none: its size, and its headroom as ``GainMapMetadata`` (gains
    /// 0 to log2 headroom, no offsets, applying in full from that headroom); a warning when the map is over
    /// ``DecodeLimits/maxGainMapPixels`` or the maker note's values are missing or beyond the EXIF budget.
    /// Cost: the container's boxes, the auxiliary handle and the EXIF block; no pixels.
    static func gainMap(_ bytes: UnsafeRawBufferPointer, limits: DecodeLimits) -> GainMapDetails? {
        guard let container = try? Container(bytes, limits: limits), let map = container.appleGainMap() else {
            return nil
        }
        defer { heif_image_handle_release(map) }
        let width = Int(heif_image_handle_get_width(map))
        let height = Int(heif_image_handle_get_height(map))
        var details = GainMapDetails(
            container: "heif-aux", metadataFormat: "apple-makernote", width: width, height: height, channels: 1,
            byteCount: 0, metadata: nil, warning: nil)
        if width * height > limits.maxGainMapPixels {
            details.warning =
                "the gain map is \(width)×\(height), over maxGainMapPixels (\(limits.maxGainMapPixels)): the base image is shown"
            return details
        }
        switch container.exif(maxBytes: limits.maxGainMapMetadataBytes) {
        case .none:
            details.warning = "the image has no EXIF block, where Apple's gain map headroom is: the base image is shown"
        case .tooLarge(let count):
            details.warning =
                "the EXIF block is \(count) bytes, over maxGainMapMetadataBytes (\(limits.maxGainMapMetadataBytes)): the base image is shown"
        case .block(let exif):
            guard let apple = exif.withUnsafeBytes({ AppleHDRHeadroom(exif: $0) }), apple.maker33.isFinite,
                apple.maker48.isFinite
            else {
                details.warning =
                    "the maker note holds no HDR headroom (Apple tags 0x21 and 0x30): the base image is shown"
                return details
            }
            details.metadata = GainMapMetadata(appleHeadroom: apple.headroom)
        }
        return details
    }

    /// Decodes the gain map of a HEIC to `width` × `height` (at most its own size) in gray8, libheif applying the
    /// map's own transformations. Cost: one HEVC decode of the whole map (its decoder's plane and libheif's, counted
    /// against ``DecodeLimits/maxDecodedBytes``) and a resample.
    /// - Throws: ``DarkroomImageError`` when there is no gain map, it is over the limits, or it cannot be decoded.
    static func decodeGainMap(
        _ bytes: UnsafeRawBufferPointer, width: Int, height: Int, filter: ResamplingFilter, limits: DecodeLimits
    ) throws(DarkroomImageError) -> Bitmap {
        let container = try Container(bytes, limits: limits)
        guard let map = container.appleGainMap() else {
            throw DarkroomImageError(.unsupportedFeature, "the HEIC has no gain map")
        }
        defer { heif_image_handle_release(map) }
        let frameBytes = 2 * Int(heif_image_handle_get_width(map)) * Int(heif_image_handle_get_height(map))
        guard frameBytes <= limits.maxDecodedBytes else {
            throw DarkroomImageError(
                .limitExceeded,
                "decoding the gain map needs \(frameBytes) bytes of frames, over maxDecodedBytes (\(limits.maxDecodedBytes))"
            )
        }
        let meter = PixelMemory.allocated(frameBytes)  // the HEVC decoder's plane and libheif's, while they exist
        defer { PixelMemory.released(frameBytes, meter: meter) }
        guard let decodeOptions = heif_decoding_options_alloc() else {
            throw DarkroomImageError(.outOfMemory, "could not allocate HEIF decoding options")
        }
        defer { heif_decoding_options_free(decodeOptions) }
        decodeOptions.pointee.convert_hdr_to_8bit = 1
        var image: OpaquePointer?
        let error = heif_decode_image(map, &image, heif_colorspace_monochrome, heif_chroma_monochrome, decodeOptions)
        guard error.code == heif_error_Ok, let image else { throw failure(error, "decoding the gain map") }
        defer { heif_image_release(image) }
        var stride: Int32 = 0
        let mapWidth = Int(heif_image_get_primary_width(image))
        let mapHeight = Int(heif_image_get_primary_height(image))
        guard let plane = heif_image_get_plane_readonly(image, heif_channel_Y, &stride), mapWidth > 0, mapHeight > 0
        else { throw DarkroomImageError(.corrupt, "libheif returned a gain map without a luma plane") }
        let plan = try OutputGeometry(
            size: .stretch(width: min(width, mapWidth), height: min(height, mapHeight)), appliesOrientation: false
        ).plan(for: ImageProbe(format: .heic, width: mapWidth, height: mapHeight))
        let destination = try RowDestination(
            plan: plan, sourceWidth: mapWidth, sourceHeight: mapHeight, format: .gray8, isOpaque: true,
            filter: filter, allocate: Bitmap.allocateOnHeap)
        for y in destination.requiredRows.clamped(to: 0..<mapHeight) {
            destination.consume(row: plane + y * Int(stride), y: y)
        }
        return destination.finish()
    }
}

extension HEIFDecoder {
    /// An Apple gain map (gray8) recoded as an ISO 21496-1 map of gains 0 to log2 `headroom`, gamma 1:
    /// gray8, each sample `s` becoming `log2(1 + (headroom − 1) · sRGB_EOTF(s)) / log2 headroom`, so that
    /// ``GainMapMetadata/init(appleHeadroom:)`` read as ISO 21496-1 gives Apple's gain. Cost: one pass, a 256-entry
    /// table.
    static func isoCoded(_ map: Bitmap, headroom: Double) throws(DarkroomImageError) -> Bitmap {
        let stops = log2(max(headroom, 1))
        let table: [UInt8] = (0..<256).map { v in
            guard stops > 0 else { return 0 }
            let gain = 1 + (exp2(stops) - 1) * SRGBTransfer.toLinear(Double(v) / 255)
            return UInt8(min(max((255 * log2(gain) / stops).rounded(), 0), 255))
        }
        let out = try Bitmap.allocateOnHeap(width: map.width, height: map.height, format: .gray8, isOpaque: true)
        for y in 0..<map.height {
            let source = map.row(y).assumingMemoryBound(to: UInt8.self)
            let target = out.row(y).assumingMemoryBound(to: UInt8.self)
            for x in 0..<map.width { target[x] = table[Int(source[x])] }
        }
        return out
    }
}

extension HEIFDecoder.Container {
    /// The primary image's Apple gain map handle (the caller releases it), or nil when it has none.
    func appleGainMap() -> OpaquePointer? {
        // Alpha (2) and depth (4) auxiliary images are left out: LIBHEIF_AUX_IMAGE_FILTER_OMIT_ALPHA | _OMIT_DEPTH
        let filter: Int32 = 2 | 4
        let count = Int(heif_image_handle_get_number_of_auxiliary_images(primary, filter))
        guard count > 0 else { return nil }
        var ids = [heif_item_id](repeating: 0, count: count)
        let listed = Int(heif_image_handle_get_list_of_auxiliary_image_IDs(primary, filter, &ids, Int32(count)))
        for id in ids.prefix(max(0, min(listed, count))) {
            var aux: OpaquePointer?
            guard heif_image_handle_get_auxiliary_image_handle(primary, id, &aux).code == heif_error_Ok, let aux else {
                continue
            }
            var type: UnsafePointer<CChar>?
            if heif_image_handle_get_auxiliary_type(aux, &type).code == heif_error_Ok, let name = type {
                let isGainMap = String(cString: name) == HEIFDecoder.appleGainMapType
                heif_image_handle_free_auxiliary_types(aux, &type)
                if isGainMap { return aux }
            }
            heif_image_handle_release(aux)
        }
        return nil
    }

    /// What an EXIF read found.
    enum ExifBlock {
        case none
        case tooLarge(Int)
        /// The TIFF-structured payload (libheif's 4-byte header offset skipped).
        case block([UInt8])
    }

    /// The primary image's first EXIF block, if it is at most `maxBytes` long.
    func exif(maxBytes: Int) -> ExifBlock {
        var id: heif_item_id = 0
        guard heif_image_handle_get_list_of_metadata_block_IDs(primary, "Exif", &id, 1) == 1 else { return .none }
        let size = heif_image_handle_get_metadata_size(primary, id)
        guard size > 4 else { return .none }
        guard size <= maxBytes else { return .tooLarge(size) }
        var data = [UInt8](repeating: 0, count: size)
        guard heif_image_handle_get_metadata(primary, id, &data).code == heif_error_Ok else { return .none }
        // The block starts with the offset of the TIFF header past these 4 bytes (ISO/IEC 23008-12 A.2.1)
        let offset = Int(data[0]) << 24 | Int(data[1]) << 16 | Int(data[2]) << 8 | Int(data[3])
        guard offset >= 0, 4 + offset < size else { return .none }
        return .block(Array(data[(4 + offset)...]))
    }
}

extension HEIFDecoder.Container {
    /// The primary image's XMP packet (a `mime` item of type `application/rdf+xml`), if it is at most `maxBytes`
    /// long; nil when there is none.
    func xmp(maxBytes: Int) -> Substring? {
        var ids = [heif_item_id](repeating: 0, count: 8)
        let count = Int(heif_image_handle_get_list_of_metadata_block_IDs(primary, "mime", &ids, Int32(ids.count)))
        for id in ids.prefix(max(0, count)) {
            guard let type = heif_image_handle_get_metadata_content_type(primary, id),
                String(cString: type) == "application/rdf+xml"
            else { continue }
            let size = heif_image_handle_get_metadata_size(primary, id)
            guard size > 0, size <= maxBytes else { return nil }
            var data = [UInt8](repeating: 0, count: size)
            guard heif_image_handle_get_metadata(primary, id, &data).code == heif_error_Ok else { return nil }
            return Substring(decoding: data, as: UTF8.self)
        }
        return nil
    }
}

extension GainMapMetadata {
    /// The parameters an Apple gain map of linear `headroom` stands for: gains from 1 to `headroom`, no offsets, the
    /// base shown from headroom 0 and the map in full from log2 `headroom`. The sample-to-gain curve is Apple's,
    /// not ISO 21496-1's (``GainMapDetails/metadataFormat`` `apple-makernote` says so): `gamma` and the range are
    /// recorded for display only.
    init(appleHeadroom headroom: Double) {
        self.init(
            gainMapMin: [0], gainMapMax: [log2(max(headroom, 1))], gamma: [1], baseOffset: [0], alternateOffset: [0],
            baseHeadroom: 0, alternateHeadroom: log2(max(headroom, 1)))
    }
}
