import DarkroomDesktop
import DarkroomSupport
import Foundation

/// The desktop's shared thumbnail cache as a faster source for cold cells: a valid thumbnail that GNOME Files (or
/// `darkroom thumbnail-cache fill`, or any program following the freedesktop.org specification) already wrote is a
/// small PNG to decode instead of the photo.
///
/// A thread of its own looks the library's files up (`stat`, the MD5 of the URI, the thumbnail's header chunks:
/// tens of microseconds each), starting from where the drawing thread says the user is looking and going on through
/// the rest in order. The drawing thread only reads the answers (one lock) when it binds or prefetches a cell; a
/// file not looked up yet is read from the original. Only thumbnails whose short side covers the cell are used
/// (`large`, 256 px, for cells up to 192 px; `x-large`, 512 px, up to 384 px; larger cells use the photo).
final class DesktopThumbnails: Sendable {
    private struct State {
        var items: [LibraryItem] = []
        var done: [Bool] = []
        var cursor = 0
        var found: [String: String] = [:]
        var stopped = false
        var lookups = 0
    }

    private let cache: DesktopThumbnailCache
    private let size: DesktopThumbnailCache.Size
    private let state = Locked(State())
    private let wake = DispatchSemaphore(value: 0)

    /// Starts the lookup thread for cells of `side` pixels; nil when no desktop thumbnail size covers that side.
    init?(side: Int, root: String = DesktopThumbnailCache.userRoot()) {
        guard let size = [DesktopThumbnailCache.Size.large, .xLarge].first(where: { $0.pixels * 3 / 4 >= side }) else {
            return nil
        }
        self.size = size
        cache = DesktopThumbnailCache(root: root)
        _ = DedicatedThread(name: "darkroom.view.desktop-thumbnails", niceness: 10) { [self] in loop() }
    }

    /// Adds newly scanned items to look up.
    func append(_ items: ArraySlice<LibraryItem>) {
        guard !items.isEmpty else { return }
        state.withLock { s in
            s.items.append(contentsOf: items)
            s.done.append(contentsOf: repeatElement(false, count: items.count))
        }
        wake.signal()
    }

    /// Looks up from `index` on next (where the grid is now).
    func lookUp(from index: Int) {
        state.withLock { $0.cursor = max(0, index) }
        wake.signal()
    }

    /// The valid desktop thumbnail of `imageID`, if it has been looked up and found.
    func thumbnail(for imageID: String) -> String? { state.withLock { $0.found[imageID] } }

    /// Whether every item in `range` has been looked up (items not scanned yet count as not).
    func isDone(_ range: Range<Int>) -> Bool {
        state.withLock { s in range.upperBound <= s.done.count && s.done[range].allSatisfy { $0 } }
    }

    /// Lookups done so far (for the frame record).
    var lookups: Int { state.withLock { $0.lookups } }

    /// Ends the lookup thread.
    func stop() {
        state.withLock { $0.stopped = true }
        wake.signal()
    }

    private func loop() {
        while true {
            let next: LibraryItem?? = state.withLock { s in
                if s.stopped { return .some(nil) }
                var i = s.cursor
                while i < s.items.count, s.done[i] { i += 1 }
                if i == s.items.count, let first = s.done.firstIndex(of: false) { i = first }
                guard i < s.items.count else { return .none }
                s.done[i] = true
                s.cursor = i + 1
                s.lookups += 1
                return .some(s.items[i])
            }
            switch next {
            case .none: wake.wait()
            case .some(nil): return
            case .some(.some(let item)):
                guard case .valid(let path)? = try? cache.lookup(item.path, size: size) else { continue }
                state.withLock { $0.found[item.imageID] = path }
            }
        }
    }
}
