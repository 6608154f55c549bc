import DarkroomImage

/// An upper estimate of the working memory one render needs, from the source's header, so admission can keep
/// the renders running at once inside ``ServerConfiguration/renderMemoryBudget``.
///
/// Counts the encoded bytes (the pipeline reads the file whole), the decoder's largest working buffer, and the
/// output bitmap twice (the bitmap and the encoder's copy). Decoder buffers, by format: a progressive JPEG keeps
/// every coefficient (2 bytes × up to 3 samples per pixel — the 4:4:4 bound; 4:2:0 needs half); a baseline JPEG
/// streams 16-row strips of the DCT-scaled image, or at 1/8 the shim's DC-only reader holds its planes (at most
/// 3 bytes per 8×8 block: luma plus exact 4:2:0 chroma at 2×2 per chroma block); an interlaced PNG needs its full frame (twice for 16-bit), a
/// plain one a few rows; a GIF its canvas; WebP (lossless decodes whole) the full ARGB frame; HEIC libheif's
/// YCbCr planes and full-size RGB(A) (an embedded thumbnail would need less); AVIF the decoded YUV planes.
/// Cost of estimating: one header probe (a 64 KiB read at most).
enum RenderCost {
    /// Remote sources are not probed before fetching; they count this much.
    static let remoteEstimate = 16 << 20

    /// The estimate for `source`: from its header when there is one, else its file size (a header that could not
    /// be read), else ``remoteEstimate``.
    static func estimate(probe: ImageProbe?, source: ResolvedSource, parameters: ThumbnailParameters) -> Int {
        guard case .file(_, _, let size, _) = source else { return remoteEstimate }
        guard let probe else { return size }
        return estimate(probe: probe, fileBytes: size, parameters: parameters)
    }

    static func estimate(probe: ImageProbe, fileBytes: Int, parameters: ThumbnailParameters) -> Int {
        let w = probe.width
        let h = probe.height
        let pixels = w * h
        let decoder: Int
        switch probe.format {
        case .jpeg:
            decoder =
                probe.isProgressive
                ? pixels * (probe.isGrayscale ? 2 : 6)
                : max(1, w / 8) * 16 * 4 * 8 + Self.dcReaderBytes(width: w, height: h)
        case .png:
            decoder = probe.isProgressive ? pixels * 4 * (probe.bitDepth > 8 ? 2 : 1) : w * 8 * 4
        case .gif:
            decoder = pixels * 4
        case .webp:
            decoder = pixels * 4
        case .heic:
            decoder = HEIFDecoder.workingBytes(width: w, height: h, hasAlpha: probe.hasAlpha, bitDepth: probe.bitDepth)
        case .avif:
            decoder = AVIFDecoder.planeBytes(
                width: w, height: h, hasAlpha: probe.hasAlpha, bitDepth: probe.bitDepth,
                isGrayscale: probe.isGrayscale)
        case .jxl:
            // libjxl's working image (three float planes) and the row window
            decoder = pixels * 12 + w * 512 * 4
        case .tiff:
            // a strip or row of tiles at a time, or one whole strip for files written as a single strip
            decoder = w * 512 * 4 * max(1, probe.bitDepth / 8)
        case .raw:
            // a half-size develop: the sensor data and libraw's 16-bit half image (a preview costs far less)
            decoder = pixels * 2 + pixels / 4 * 11
        case .svg:
            decoder = 0  // rendered at the output's size
        case .bmp, .ico:
            decoder = w * 4 + (probe.bitDepth <= 8 ? pixels : 0)
        case .video:
            // FFmpeg's decoded frame and the reference frames it keeps (a few, in 4:2:0 at up to 16 bits)
            decoder = pixels * 3 / 2 * max(1, probe.bitDepth / 8) * 6
        }
        let output = outputPixels(probe: probe, parameters: parameters) * 4 * 2
        if probe.frameCount > 1 && !parameters.still {
            // An animation: the canvas and a second one for "previous" disposal (libwebp keeps two), the bytes copied
            // once for the decoder, and per output frame the bitmap, its straight-alpha copy and the encoder's two
            // canvases.
            return fileBytes * 2 + pixels * 4 * 2 + output * 2
        }
        return fileBytes + decoder + output
    }

    /// The DC-only JPEG reader's planes for a `width × height` sequential JPEG: one byte per 8×8 luma block, and
    /// for exact 4:2:0 chroma four bytes per 16×16 chroma block in each of two planes — 3 bytes a block at most.
    static func dcReaderBytes(width: Int, height: Int) -> Int {
        ((width + 15) / 16 * 2) * ((height + 15) / 16 * 2) * 3
    }

    /// The output's pixel count: the decode's own output size for the request's geometry (the one sizing rule the
    /// decoders plan with); 0 for a geometry the decode would refuse.
    static func outputPixels(probe: ImageProbe, parameters: ThumbnailParameters) -> Int {
        guard let size = try? parameters.geometry.outputSize(for: probe) else { return 0 }
        return size.width * size.height
    }
}
