import DarkroomImage
import DarkroomSupport
import Foundation

/// The Live Photo videos of a folder by content identifier, for stills whose video was renamed (an export that
/// numbered or dated the files differently, a copy that kept one name and not the other).
///
/// Built on the first such still of a folder by opening the header of each QuickTime file in it (`.mov` in any
/// case, regular files only, at most `DecodeLimits/maxLivePhotoCandidates` of them, never a frame), and kept while
/// the folder's modification time is unchanged (files added, removed or renamed change it) — and only once that time
/// is ``settleSeconds`` older than the build: a file system stamps times at a coarse tick, so a file added in the
/// tick of the build could leave the time as it was (git's "racy" rule, for the same reason); at most
/// ``maxFolders`` folders are kept, the oldest dropped first. Two stills of one folder asked for at once may build
/// its index twice; the later build replaces the earlier one, both correct. Thread-safe: the folders are kept in a
/// `Locked` dictionary; the headers are read outside the lock.
final class LivePhotoIndex: Sendable {
    /// The index the process shares.
    static let shared = LivePhotoIndex()

    /// The most folders kept.
    static let maxFolders = 64
    /// How much older than its build a folder's modification time must be for the index to be kept.
    static let settleSeconds = 1

    private struct Folder {
        var modified: timespec
        /// Whether the folder was last modified ``settleSeconds`` before the build began.
        var settled: Bool
        /// When it was built, in builds of any folder (the oldest is dropped first).
        var built: Int
        /// How many times this folder's index was built while kept (tests count the work).
        var timesBuilt: Int
        var videos: [String: String]  // content identifier → path
    }

    private struct State {
        var folders: [String: Folder] = [:]
        var builds = 0
    }

    private let state = Locked(State())

    /// How many times the index of `folder` (as the still's path names it) was built while kept.
    func timesBuilt(_ folder: String) -> Int { state.withLock { $0.folders[folder]?.timesBuilt ?? 0 } }

    /// The video in the folder of the still at `photo` whose content identifier is `identifier`, with its header;
    /// nil when there is none among the files read. Headers are read by `reader` (in its isolation, if any).
    func video(
        withIdentifier identifier: String, forPhotoAt photo: String, limits: DecodeLimits, reader: VideoDecoder
    ) -> (path: String, clip: ImageProbe)? {
        let folder = photo.lastIndex(of: "/").map { String(photo[..<$0].isEmpty ? "/" : photo[..<$0]) } ?? "."
        var status = stat()
        guard stat(folder, &status) == 0 else { return nil }
        let modified = status.st_mtim
        let known = state.withLock { state -> [String: String]? in
            guard let entry = state.folders[folder], entry.settled, entry.modified == modified else { return nil }
            return entry.videos
        }
        let videos = known ?? build(folder, modified: modified, limits: limits, reader: reader)
        guard let path = videos[identifier],
            let clip = try? reader.header(ofVideoAt: path, limits: limits),
            clip.video?.contentIdentifier == identifier
        else { return nil }
        return (path, clip)
    }

    private func build(_ folder: String, modified: timespec, limits: DecodeLimits, reader: VideoDecoder)
        -> [String: String]
    {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        let settled = modified.tv_sec + Self.settleSeconds < now.tv_sec
        var videos: [String: String] = [:]
        guard let directory = opendir(folder) else { return videos }
        defer { closedir(directory) }
        var read = 0
        while read < limits.maxLivePhotoCandidates, let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            guard FileExtensions.of(name) == "mov" else { continue }
            let path = folder == "/" ? "/" + name : folder + "/" + name
            // A regular file only: a link could point anywhere (out of a served folder, say)
            var status = stat()
            guard lstat(path, &status) == 0, status.st_mode & S_IFMT == S_IFREG, status.st_size > 0 else { continue }
            read += 1
            if let identifier = try? reader.header(ofVideoAt: path, limits: limits).video?.contentIdentifier,
                videos[identifier] == nil
            {
                videos[identifier] = path
            }
        }
        state.withLock { state in
            state.builds += 1
            let times = (state.folders[folder]?.timesBuilt ?? 0) + 1
            state.folders[folder] = Folder(
                modified: modified, settled: settled, built: state.builds, timesBuilt: times, videos: videos)
            if state.folders.count > Self.maxFolders,
                let oldest = state.folders.min(by: { $0.value.built < $1.value.built })?.key
            {
                state.folders[oldest] = nil
            }
        }
        return videos
    }
}

extension timespec {
    fileprivate static func == (a: timespec, b: timespec) -> Bool { a.tv_sec == b.tv_sec && a.tv_nsec == b.tv_nsec }
}
