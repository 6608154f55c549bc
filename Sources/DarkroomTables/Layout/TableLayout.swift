import DarkroomImage
import DarkroomSupport

/// The geometry of a table file: where every entry, trailer and chunk lives. Pure arithmetic, no I/O.
///
/// ```
/// file:   [header page][chunk 0][chunk 1]…            chunks are whole multiples of the page size
/// chunk:  [entry 0][entry 1]…[entry n-1]              n = entriesPerChunk ≥ 4, chunk ≈ 2 MiB
/// entry:  [rows: bytesPerRow × height][trailer][pad]  bytesPerRow = width × bpp rounded up to 64;
///                                                     entry rounded up to the page size
/// ```
struct TableLayout: Sendable, Hashable {
    /// Bumped whenever the file layout changes; a table of another version is rebuilt.
    static let version: UInt32 = 1
    /// Chunks aim for this size; an entry is never split across chunks.
    static let targetChunkBytes = 2 << 20
    /// Fewest entries a chunk holds, whatever their size.
    static let minimumEntriesPerChunk = 4

    let width: Int
    let height: Int
    let pixelFormat: PixelFormat
    let pageSize: Int
    /// Bytes from one row to the next (a multiple of 64).
    let bytesPerRow: Int
    /// Bytes of the pixel rows of one entry (`bytesPerRow × height`).
    let pixelBytes: Int
    /// Bytes of one entry: pixels plus trailer, rounded up to the page size.
    let entryBytes: Int
    let entriesPerChunk: Int
    /// Bytes of one chunk (`entriesPerChunk × entryBytes`): the unit of mapping and of file growth.
    let chunkBytes: Int
    /// Bytes before the first chunk: one page holding ``TableHeader``.
    var headerBytes: Int { pageSize }

    init(width: Int, height: Int, pixelFormat: PixelFormat, pageSize: Int) {
        self.width = width
        self.height = height
        self.pixelFormat = pixelFormat
        self.pageSize = pageSize
        bytesPerRow = Bitmap.alignedBytesPerRow(width: width, format: pixelFormat)
        pixelBytes = bytesPerRow * height
        let raw = pixelBytes + EntryTrailer.capacity
        entryBytes = (raw + pageSize - 1) / pageSize * pageSize
        let fitting = (Double(Self.targetChunkBytes) / Double(entryBytes)).rounded()
        entriesPerChunk = max(Self.minimumEntriesPerChunk, Int(fitting))
        chunkBytes = entriesPerChunk * entryBytes
    }

    init(_ format: ImageTableFormat, pageSize: Int) {
        self.init(width: format.width, height: format.height, pixelFormat: format.pixelFormat, pageSize: pageSize)
    }

    @inline(__always) func chunk(of slot: Int) -> Int { slot / entriesPerChunk }
    /// Offset of `slot`'s first pixel from the start of its chunk.
    @inline(__always) func offsetInChunk(of slot: Int) -> Int { (slot % entriesPerChunk) * entryBytes }
    /// Offset of `chunk` in the file.
    @inline(__always) func fileOffset(ofChunk chunk: Int) -> Int { headerBytes + chunk * chunkBytes }
    /// Offset of `slot`'s first pixel in the file.
    @inline(__always) func fileOffset(ofSlot slot: Int) -> Int {
        fileOffset(ofChunk: chunk(of: slot)) + offsetInChunk(of: slot)
    }
    /// Offset of `slot`'s trailer in the file.
    @inline(__always) func trailerOffset(ofSlot slot: Int) -> Int { fileOffset(ofSlot: slot) + pixelBytes }
    /// File size holding `chunks` chunks.
    func fileBytes(chunks: Int) -> Int { headerBytes + chunks * chunkBytes }
    /// Whole chunks in a file of `size` bytes.
    func chunks(inFileOf size: Int) -> Int { max(0, (size - headerBytes) / chunkBytes) }

    /// A 64-bit fingerprint of everything that decides where bytes live: stored in the index file and mixed into
    /// every trailer's checksum, so neither can be mistaken for another layout's.
    var fingerprint: UInt64 {
        var sink = ByteSink()
        sink.append(Self.version)
        sink.append(UInt32(width))
        sink.append(UInt32(height))
        sink.append(UInt32(pageSize))
        sink.append(string: pixelFormat.rawValue)
        sink.append(UInt64(entryBytes))
        sink.append(UInt32(entriesPerChunk))
        return XXHash64.hash(sink.bytes, seed: 0x6472_7462_6C65)
    }
}

