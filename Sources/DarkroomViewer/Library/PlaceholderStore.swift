import Darkroom
import DarkroomImage
import DarkroomSupport
import Dispatch
import Foundation

/// What the viewer remembers of every image it has shown, across runs: its ThumbHash (a placeholder of ~25 bytes,
/// whatever size the grid is drawn at) and whether it is animated (so a cell starts its player at once next time,
/// even when its still comes from the image table, which knows nothing of frames).
///
/// Work happens on one thread of its own at nice 10 (never Swift's cooperative pool, never competing with the
/// drawing thread for a core): hashing a delivered thumbnail (``ThumbHash/placeholder(ofThumbnail:)``),
/// decoding hashes into 32 px placeholder bitmaps ahead of need, loading and saving the file. The drawing thread
/// only looks bitmaps up (one lock it never waits for).
///
/// File: `placeholders.tsv` in the viewer's cache folder, one `imageID<TAB>hex hash<TAB>frames` line per image,
/// written to a temporary file and renamed (never torn). At most ``capacity`` images are kept.
final class PlaceholderStore: Sendable {
    private struct Record: Sendable {
        var hash: [UInt8]
        var frames: Int
    }

    private struct State {
        var records: [String: Record] = [:]
        /// Decoded placeholders by image ID (an LRU of ``bitmapCapacity`` is overkill: dropped all at once).
        var bitmaps: [String: Bitmap] = [:]
        var dirty = false
    }

    /// Most images remembered (about 60 bytes each).
    let capacity: Int
    /// Most decoded placeholders held (32 × 32 × 4 bytes each).
    let bitmapCapacity = 4096
    private let state = Locked(State())
    private let queue = WorkQueue(name: "darkroom.view.placeholders", maxConcurrent: 1, idleTimeout: 30, niceness: 10)
    private let file: String?

    /// Opens the store at `file` (nil: in memory only) and loads it in the background.
    init(file: String?, capacity: Int = 1_000_000) {
        self.file = file
        self.capacity = capacity
        guard let file else { return }
        queue.enqueue { [self] _ in load(file) }
    }

    /// The placeholder bitmap for `imageID`, if its hash is known and already decoded. Never waits: nil too when the
    /// store's own thread holds the lock at that instant (the cell shows grey for that frame and asks again on the
    /// next), since that thread runs at nice 10 and, preempted inside its critical section, could hold it for a
    /// scheduler tick.
    func placeholder(for imageID: String) -> Bitmap? { state.withLockIfAvailable { $0.bitmaps[imageID] } ?? nil }

    /// Whether `imageID` was animated when last decoded.
    func isAnimated(_ imageID: String) -> Bool { state.withLock { ($0.records[imageID]?.frames ?? 1) > 1 } }

    /// Decodes, in the background, the placeholders of these images that have a hash and no bitmap yet.
    func prepare(_ imageIDs: [String]) {
        queue.enqueue { [self] _ in
            let wanted: [(String, [UInt8])] = state.withLock { s in
                imageIDs.compactMap { id in s.bitmaps[id] == nil ? s.records[id].map { (id, $0.hash) } : nil }
            }
            guard !wanted.isEmpty else { return }
            var decoded: [(String, Bitmap)] = []
            for (id, hash) in wanted { if let bitmap = try? ThumbHash.decode(hash) { decoded.append((id, bitmap)) } }
            state.withLock { s in
                if s.bitmaps.count + decoded.count > bitmapCapacity { s.bitmaps.removeAll(keepingCapacity: true) }
                for (id, bitmap) in decoded { s.bitmaps[id] = bitmap }
            }
        }
    }

    /// Remembers `imageID`'s placeholder from a delivered thumbnail and its frame count (hashing in the
    /// background; nothing happens when the hash is already known and the frame count unchanged).
    func remember(_ imageID: String, thumbnail: Bitmap, frames: Int?) {
        queue.enqueue { [self] _ in
            let known = state.withLock { $0.records[imageID] }
            if let known, frames == nil || frames == known.frames { return }
            guard let hash = known?.hash ?? ThumbHash.placeholder(ofThumbnail: thumbnail) else { return }
            let record = Record(hash: hash, frames: frames ?? known?.frames ?? 1)
            state.withLock { s in
                if s.records.count >= capacity, s.records[imageID] == nil { s.records.removeAll() }
                s.records[imageID] = record
                s.dirty = true
            }
        }
    }

    /// Writes the file if anything changed, and waits for it (call when the viewer closes).
    func save() {
        guard let file else { return }
        waitFor { [self] in
            let (records, dirty): ([String: Record], Bool) = state.withLock { s in
                defer { s.dirty = false }
                return (s.records, s.dirty)
            }
            guard dirty else { return }
            var text = ""
            text.reserveCapacity(records.count * 96)
            for (id, record) in records where !id.contains("\t") && !id.contains("\n") {
                text += id + "\t" + Hex.encode(record.hash) + "\t\(record.frames)\n"
            }
            // Never torn; a failure (a full disk) keeps the previous file and is tried again at the next save
            do throws(DarkroomImageError) {
                try FileBytes.writeAtomically(Array(text.utf8), to: file)
            } catch {
                state.withLock { $0.dirty = true }
            }
        }
    }

    /// Waits until the background work queued so far is done (tests, and before reading what was remembered).
    func waitForBackgroundWork() { waitFor {} }

    /// Runs `work` after everything queued before it (one thread: first in, first out) and waits for it.
    private func waitFor(_ work: @escaping @Sendable () -> Void) {
        let done = DispatchSemaphore(value: 0)
        queue.enqueue { _ in
            work()
            done.signal()
        }
        done.wait()
    }

    private func load(_ file: String) {
        guard let data = FileManager.default.contents(atPath: file) else { return }
        var records: [String: Record] = [:]
        for line in String(decoding: data, as: UTF8.self).split(separator: "\n") {
            let fields = line.split(separator: "\t")
            guard fields.count == 3, let frames = Int(fields[2]), let hash = Self.bytes(hex: fields[1]) else {
                continue
            }
            records[String(fields[0])] = Record(hash: hash, frames: frames)
            if records.count >= capacity { break }
        }
        state.withLock { s in s.records.merge(records) { current, _ in current } }
    }

    /// A hash from its hex field: at most 32 bytes, as ThumbHash writes.
    private static func bytes(hex: Substring) -> [UInt8]? {
        guard hex.utf8.count <= 64 else { return nil }
        return Hex.decode(hex)
    }
}
