import DarkroomSupport
import Synchronization

/// The metadata after an entry's pixels: who the entry is, how big its image is, a checksum of its pixels, and a
/// commit word that is written last.
///
/// ```
///  0 u32 magic "DRTE"        4 u16 layout version   6 u16 reserved
///  8 u64 generation         16 u32 width           20 u32 height
/// 24 u8  opaque  25 u8 0    26 u16 entity bytes    28 u16 source bytes   30 u16 reserved
/// 32 u64 pixel checksum     XXH64 of rows 0..<height (bytesPerRow each)
/// 40 u64 meta checksum      XXH64 of bytes 0..<40, then of entity + source, seeded with the layout fingerprint
/// 48 u64 reserved
/// 56 u64 commit             meta checksum XOR "commit!!"; 0 while the entry is being written
/// 64 entity (UTF-8) then source (UTF-8)
/// ```
///
/// A write stores `commit = 0` (and a release fence) before the first pixel, and the commit word (after another
/// fence) only after every pixel and every other trailer byte. A process killed at any instant therefore leaves
/// either the old committed entry (the kill came before `commit = 0`), a torn one (`commit` is 0 or does not
/// match), or the new committed one. The pixel checksum additionally catches pixels that never reached the disk
/// (power loss) and is checked on open for every entry the saved index does not vouch for.
struct EntryTrailer: Equatable, Sendable {
    static let magic: UInt32 = 0x4554_5244  // "DRTE" little-endian
    static let headerBytes = 64
    static let maximumEntityBytes = 1024
    static let maximumSourceBytes = 128
    /// Bytes reserved after the pixels for the trailer.
    static let capacity = headerBytes + maximumEntityBytes + maximumSourceBytes
    static let commitMark: UInt64 = 0x2121_7469_6D6D_6F63  // "commit!!"
    static let commitOffset = 56

    var generation: UInt64
    var width: Int
    var height: Int
    var isOpaque: Bool
    var pixelChecksum: UInt64
    var entity: String
    var source: String

    /// What a slot's trailer says.
    enum State: Equatable {
        /// Never written, or cleared after eviction.
        case empty
        /// A write that started and did not commit, or bytes that are not a whole trailer.
        case torn
        /// A committed entry (pixels still to be checked against ``pixelChecksum`` where that matters).
        case committed(EntryTrailer)
    }

    /// The checksum of the metadata: fixed fields and both ids, bound to `fingerprint` (the table's layout).
    private static func metaChecksum(
        _ raw: UnsafeRawPointer, entityBytes: Int, sourceBytes: Int,
        fingerprint: UInt64
    ) -> UInt64 {
        let fields = XXHash64.hash(UnsafeRawBufferPointer(start: raw, count: 40), seed: fingerprint)
        return XXHash64.hash(
            UnsafeRawBufferPointer(start: raw + headerBytes, count: entityBytes + sourceBytes), seed: fields)
    }

