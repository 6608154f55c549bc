/// BMP through ``DIBReader``: rows read one at a time into the resampler (RLE files through one index plane).
struct BMPDecoder: CodecDecoder {
    let format = ImageFileFormat.bmp

    /// The header: size, depth, alpha (bitfields with an alpha mask), an embedded V5 profile.
    static func probe(_ reader: ByteReader) throws(ProbeStop) -> ImageProbe {
        let dib = try DIBReader.parseFile(reader)
        return ImageProbe(
            format: .bmp, width: dib.width, height: dib.height, hasAlpha: dib.hasAlpha,
            hasICCProfile: dib.iccProfile != nil, bitDepth: dib.bitCount)
    }

    func decode(
        _ bytes: UnsafeRawBufferPointer, probe: ImageProbe, plan: DecodePlan, working: PixelFormat,
        options: DecodeOptions, allocate: BitmapAllocator
    ) throws(DarkroomImageError) -> CodecOutput {
        let dib = try Self.parsed { () throws(ProbeStop) in try DIBReader.parseFile(ByteReader(bytes)) }
        return try Self.decode(dib, bytes, plan: plan, options: options, allocate: allocate)
    }

    /// Streams `dib`'s rows into a destination of the plan's size.
    static func decode(
        _ dib: DIBReader, _ bytes: UnsafeRawBufferPointer, plan: DecodePlan, options: DecodeOptions,
        allocate: BitmapAllocator
    ) throws(DarkroomImageError) -> CodecOutput {
        let destination = try RowDestination(
            plan: plan, sourceWidth: dib.width, sourceHeight: dib.height, format: .bgra8Premultiplied,
            isOpaque: !dib.hasAlpha, filter: options.filter, allocate: allocate)
        try dib.decodeRows(
            bytes, rows: destination.requiredRows.clamped(to: 0..<dib.height),
            maxBytes: options.limits.maxDecodedBytes
        ) { row, y in destination.consume(row: row, y: y) }
        return CodecOutput(bitmap: destination.finish())
    }

    /// Runs a header parser over complete input: running out of bytes means the file is truncated.
    static func parsed<T>(_ body: () throws(ProbeStop) -> T) throws(DarkroomImageError) -> T {
        do throws(ProbeStop) { return try body() } catch {
            switch error {
            case .failed(let failure): throw failure
            case .needMoreData: throw DarkroomImageError(.truncated, "the image data ends inside its header")
            }
        }
    }
}

/// ICO and CUR: the directory's entries, each a PNG or a BMP without its file header; the entry that best fits
/// the output is decoded (the smallest at least as large, else the largest; the deepest colour among equal
/// sizes). Sizes come from the entries' own headers, not the directory, which often lies.
struct ICODecoder: CodecDecoder {
    let format = ImageFileFormat.ico

    struct Entry {
        var width: Int
        var height: Int
        var bitCount: Int
        var data: Range<Int>
        var isPNG: Bool
    }

    /// Whether `reader` starts like an icon or cursor directory (reserved 0, type 1 or 2, 1…256 entries).
    static func looksLikeICO(_ reader: ByteReader) -> Bool {
        guard let reserved = try? reader.u16le(0), reserved == 0, let type = try? reader.u16le(2),
            type == 1 || type == 2, let count = try? reader.u16le(4), (1...256).contains(count),
            let firstSize = try? reader.u32le(6 + 8), firstSize > 0, let reserved2 = try? reader.u8(6 + 3),
            reserved2 == 0 || reserved2 == 255
        else { return false }
        return true
    }

