import DarkroomImage
import DarkroomSupport

/// Thumbnails of one ``ImageTableFormat`` pre-decoded into a memory-mapped file and handed out with zero copies.
///
/// `set(entity:source:draw:)` decodes (or draws) an image straight into a slot of the table file and commits it
/// with a trailer written after the pixels; `entry(for:)` returns a `Bitmap` whose storage *is* the mapping —
/// no read, no decode, no copy (a hot hit costs a lock, a dictionary lookup and one small allocation; see
/// docs/PERFORMANCE.md, "Image tables"). While any such bitmap is alive its entry is pinned (never evicted, never
/// overwritten) and its ~2 MiB chunk stays mapped.
///
/// Thread-safe: any number of threads may read and write at once. The table's lock guards only bookkeeping;
/// decoding, mapping and I/O happen outside it, so reading one entry never waits for a write to another. One
/// process (one `ImageTable`) writes a table at a time (`flock`); read-only opens may share it with each other.
///
/// Crash safety: a process killed at any instant leaves every entry either committed and whole, or absent — never
/// a torn entry served (the trailer's commit word is written last; entries the saved index does not vouch for
/// are checksummed on open). Power loss: entries saved in the index were `fdatasync`ed first; an entry being
/// rewritten at the moment of power loss may survive as its old or new version, and `verify` would flag a torn one.
///
/// Memory: a mapped chunk costs address space and page cache, not heap; the table keeps at most
/// ``Options/maximumMappedChunks`` chunks mapped beyond those that hold pinned entries. Heap: about 150 bytes per
/// entry for the index plus the entity and source ids.
public final class ImageTable: Sendable {
    /// Tuning knobs; the defaults suit 256×256 BGRA thumbnails.
    public struct Options: Sendable, Hashable {
        /// Chunks kept mapped when no bitmap points into them (default 32 ≈ 64 MiB of address space). Chunks
        /// holding pinned entries stay mapped beyond this bound until their bitmaps go.
        public var maximumMappedChunks: Int
        /// Commits between automatic index saves (default 64; 0 saves only on ``ImageTable/flush()`` and
        /// ``ImageTable/close()``). A save syncs the table file and rewrites the index (O(entries)).
        public var indexSaveInterval: Int
        /// Read every trailer on open even when a clean close left an exact index (default `false`): for files
        /// that something other than `ImageTable` may have touched. Costs one small read per slot (≈ 0.7 s for
        /// 10,000 slots with a cold page cache on the project machine).
        public var alwaysReconcile: Bool

        /// Creates options; omitted values take their documented defaults.
        public init(maximumMappedChunks: Int = 32, indexSaveInterval: Int = 64, alwaysReconcile: Bool = false) {
            self.maximumMappedChunks = maximumMappedChunks
            self.indexSaveInterval = indexSaveInterval
            self.alwaysReconcile = alwaysReconcile
        }
    }

    let core: TableCore

    /// Opens the table at `path` for reading and writing, creating it if missing and rebuilding it (from empty)
    /// if its size, pixel format or layout version differ from `format`'s. After a clean close the saved index is
    /// exact and is all that is read (O(entries)); after a crash it is reconciled with every entry's trailer (one
    /// small read per slot, plus a checksum of each entry written since the last index save). Entries beyond
    /// `format.maximumCount` are evicted.
    /// - Throws: `.busy` when another instance or process has the table open, `.invalidArgument` for a bad
    ///   format, `.io` when the file cannot be opened, read or written.
    public init(path: String, format: ImageTableFormat, options: Options = Options()) throws(ImageTableError) {
        core = try TableCore.open(path: path, format: format, readOnly: false, options: options)
    }

    /// Opens an existing table read-only, taking its format from the file (``format``'s `maximumCount` is the one
    /// last saved). Nothing is written: torn slots are skipped rather than cleared, LRU order is not saved.
    /// - Throws: `.notFound`, `.corrupt` (not a table of this layout version), `.formatMismatch` when `expecting`
    ///   is given and differs in size or pixel format, `.busy` while a writer has it open, `.io`.
    public init(
        readingExisting path: String, expecting format: ImageTableFormat? = nil,
        options: Options = Options()
    ) throws(ImageTableError) {
        core = try TableCore.open(path: path, format: format, readOnly: true, options: options)
    }

    deinit {
        try? core.close()
    }

