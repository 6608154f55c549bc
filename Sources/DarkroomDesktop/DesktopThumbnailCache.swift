import Crypto
import DarkroomImage
import DarkroomSupport

#if canImport(Glibc)
    import Glibc
#endif

/// The thumbnail cache file managers and photo browsers share on a Linux desktop (the freedesktop.org Thumbnail
/// Managing Standard, version 0.9): `$XDG_CACHE_HOME/thumbnails` (else `~/.cache/thumbnails`), one PNG a file and a
/// size, named by the MD5 of the file's URI, valid while its `Thumb::URI` and `Thumb::MTime` match the file.
///
/// Darkroom reads what other programs wrote there and writes what it renders so that they reuse it: PNG with
/// `Thumb::URI`, `Thumb::MTime`, `Thumb::Size`, `Thumb::Mimetype` and `Software`, written to a temporary file in the
/// same folder and renamed (never a torn thumbnail), mode 0600 in folders of mode 0700. A file that cannot be
/// thumbnailed is recorded under `fail/darkroom-VERSION/` so no program of this version tries it again. Each call
/// costs a `stat` of the file and, for a lookup, a read of the thumbnail's header chunks. Thread-safe: no state.
public struct DesktopThumbnailCache: Sendable {
    /// The specification's sizes: the longest side of a thumbnail in each folder.
    public enum Size: String, Sendable, CaseIterable {
        case normal, large
        case xLarge = "x-large"
        case xxLarge = "xx-large"

        /// 128, 256, 512 or 1024 px.
        public var pixels: Int {
            switch self {
            case .normal: 128
            case .large: 256
            case .xLarge: 512
            case .xxLarge: 1024
            }
        }
    }

    /// What a lookup found.
    public enum Lookup: Sendable, Equatable {
        /// A thumbnail whose URI and modification time match the file: its path.
        case valid(String)
        /// A thumbnail from an older version of the file (or another file with the same hash): to be replaced.
        case stale(String)
        /// A failure record of this program's version: the file could not be thumbnailed when it had this time.
        case failed
        /// Nothing.
        case missing
    }

    /// The cache's folder.
    public let root: String
    /// The name failures are recorded under (`fail/NAME/`): `darkroom-VERSION`.
    public let failureName: String

    /// The user's cache: `$XDG_CACHE_HOME/thumbnails`, else `$HOME/.cache/thumbnails`.
    public static func userRoot() -> String {
        if let xdg = getenv("XDG_CACHE_HOME").map({ String(cString: $0) }), xdg.hasPrefix("/") {
            return xdg + "/thumbnails"
        }
        let home = getenv("HOME").map { String(cString: $0) } ?? "/tmp"
        return home + "/.cache/thumbnails"
    }

    /// A cache at `root` (default the user's), recording failures as `program`.
    /// A cache at `root` (default the user's; a relative path is taken from the current directory), recording
    /// failures as `program`.
    public init(root: String = DesktopThumbnailCache.userRoot(), program: String = "darkroom-0.1") {
        if root.hasPrefix("/") {
            self.root = root
        } else {
            let cwd = getcwd(nil, 0)
            defer { free(cwd) }
            self.root = (cwd.map { String(cString: $0) } ?? "") + "/" + root
        }
        failureName = program
    }

    /// The thumbnail path of `uri` at `size`: `ROOT/SIZE/MD5(uri).png`.
    public func path(forURI uri: String, size: Size) -> String {
        root + "/" + size.rawValue + "/" + Self.md5(uri) + ".png"
    }

    /// Looks `file` (an absolute path) up at `size`: valid only when the thumbnail's `Thumb::URI` is the file's URI
    /// and its `Thumb::MTime` the file's modification time in whole seconds.
    /// - Throws: `.notFound`/`.io` when `file` itself cannot be `stat`ed.
    public func lookup(_ file: String, size: Size) throws(DarkroomImageError) -> Lookup {
        let (uri, mtime, _) = try Self.identity(file)
        let thumbnail = path(forURI: uri, size: size)
        if let texts = Self.texts(of: thumbnail) {
            return texts["Thumb::URI"] == uri && texts["Thumb::MTime"] == String(mtime)
                ? .valid(thumbnail) : .stale(thumbnail)
        }
        let failure = root + "/fail/" + failureName + "/" + Self.md5(uri) + ".png"
        if let texts = Self.texts(of: failure), texts["Thumb::URI"] == uri, texts["Thumb::MTime"] == String(mtime) {
            return .failed
        }
        return .missing
    }

