import CDarkroomSVG

/// SVG through librsvg (via the C shim), rasterized straight at the output size — never at its intrinsic size
/// first — with the plan's crop as the viewport.
///
/// Nothing outside the document is read: it is parsed without a base URL, so librsvg resolves no file, network or
/// relative reference (embedded `data:` images still render); fonts come from the system's fontconfig.
/// Documents over ``DecodeLimits/maxSVGBytes`` are refused before parsing, and a render that takes longer than
/// ``DecodeLimits/maxSVGRenderSeconds`` fails with `.limitExceeded` (librsvg's own element and reference limits
/// bound how long it can go on). It is drawn at the size asked for, enlarged past its own size when that is
/// larger (a vector has no native resolution), into a raster of at most ``DecodeLimits/maxSourcePixels``.
/// The document's size is its `width`/`height` at 96 dpi, else its `viewBox`, else 300×150 (as browsers use).
struct SVGDecoder: CodecDecoder {
    let format = ImageFileFormat.svg

    /// SVG renders of this process still drawing, those past their time limit included.
    static var rendersRunning: Int { Int(dr_svg_running()) }

    /// A parsed document.
    final class Document {
        let svg: OpaquePointer

        init(_ bytes: UnsafeRawBufferPointer, limits: DecodeLimits) throws(DarkroomImageError) {
            guard bytes.count <= limits.maxSVGBytes else {
                throw DarkroomImageError(
                    .limitExceeded, "the SVG is \(bytes.count) bytes, over maxSVGBytes (\(limits.maxSVGBytes))")
            }
            var svg: OpaquePointer?
            var message = [CChar](repeating: 0, count: 256)
            let status = dr_svg_open(bytes.baseAddress, bytes.count, &svg, &message, message.count)
            guard status == Int32(DR_SVG_OK.rawValue), let svg else {
                throw DarkroomImageError(.corrupt, "the SVG cannot be parsed", codecMessage: Self.text(message))
            }
            self.svg = svg
        }

        deinit { dr_svg_close(svg) }

        var size: (width: Double, height: Double) {
            var w = 0.0
            var h = 0.0
            var given: Int32 = 0
            dr_svg_size(svg, &w, &h, &given)
            return (w, h)
        }

        static func text(_ message: [CChar]) -> String {
            message.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        }
    }

    /// Whether the bytes start like an SVG document: optional BOM and white space, then an XML declaration,
    /// comment, doctype or `<svg`, with an `<svg` element within the first 4 KiB.
    static func looksLikeSVG(_ reader: ByteReader) -> Bool {
        let bytes = reader.bytes
        var start = 0
        if reader.matches([0xEF, 0xBB, 0xBF], at: 0) { start = 3 }
        while start < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[start]) { start += 1 }
        guard start < bytes.count, bytes[start] == 0x3C else { return false }  // "<"
        let head = bytes[start..<min(bytes.count, start + 4096)]
        let pattern = Array("<svg".utf8)
        guard head.count >= pattern.count else { return false }
        var i = head.startIndex
        while i <= head.endIndex - pattern.count {
            if head[i] == pattern[0], head[i..<(i + pattern.count)].elementsEqual(pattern) {
                let after = i + pattern.count
                return after == head.endIndex || [0x20, 0x09, 0x0A, 0x0D, 0x3E, 0x2F].contains(head[after])
            }
            i += 1
        }
        return false
    }

    /// The document's size in pixels (parsed whole: needs the complete document).
    static func probe(_ bytes: UnsafeRawBufferPointer, isComplete: Bool, limits: DecodeLimits) throws(ProbeStop)
        -> ImageProbe
    {
        guard isComplete else { throw .needMoreData(atLeast: Int.max) }
        do throws(DarkroomImageError) {
            let size = try Document(bytes, limits: limits).size
            return ImageProbe(
                format: .svg, width: max(1, Int(size.width.rounded(.up))),
                height: max(1, Int(size.height.rounded(.up))),
                hasAlpha: true)
        } catch {
            throw .failed(error)
        }
    }

    func decode(
        _ bytes: UnsafeRawBufferPointer, probe: ImageProbe, plan: DecodePlan, working: PixelFormat,
        options: DecodeOptions, allocate: BitmapAllocator
    ) throws(DarkroomImageError) -> CodecOutput {
        let document = try Document(bytes, limits: options.limits)
        // The source's pixel limit does not apply to a vector; the raster it is drawn into is bounded by it instead
        guard plan.outputWidth * plan.outputHeight <= options.limits.maxSourcePixels else {
            throw DarkroomImageError(
                .limitExceeded,
                "rendering the SVG at \(plan.outputWidth)×\(plan.outputHeight) is over maxSourcePixels (\(options.limits.maxSourcePixels))"
            )
        }
        let bitmap = try Bitmap.allocate(
            plan.outputWidth, plan.outputHeight, .bgra8Premultiplied, false, using: allocate)
        // The viewport maps the plan's source rectangle onto the output: the whole document scaled by the same
        // factors, shifted by the crop's origin.
        let sx = Double(plan.outputWidth) / plan.sourceRect.width
        let sy = Double(plan.outputHeight) / plan.sourceRect.height
        var message = [CChar](repeating: 0, count: 256)
        let status = dr_svg_render(
            document.svg, bitmap.storage.baseAddress.assumingMemoryBound(to: UInt8.self), Int32(plan.outputWidth),
            Int32(plan.outputHeight), bitmap.bytesPerRow, -plan.sourceRect.x * sx, -plan.sourceRect.y * sy,
            Double(plan.sourceWidth) * sx, Double(plan.sourceHeight) * sy, options.limits.maxSVGRenderSeconds,
            Int32(clamping: options.limits.maxSVGRendersRunning), &message, message.count)
        switch dr_svg_status(rawValue: UInt32(status)) {
        case DR_SVG_OK:
            return CodecOutput(bitmap: GIFDecoder.withMeasuredOpacity(bitmap))
        case DR_SVG_ERR_TIMEOUT:
            throw DarkroomImageError(
                .limitExceeded,
                "the SVG took longer than maxSVGRenderSeconds (\(options.limits.maxSVGRenderSeconds) s) to render")
        case DR_SVG_ERR_BUSY:
            throw DarkroomImageError(
                .limitExceeded,
                "\(options.limits.maxSVGRendersRunning) SVG renders are still running (maxSVGRendersRunning), some past their time limit"
            )
        case DR_SVG_ERR_NO_MEMORY:
            throw DarkroomImageError(.outOfMemory, "rendering the SVG ran out of memory")
        default:
            throw DarkroomImageError(.corrupt, "the SVG cannot be rendered", codecMessage: Document.text(message))
        }
    }
}