    /// The directory's usable entries, deepest colour first among equal sizes.
    static func entries(_ reader: ByteReader) throws(ProbeStop) -> [Entry] {
        let count = try reader.u16le(4)
        var entries: [Entry] = []
        for i in 0..<count {
            let e = 6 + 16 * i
            let offset = try reader.u32le(e + 12)
            // A size smaller than any header is a writer's slip (some cursor tools write 8): the entry runs to the end
            let declared = try reader.u32le(e + 8)
            let size = declared < 40 && offset < reader.count ? reader.count - offset : declared
            // Only an entry's header is needed to size it; a probe of a prefix still sees every entry.
            guard offset >= 6 + 16 * count, size >= 16, size <= Int(Int32.max) else { continue }
            if offset + min(size, 64) > reader.count { throw .needMoreData(atLeast: offset + min(size, 64)) }
            let data = offset..<(offset + size)
            let present = offset..<min(offset + size, reader.count)
            let sub = ByteReader(UnsafeRawBufferPointer(rebasing: reader.bytes[present]))
            if sub.matches([0x89, 0x50, 0x4E, 0x47], at: 0) {
                // PNG caps each side at 2^31 − 1; past that the entry is damaged (and the area sort would overflow)
                guard let w = try? sub.u32be(16), let h = try? sub.u32be(20), w > 0, h > 0, w <= Int(Int32.max),
                    h <= Int(Int32.max)
                else { continue }
                let depth = (try? sub.u8(24)) ?? 8
                entries.append(Entry(width: w, height: h, bitCount: depth * 4, data: data, isPNG: true))
            } else if let dib = try? DIBReader.parse(sub, at: 0, pixelOffset: nil, isIconEntry: true) {
                entries.append(
                    Entry(width: dib.width, height: dib.height, bitCount: dib.bitCount, data: data, isPNG: false))
            }
        }
        guard !entries.isEmpty else { throw .corrupt("the icon has no entry that can be read") }
        return entries.sorted { ($0.width * $0.height, $0.bitCount) > ($1.width * $1.height, $1.bitCount) }
    }

    /// The largest entry's size (what Pillow and browsers report for the file).
    static func probe(_ reader: ByteReader) throws(ProbeStop) -> ImageProbe {
        let best = try entries(reader)[0]
        return ImageProbe(format: .ico, width: best.width, height: best.height, hasAlpha: true, bitDepth: 8)
    }

    func decode(
        _ bytes: UnsafeRawBufferPointer, probe: ImageProbe, plan: DecodePlan, working: PixelFormat,
        options: DecodeOptions, allocate: BitmapAllocator
    ) throws(DarkroomImageError) -> CodecOutput {
        let all = try BMPDecoder.parsed { () throws(ProbeStop) in try Self.entries(ByteReader(bytes)) }
        // One entry per size, the deepest first (the list is sorted that way)
        var seen = Set<[Int]>()
        let entries = all.filter { $0.data.upperBound <= bytes.count && seen.insert([$0.width, $0.height]).inserted }
        guard !entries.isEmpty else { throw DarkroomImageError(.truncated, "every icon entry ends past the file") }
        let index =
            plan.bestRendition(entries.map { ($0.width, $0.height) }, margin: options.shrinkOnLoadMargin) ?? 0
        let entry = entries[index]
        let entryBytes = UnsafeRawBufferPointer(rebasing: bytes[entry.data])
        let entryPlan = plan.retargeted(sourceWidth: entry.width, sourceHeight: entry.height)
        if entry.isPNG {
            let png = try ImageProber.probe(entryBytes, limits: options.limits)
            guard png.format == .png, png.width == entry.width, png.height == entry.height else {
                throw DarkroomImageError(.corrupt, "an icon's PNG entry does not match its header")
            }
            return try PNGDecoder().decode(
                entryBytes, probe: png, plan: entryPlan, working: .bgra8Premultiplied, options: options,
                allocate: allocate)
        }
        let dib = try BMPDecoder.parsed { () throws(ProbeStop) in
            try DIBReader.parse(ByteReader(entryBytes), at: 0, pixelOffset: nil, isIconEntry: true)
        }
        return try BMPDecoder.decode(dib, entryBytes, plan: entryPlan, options: options, allocate: allocate)
    }
}

extension BMPDecoder {
    /// A V5 header's embedded ICC profile.
    static func readColor(_ bytes: UnsafeRawBufferPointer, limits: DecodeLimits) -> ColorReading {
        guard let dib = try? DIBReader.parseFile(ByteReader(bytes)), let range = dib.iccProfile else { return .none }
        guard range.count <= limits.maxColorProfileBytes else {
            return ColorReading(
                color: nil, problem: "the ICC profile of \(range.count) bytes exceeds maxColorProfileBytes")
        }
        return ColorReading(color: .icc(Array(bytes[range])))
    }
}