    /// Writes `bitmap` (at most `size` px a side) as the thumbnail of `file`, atomically; returns its path.
    /// - Throws: `.invalidArgument` for a bitmap larger than the size, `.io` when the cache cannot be written.
    @discardableResult
    public func store(_ bitmap: Bitmap, for file: String, size: Size, mimeType: String) throws(DarkroomImageError)
        -> String
    {
        guard max(bitmap.width, bitmap.height) <= size.pixels else {
            throw DarkroomImageError(
                .invalidArgument, "a \(bitmap.width)×\(bitmap.height) thumbnail is larger than \(size.rawValue)")
        }
        let (uri, mtime, bytes) = try Self.identity(file)
        var options = EncodeOptions()
        options.pngCompressionLevel = Self.compressionLevel
        options.pngText = [
            PNGText("Thumb::URI", uri), PNGText("Thumb::MTime", String(mtime)), PNGText("Thumb::Size", String(bytes)),
            PNGText("Thumb::Mimetype", mimeType), PNGText("Software", "Darkroom"),
        ]
        let destination = path(forURI: uri, size: size)
        try Self.writePrivately(ImageEncoder.encode(bitmap, as: .png, options: options), to: destination)
        return destination
    }

    /// Records that `file` could not be thumbnailed (as it is now), so that lookups answer ``Lookup/failed``.
    public func storeFailure(for file: String) throws(DarkroomImageError) {
        let (uri, mtime, _) = try Self.identity(file)
        let pixel = try Bitmap(width: 1, height: 1, format: .bgra8Premultiplied, isOpaque: false)
        var options = EncodeOptions()
        options.pngText = [
            PNGText("Thumb::URI", uri), PNGText("Thumb::MTime", String(mtime)), PNGText("Software", "Darkroom"),
        ]
        try Self.writePrivately(
            ImageEncoder.encode(pixel, as: .png, options: options),
            to: root + "/fail/" + failureName + "/" + Self.md5(uri) + ".png")
    }

    /// zlib level for the thumbnails: level 3 writes a photo thumbnail several times faster than the default 6, for
    /// files a few percent larger (docs/PERFORMANCE.md, "Desktop thumbnails").
    static let compressionLevel = 3

    /// The MIME type the specification's `Thumb::Mimetype` names for an image with this header: a video's
    /// container's own (`video/quicktime`, `video/webm`…), else the format's.
    public static func mimeType(of probe: ImageProbe) -> String {
        probe.video?.mimeType ?? mimeType(of: probe.format)
    }

    /// The MIME type the specification's `Thumb::Mimetype` names for a format: the format's own, except for icons,
    /// which shared-mime-info (and so GLib) names `image/vnd.microsoft.icon`.
    public static func mimeType(of format: ImageFileFormat) -> String {
        format == .ico ? "image/vnd.microsoft.icon" : format.mimeType
    }

    // MARK: - Files

    /// The file's URI, modification time (whole seconds) and size.
    static func identity(_ file: String) throws(DarkroomImageError) -> (uri: String, mtime: Int, bytes: Int) {
        var status = stat()
        guard stat(file, &status) == 0 else {
            let missing = errno == ENOENT || errno == ENOTDIR
            throw DarkroomImageError(missing ? .notFound : .io, "cannot stat \(file): \(POSIXIO.lastError)")
        }
        return (FileURI.of(path: file), Int(status.st_mtim.tv_sec), Int(status.st_size))
    }

    /// The `tEXt` chunks of the PNG at `path`, nil when there is none (reads at most its first 64 KiB).
    static func texts(of path: String) -> [String: String]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var head = [UInt8](repeating: 0, count: 64 << 10)
        guard let count = head.withUnsafeMutableBytes({ POSIXIO.read(fd, into: $0, at: 0) }) else { return nil }
        return head.withUnsafeBytes { PNGTextChunks.read(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
    }

    /// Writes `bytes` to `path` through a temporary file in its folder (mode 0600, folders created 0700).
    static func writePrivately(_ bytes: [UInt8], to path: String) throws(DarkroomImageError) {
        let folder = String(path[..<(path.lastIndex(of: "/") ?? path.startIndex)])
        try FileBytes.makeFolders(folder, mode: 0o700)
        let temporary = folder + "/.darkroom-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).png"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw DarkroomImageError(.io, "cannot create \(temporary): \(POSIXIO.lastError)") }
        let written = bytes.withUnsafeBytes { POSIXIO.write(fd, $0) }
        close(fd)
        guard written, rename(temporary, path) == 0 else {
            let error = DarkroomImageError(.io, "cannot write \(path): \(POSIXIO.lastError)")
            unlink(temporary)
            throw error
        }
    }

    static func md5(_ text: String) -> String {
        Hex.encode(Insecure.MD5.hash(data: Array(text.utf8)))
    }
}
