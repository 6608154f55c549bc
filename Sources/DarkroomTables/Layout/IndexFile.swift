import DarkroomSupport

/// The persisted index: which entity lives in which slot (with the generation its trailer carries) and the
/// least-recently-used order, written whole to `<table>.index` by atomic rename.
///
/// ```
/// "DRTIDX\0\2"  u64 layout fingerprint  u32 maximum count  u64 next generation  u8 clean  u32 record count
/// records, least recently used first:
///     u32 slot  u64 generation  u16 width  u16 height  u8 opaque  u16 entity bytes  u16 source bytes  entity  source
/// u64 XXH64 of everything before
/// ```
///
/// The trailers are the source of truth; the index keeps the LRU order across runs and makes opening cheap.
/// *Clean* means it was written by `close()` with no write in flight and none possible afterwards: it then
/// describes the file exactly and an open trusts it without reading a trailer. Before the first change after
/// such an open the index is rewritten as not clean, so after a crash the next open always reconciles: a record
/// whose slot's trailer carries the same generation is *confirmed* (the table file was synced before the index
/// was written, so its pixels are on disk); any other committed trailer is checksummed. A missing, damaged or
/// foreign index is ignored (every committed entry is then checksummed on open).
struct IndexFile: Equatable {
    static let magic: [UInt8] = Array("DRTIDX\u{0}\u{2}".utf8)

    struct Record: Equatable {
        var slot: Int
        var generation: UInt64
        var width: Int
        var height: Int
        var isOpaque: Bool
        var entity: String
        var source: String
    }

    var fingerprint: UInt64
    var maximumCount: Int
    var nextGeneration: UInt64
    /// Written by a clean close: exact, no reconciliation needed.
    var clean: Bool
    var records: [Record]

    static func path(forTable table: String) -> String { table + ".index" }

    func encoded() -> [UInt8] {
        var sink = ByteSink()
        sink.bytes.reserveCapacity(40 + records.count * 64)
        sink.bytes = Self.magic
        sink.append(fingerprint)
        sink.append(UInt32(maximumCount))
        sink.append(nextGeneration)
        sink.append(UInt8(clean ? 1 : 0))
        sink.append(UInt32(records.count))
        for r in records {
            sink.append(UInt32(r.slot))
            sink.append(r.generation)
            sink.append(UInt16(r.width))
            sink.append(UInt16(r.height))
            sink.append(UInt8(r.isOpaque ? 1 : 0))
            sink.append(UInt16(r.entity.utf8.count))
            sink.append(UInt16(r.source.utf8.count))
            sink.append(string: r.entity)
            sink.append(string: r.source)
        }
        sink.append(XXHash64.hash(sink.bytes))
        return sink.bytes
    }

    /// Parses an index; `nil` for anything that is not a whole, checksummed index.
    init?(decoding bytes: [UInt8]) {
        guard bytes.count >= 40, Array(bytes[0..<8]) == Self.magic else { return nil }
        let body = bytes.count - 8
        let stored = bytes.withUnsafeBytes { UnsafeRawPointer($0.baseAddress!).loadLE(body, as: UInt64.self) }
        guard bytes.withUnsafeBytes({ XXHash64.hash(UnsafeRawBufferPointer(rebasing: $0[0..<body])) }) == stored else {
            return nil
        }
        var source = ByteSource(bytes)
        source.offset = 8
        guard let fingerprint = source.read(UInt64.self), let maximum = source.read(UInt32.self),
            let next = source.read(UInt64.self), let clean = source.read(UInt8.self),
            let count = source.read(UInt32.self)
        else { return nil }
        var records: [Record] = []
        records.reserveCapacity(Int(count))
        for _ in 0..<count {
            guard let slot = source.read(UInt32.self), let generation = source.read(UInt64.self),
                let width = source.read(UInt16.self), let height = source.read(UInt16.self),
                let opaque = source.read(UInt8.self), let entityBytes = source.read(UInt16.self),
                let sourceBytes = source.read(UInt16.self),
                let entity = source.readString(count: Int(entityBytes)),
                let sourceID = source.readString(count: Int(sourceBytes))
            else { return nil }
            records.append(
                Record(
                    slot: Int(slot), generation: generation, width: Int(width), height: Int(height),
                    isOpaque: opaque != 0, entity: entity, source: sourceID))
        }
        guard source.offset == body else { return nil }
        self.init(
            fingerprint: fingerprint, maximumCount: Int(maximum), nextGeneration: next, clean: clean == 1,
            records: records)
    }

    init(fingerprint: UInt64, maximumCount: Int, nextGeneration: UInt64, clean: Bool, records: [Record]) {
        self.fingerprint = fingerprint
        self.maximumCount = maximumCount
        self.nextGeneration = nextGeneration
        self.clean = clean
        self.records = records
    }

    /// Whether a clean index can describe a file of `slotCount` slots of `layout`: slots in range, no slot or
    /// entity twice, sizes within the format. (A clean index that fails this is treated as dirty.)
    func isConsistent(slotCount: Int, layout: TableLayout) -> Bool {
        var slots = Set<Int>()
        var entities = Set<String>()
        return records.allSatisfy {
            $0.slot < slotCount && (1...layout.width).contains($0.width) && (1...layout.height).contains($0.height)
                && !$0.entity.isEmpty && slots.insert($0.slot).inserted && entities.insert($0.entity).inserted
        }
    }

    /// The index stored beside `table`, if it is whole and belongs to a table with `fingerprint`.
    static func load(forTable table: String, fingerprint: UInt64) -> IndexFile? {
        guard let bytes = TableFile.readWhole(path(forTable: table)), let index = IndexFile(decoding: bytes),
            index.fingerprint == fingerprint
        else { return nil }
        return index
    }

    /// Replaces the index beside `table` atomically (temporary file, sync, rename, directory sync).
    func save(forTable table: String) throws(ImageTableError) {
        try TableFile.replace(Self.path(forTable: table), with: encoded())
    }
}