    /// Reads the trailer at `raw` (``capacity`` readable bytes) for a table of `layout`.
    static func parse(_ raw: UnsafeRawPointer, layout: TableLayout, fingerprint: UInt64) -> State {
        let magicWord = raw.loadLE(0, as: UInt32.self)
        if magicWord != magic {
            // A cleared slot is all zero; anything else is a trailer that never was.
            for i in stride(from: 0, to: headerBytes, by: 8) where raw.loadLE(i, as: UInt64.self) != 0 { return .torn }
            return .empty
        }
        let commit = raw.loadLE(commitOffset, as: UInt64.self)
        let entityBytes = Int(raw.loadLE(26, as: UInt16.self))
        let sourceBytes = Int(raw.loadLE(28, as: UInt16.self))
        guard commit != 0, raw.loadLE(4, as: UInt16.self) == UInt16(TableLayout.version),
            entityBytes <= maximumEntityBytes, sourceBytes <= maximumSourceBytes
        else { return .torn }
        let meta = raw.loadLE(40, as: UInt64.self)
        guard commit == meta ^ commitMark,
            meta == metaChecksum(raw, entityBytes: entityBytes, sourceBytes: sourceBytes, fingerprint: fingerprint)
        else { return .torn }
        let width = Int(raw.loadLE(16, as: UInt32.self))
        let height = Int(raw.loadLE(20, as: UInt32.self))
        guard (1...layout.width).contains(width), (1...layout.height).contains(height),
            let entity = String(
                validating: UnsafeRawBufferPointer(start: raw + headerBytes, count: entityBytes), as: UTF8.self),
            let source = String(
                validating: UnsafeRawBufferPointer(start: raw + headerBytes + entityBytes, count: sourceBytes),
                as: UTF8.self)
        else { return .torn }
        return .committed(
            EntryTrailer(
                generation: raw.loadLE(8, as: UInt64.self), width: width, height: height,
                isOpaque: raw.load(fromByteOffset: 24, as: UInt8.self) != 0,
                pixelChecksum: raw.loadLE(32, as: UInt64.self), entity: entity, source: source))
    }

    /// Marks the slot at `raw` as being written (commit word 0, magic and `generation`), with a release fence so
    /// no pixel store can be ordered before it.
    static func beginWrite(_ raw: UnsafeMutableRawPointer, generation: UInt64) {
        raw.storeLE(UInt64(0), at: commitOffset)
        atomicMemoryFence(ordering: .sequentiallyConsistent)
        raw.storeLE(magic, at: 0)
        raw.storeLE(UInt16(TableLayout.version), at: 4)
        raw.storeLE(generation, at: 8)
        atomicMemoryFence(ordering: .releasing)
    }

    /// Writes every field, then (after a release fence) the commit word. Call after the last pixel store.
    func commit(_ raw: UnsafeMutableRawPointer, fingerprint: UInt64) {
        let entityUTF8 = Array(entity.utf8)
        let sourceUTF8 = Array(source.utf8)
        precondition(entityUTF8.count <= Self.maximumEntityBytes && sourceUTF8.count <= Self.maximumSourceBytes)
        atomicMemoryFence(ordering: .releasing)
        raw.storeLE(Self.magic, at: 0)
        raw.storeLE(UInt16(TableLayout.version), at: 4)
        raw.storeLE(UInt16(0), at: 6)
        raw.storeLE(generation, at: 8)
        raw.storeLE(UInt32(width), at: 16)
        raw.storeLE(UInt32(height), at: 20)
        raw.storeBytes(of: isOpaque ? 1 : 0, toByteOffset: 24, as: UInt8.self)
        raw.storeBytes(of: 0, toByteOffset: 25, as: UInt8.self)
        raw.storeLE(UInt16(entityUTF8.count), at: 26)
        raw.storeLE(UInt16(sourceUTF8.count), at: 28)
        raw.storeLE(UInt16(0), at: 30)
        raw.storeLE(pixelChecksum, at: 32)
        raw.storeLE(UInt64(0), at: 48)
        (raw + Self.headerBytes).copyMemory(
            from: entityUTF8 + sourceUTF8, byteCount: entityUTF8.count + sourceUTF8.count)
        let meta = Self.metaChecksum(
            UnsafeRawPointer(raw), entityBytes: entityUTF8.count, sourceBytes: sourceUTF8.count,
            fingerprint: fingerprint)
        raw.storeLE(meta, at: 40)
        atomicMemoryFence(ordering: .releasing)
        raw.storeLE(meta ^ Self.commitMark, at: Self.commitOffset)
        atomicMemoryFence(ordering: .sequentiallyConsistent)
    }

    /// The XXH64 of an entry's rows `0..<height` (`bytesPerRow` each, padding included).
    static func pixelChecksum(_ pixels: UnsafeRawPointer, bytesPerRow: Int, height: Int) -> UInt64 {
        XXHash64.hash(UnsafeRawBufferPointer(start: pixels, count: bytesPerRow * height))
    }
}