    /// The table's format (for a read-only open: from the file).
    public var format: ImageTableFormat { core.format }
    /// The table file's path.
    public var path: String { core.path }
    /// Whether the table was opened with ``init(readingExisting:expecting:options:)``.
    public var isReadOnly: Bool { core.readOnly }

    /// The entry of `entity` as a bitmap pointing straight into the table's mapping (zero copies), or `nil` when
    /// the table has none. The entry becomes the most recently used and stays pinned — never evicted or
    /// overwritten — while the bitmap (or any copy of it) is alive. Its size is at most the format's (a `.fit`
    /// entry may be smaller) and its `bytesPerRow` is the format's.
    ///
    /// Cost: one lock, a dictionary lookup and one small allocation (the first entry of an unmapped chunk also
    /// maps the chunk). Touching the pixels the first time costs page faults (and disk reads when the page cache
    /// is cold), not this call.
    /// - Throws: `.closed`, or `.io` when the chunk cannot be mapped.
    public func entry(for entity: String) throws(ImageTableError) -> Bitmap? {
        try core.entry(for: entity)
    }

    /// The source id stored with `entity`'s entry (say, a hash of the image bytes it was decoded from), or `nil`.
    /// Use it to skip work: an entity whose source id is current needs no new decode. O(1), no pin.
    public func sourceID(for entity: String) -> String? {
        core.state.withLock { $0.source(of: entity) }
    }

    /// Writes the entry of `entity`, made from `source`, with pixels from `draw`.
    ///
    /// `draw` gets a ``TableEntryWriter`` over a free slot's memory (a read-write mapping) and returns the bitmap
    /// that becomes the entry: ``TableEntryWriter/decode(_:mode:decoder:options:)-(UnsafeRawBufferPointer,_,_,_)``
    /// decodes straight into it. Then the pixel checksum and trailer are written, the commit word last, and the
    /// entry replaces `entity`'s previous one (which, if pinned, lives on for its holders and is freed when they
    /// let go). When the table is full the least recently used unpinned entry is evicted first. `draw` runs
    /// without the table's lock; other threads read and write meanwhile. Two concurrent writes of one entity: the
    /// later `set` (by start) wins.
    ///
    /// - Parameters:
    ///   - entity: what the entry is for (1...1024 UTF-8 bytes), e.g. a path or URL.
    ///   - source: what it was made from (0...128 UTF-8 bytes), returned by ``sourceID(for:)``.
    ///   - draw: makes the entry's bitmap, at most the format's size, usually with the writer's `decode` or `canvas`.
    /// - Throws: `.drawFailed` (with the closure's error as `underlying`), `.invalidArgument` (ids too long, a
    ///   drawn bitmap larger than the format), `.full`, `.readOnly`, `.closed`, `.io`. A failed `set` leaves
    ///   `entity`'s previous entry in place.
    public func set(entity: String, source: String, draw: (TableEntryWriter) throws -> Bitmap) throws(ImageTableError) {
        try core.set(entity: entity, source: source, draw: draw)
    }

    /// Removes `entity`'s entry (pinned bitmaps of it stay valid until released). Returns whether it existed.
    /// - Throws: `.readOnly`, `.closed`.
    @discardableResult
    public func remove(entity: String) throws(ImageTableError) -> Bool {
        try core.remove(entity)
    }

    /// Entity ids of every entry, least recently used first. O(entries).
    public var entities: [String] { core.state.withLock { $0.lruOrder().map(\.entity) } }

    /// How many entries the table holds.
    public var count: Int { core.state.withLock { $0.liveCount } }

    /// Saves the index now: syncs the table file, then replaces the index atomically. Automatic every
    /// ``Options/indexSaveInterval`` commits and on ``close()``. No-op for read-only tables.
    /// - Throws: `.io`.
    public func flush() throws(ImageTableError) {
        try core.saveIndex()
    }

    /// Saves the index and closes the table: later calls throw `.closed`. Bitmaps already handed out stay valid;
    /// the file (and its lock) is released when the last of them goes. Idempotent; also done by deinit.
    /// - Throws: `.io` when the final index save fails (the entries themselves are safe in their trailers).
    public func close() throws(ImageTableError) {
        try core.close()
    }
}

extension ImageTable {
    /// A source id for encoded image bytes: their XXH64 as 16 hex digits (not cryptographic). O(n), memory speed.
    public static func sourceID(hashing bytes: UnsafeRawBufferPointer) -> String {
        Hex.encode(XXHash64.hash(bytes))
    }
}