/// The first page of a table file: magic, layout version and the format's geometry, with a checksum.
///
/// Written once when a table is created (then `fdatasync`), never rewritten in place; a table whose header does
/// not match the requested format is rebuilt (writable open) or refused (read-only open).
struct TableHeader: Equatable {
    static let magic: [UInt8] = Array("DRTABLE\u{1}".utf8)
    static let maximumNameBytes = 255
    /// Bytes the header occupies at the start of its page (the rest of the page is zero).
    static let encodedBytes = 320

    var layoutVersion: UInt32
    var pageSize: Int
    var width: Int
    var height: Int
    var pixelFormat: PixelFormat
    var bytesPerRow: Int
    var entryBytes: Int
    var entriesPerChunk: Int
    var chunkBytes: Int
    var name: String

    init(layout: TableLayout, name: String) {
        layoutVersion = TableLayout.version
        pageSize = layout.pageSize
        width = layout.width
        height = layout.height
        pixelFormat = layout.pixelFormat
        bytesPerRow = layout.bytesPerRow
        entryBytes = layout.entryBytes
        entriesPerChunk = layout.entriesPerChunk
        chunkBytes = layout.chunkBytes
        var bytes = Array(name.utf8.prefix(Self.maximumNameBytes))
        while String(validating: bytes, as: UTF8.self) == nil { bytes.removeLast() }  // never split a character
        self.name = String(decoding: bytes, as: UTF8.self)
    }

    /// The layout this header describes, if it is consistent with this version's arithmetic.
    var layout: TableLayout? {
        guard layoutVersion == TableLayout.version, (1...ImageTableFormat.maximumSide).contains(width),
            (1...ImageTableFormat.maximumSide).contains(height), pageSize >= 4096, pageSize & (pageSize - 1) == 0
        else { return nil }
        let layout = TableLayout(width: width, height: height, pixelFormat: pixelFormat, pageSize: pageSize)
        guard layout.bytesPerRow == bytesPerRow, layout.entryBytes == entryBytes,
            layout.entriesPerChunk == entriesPerChunk, layout.chunkBytes == chunkBytes
        else { return nil }
        return layout
    }

    func encoded() -> [UInt8] {
        var sink = ByteSink()
        sink.bytes = Self.magic
        sink.append(layoutVersion)
        sink.append(UInt32(pageSize))
        sink.append(UInt32(width))
        sink.append(UInt32(height))
        let formatName = Array(pixelFormat.rawValue.utf8.prefix(16))
        sink.bytes += formatName + [UInt8](repeating: 0, count: 16 - formatName.count)
        sink.append(UInt32(bytesPerRow))
        sink.append(UInt64(entryBytes))
        sink.append(UInt32(entriesPerChunk))
        sink.append(UInt64(chunkBytes))
        let nameBytes = Array(name.utf8)
        sink.append(UInt16(nameBytes.count))
        sink.bytes += nameBytes
        sink.bytes += [UInt8](repeating: 0, count: Self.encodedBytes - 8 - sink.bytes.count)
        sink.append(XXHash64.hash(sink.bytes))
        return sink.bytes
    }

    /// Parses a header; `nil` for anything that is not a whole, checksummed header of a known pixel format.
    init?(decoding bytes: [UInt8]) {
        guard bytes.count >= Self.encodedBytes, Array(bytes[0..<8]) == Self.magic else { return nil }
        var source = ByteSource(Array(bytes[0..<Self.encodedBytes]))
        let body = Array(bytes[0..<(Self.encodedBytes - 8)])
        source.offset = Self.encodedBytes - 8
        guard source.read(UInt64.self) == XXHash64.hash(body) else { return nil }
        source.offset = 8
        guard let version = source.read(UInt32.self), let page = source.read(UInt32.self),
            let w = source.read(UInt32.self), let h = source.read(UInt32.self),
            let formatName = source.readString(count: 16)?.split(separator: "\0").first,
            let format = PixelFormat(rawValue: String(formatName)),
            let bpr = source.read(UInt32.self), let entry = source.read(UInt64.self),
            let perChunk = source.read(UInt32.self), let chunk = source.read(UInt64.self),
            let nameCount = source.read(UInt16.self), let name = source.readString(count: Int(nameCount))
        else { return nil }
        layoutVersion = version
        pageSize = Int(page)
        width = Int(w)
        height = Int(h)
        pixelFormat = format
        bytesPerRow = Int(bpr)
        entryBytes = Int(entry)
        entriesPerChunk = Int(perChunk)
        chunkBytes = Int(chunk)
        self.name = name
    }
}
