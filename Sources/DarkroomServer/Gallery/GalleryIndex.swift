import Darkroom
import DarkroomSupport

/// The gallery's listing of the root: one scan (``RootDirectory/scan(maxImages:)``) on a pipeline I/O thread,
/// kept in memory and read by every page view. A snapshot older than the refresh interval is still served while
/// one new scan runs in the background, so page views never wait for the disk after the first.
final class GalleryIndex: Sendable {
    /// One scan's result.
    struct Snapshot: Sendable {
        /// Folders by relative path (`""` is the root).
        let folders: [String: RootDirectory.Folder]
        /// When the scan finished (``MonotonicClock``).
        let scannedAt: Double
        /// How long it took.
        let scanSeconds: Double
    }

    private struct State {
        var snapshot: Snapshot?
        var scanning = false
    }

    let root: RootDirectory
    let refreshInterval: Double
    let maxImages: Int
    private let state = Locked(State())

    init(root: RootDirectory, refreshInterval: Double, maxImages: Int) {
        (self.root, self.refreshInterval, self.maxImages) = (root, refreshInterval, maxImages)
    }

    /// The current snapshot: the kept one (starting a background rescan when it is stale), or — before the first
    /// scan has finished — a scan on an I/O thread of `pipeline`, awaited.
    func snapshot(on pipeline: ImagePipeline) async -> Snapshot {
        let (kept, rescan) = state.withLock { s -> (Snapshot?, Bool) in
            guard let snapshot = s.snapshot else { return (nil, false) }
            let stale = MonotonicClock.seconds() - snapshot.scannedAt > refreshInterval
            if stale && !s.scanning {
                s.scanning = true
                return (snapshot, true)
            }
            return (snapshot, false)
        }
        if let kept {
            if rescan { pipeline.performDetached(on: .io, priority: .low) { [self] in store(scan()) } }
            return kept
        }
        let fresh = (try? await pipeline.perform(on: .io, priority: .high) { [self] in scan() }) ?? scan()
        store(fresh)
        return fresh
    }

    /// Starts the first scan in the background (the server calls this when it starts).
    func prepare(on pipeline: ImagePipeline) {
        let start = state.withLock { s -> Bool in
            guard s.snapshot == nil, !s.scanning else { return false }
            s.scanning = true
            return true
        }
        if start { pipeline.performDetached(on: .io, priority: .low) { [self] in store(scan()) } }
    }

    private func scan() -> Snapshot {
        let t0 = MonotonicClock.seconds()
        let folders = root.scan(maxImages: maxImages)
        let t1 = MonotonicClock.seconds()
        return Snapshot(folders: folders, scannedAt: t1, scanSeconds: t1 - t0)
    }

    private func store(_ snapshot: Snapshot) {
        state.withLock {
            if ($0.snapshot?.scannedAt ?? 0) < snapshot.scannedAt { $0.snapshot = snapshot }
            $0.scanning = false
        }
    }
}
