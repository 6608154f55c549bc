import DarkroomSupport

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Finds the clip a Motion Photo stores inside its file, reading only the places its metadata names: the JPEG's
/// marker segments (for the XMP), the last bytes of the file (Samsung's trailer directory) or the top-level boxes
/// of a HEIF file — never a scan of the whole file.
///
/// The order is the Motion Photo specification's, then the older layouts: the `Container:Directory` of the XMP,
/// then `MicroVideoOffset`, then Samsung's `SEFH`/`SEFT` trailer (JPEG); a HEIF or AVIF file's `mpvd` box. A
/// location is returned only when it lies inside the file and starts with a video container's signature (an XMP
/// packet left behind by an editor that dropped the clip names no clip). `Camera:MotionPhoto="0"` means the photo
/// is to be shown as a still whatever follows it, as the specification says.
struct MotionPhotoLocator {
    /// The file's length.
    let size: Int
    /// `count` bytes from `offset`, or nil when they cannot all be read.
    let read: (_ offset: Int, _ count: Int) -> [UInt8]?

    /// The most marker segments walked before the scan (a JPEG holds a handful; ICC profiles split in many).
    static let maxSegments = 256
    /// The most top-level boxes walked in a HEIF file.
    static let maxBoxes = 64
    /// The longest Samsung trailer directory read (ExifTool's bound).
    static let maxTrailerDirectory = 0x10000

    /// The most XMP bytes read from a HEIF file's XMP item.
    static let maxHEIFXMPBytes = 1 << 20

    /// The clip of a file of `format`; `heifXMP` reads a HEIF or AVIF file's XMP item (its presentation time, and
    /// whether it is to be shown still), called only when the file has an `mpvd` box.
    func locate(_ format: ImageFileFormat?, heifXMP: () -> Substring? = { nil }) -> EmbeddedVideo? {
        switch format {
        case .jpeg:
            let xmp = jpegXMP()
            if let xmp, let found = fromXMP(xmp) { return found }
            if xmp.map(Self.isStillOnly) == true { return nil }
            return samsungTrailer()
        case .heic, .avif:
            guard var found = heifBox() else { return nil }
            if let xmp = heifXMP() {
                if Self.isStillOnly(xmp) { return nil }
                found.presentationTime = Self.presentationTime(xmp)
            }
            return found
        default: return nil
        }
    }

    // MARK: XMP

    /// The text of the JPEG's XMP packet (the APP1 segment that starts with the XMP signature).
    func jpegXMP() -> Substring? {
        let signature = GainMapMetadata.xmpPacketSignature
        return jpegAPP1(startingWith: signature).map { Substring(decoding: $0[signature.count...], as: UTF8.self) }
    }

    /// The payload of the JPEG's first APP1 segment that starts with `signature` (the signature included), read
    /// from the marker segments before the scan.
    func jpegAPP1(startingWith signature: [UInt8]) -> [UInt8]? {
        guard let soi = read(0, 2), soi == [0xFF, 0xD8] else { return nil }
        var position = 2
        for _ in 0..<Self.maxSegments {
            guard let header = read(position, 4), header[0] == 0xFF else { return nil }
            let marker = header[1]
            if marker == 0xDA || marker == 0xD9 { return nil }  // the scan (or the end) comes before the segment
            if marker == 0xFF {
                position += 1
                continue
            }
            let length = Int(header[2]) << 8 | Int(header[3])
            guard length >= 2 else { return nil }
            if marker == 0xE1, length - 2 > signature.count, let payload = read(position + 4, length - 2),
                payload.starts(with: signature)
            {
                return payload
            }
            position += 2 + length
        }
        return nil
    }

    /// Whether the packet says to show the photo as a still (`Camera:MotionPhoto="0"` or `MicroVideo="0"`).
    static func isStillOnly(_ xmp: Substring) -> Bool {
        let scanner = XMPScanner(text: xmp)
        let prefix = XMPScanner.prefix(boundTo: "http://ns.google.com/photos/1.0/camera/", in: xmp) ?? "GCamera"
        let flag = scanner.value("\(prefix):MotionPhoto") ?? scanner.value("\(prefix):MicroVideo")
        return flag.map { (Int($0) ?? 0) <= 0 } ?? false
    }

    /// The clip the XMP locates: the `MotionPhoto` entry of its `Container:Directory` (counted back from the end of
    /// the file, through the entries after it), else the older `MicroVideoOffset` (the clip's length from the end).
    func fromXMP(_ xmp: Substring) -> EmbeddedVideo? {
        guard !Self.isStillOnly(xmp) else { return nil }
        let scanner = XMPScanner(text: xmp)
        let camera = XMPScanner.prefix(boundTo: "http://ns.google.com/photos/1.0/camera/", in: xmp) ?? "GCamera"
        let items = scanner.containerItems()
        if let index = items.firstIndex(where: { $0.semantic == "MotionPhoto" }) {
            let time = Self.presentationTime(xmp)
            // Each entry from this one on is stored in order up to the end of the file; an entry's length counts
            // the padding that follows it, which is not part of its data. Each length must lie within the file
            // (so their sum cannot overflow, however many a hostile packet lists)
            let lengths = items[index...].map { $0.length ?? 0 }
            if lengths.allSatisfy({ $0 > 0 && $0 <= size }) {
                let trailing = lengths.reduce(0, +)
                let length = lengths[0] - items[index].padding
                if let found = checked(.containerDirectory, offset: size - trailing, length: length, time: time) {
                    return found
                }
            }
        }
        if let offset = scanner.value("\(camera):MicroVideoOffset").flatMap({ Int($0) }), offset > 0 {
            let time = scanner.value("\(camera):MicroVideoPresentationTimestampUs").flatMap(Self.seconds)
            return checked(.microVideo, offset: size - offset, length: offset, time: time)
        }
        return nil
    }

    /// The time of the still's frame in the clip, `Camera:MotionPhotoPresentationTimestampUs`.
    static func presentationTime(_ xmp: Substring) -> Double? {
        let camera = XMPScanner.prefix(boundTo: "http://ns.google.com/photos/1.0/camera/", in: xmp) ?? "GCamera"
        return XMPScanner(text: xmp).value("\(camera):MotionPhotoPresentationTimestampUs").flatMap(Self.seconds)
    }

    private static func seconds(_ microseconds: String) -> Double? {
        guard let value = Double(microseconds), value >= 0, value.isFinite else { return nil }
        return value / 1_000_000
    }

    // MARK: Samsung's trailer

    /// The `MotionPhoto_Data` entry of Samsung's trailer: the file ends with the directory's length and `SEFT`;
    /// the directory (`SEFH`, a version, a count, then 12-byte entries of type, offset back from the directory
    /// and size) points at blocks holding a name and then the data.
    func samsungTrailer() -> EmbeddedVideo? {
        guard size > 8, let tail = read(size - 8, 8), Array(tail[4...]) == Array("SEFT".utf8) else { return nil }
        let directoryLength = Int(Self.littleEndian32(tail, 0))
        let directoryStart = size - 8 - directoryLength
        guard directoryLength >= 12, directoryLength < Self.maxTrailerDirectory, directoryStart > 0,
            let directory = read(directoryStart, directoryLength), Array(directory[0..<4]) == Array("SEFH".utf8)
        else { return nil }
        let count = Int(Self.littleEndian32(directory, 8))
        guard count >= 0, 12 + 12 * count <= directoryLength else { return nil }
        for index in 0..<count {
            let entry = 12 + 12 * index
            let type = Int(directory[entry + 2]) | Int(directory[entry + 3]) << 8
            let back = Int(Self.littleEndian32(directory, entry + 4))
            let blockSize = Int(Self.littleEndian32(directory, entry + 8))
            guard type == 0x0A30, back <= directoryStart, blockSize >= 8, blockSize <= back else { continue }
            let blockStart = directoryStart - back
            guard let header = read(blockStart, 8) else { continue }
            let nameLength = Int(Self.littleEndian32(header, 4))
            guard nameLength >= 0, 8 + nameLength < blockSize, let name = read(blockStart + 8, nameLength),
                String(decoding: name, as: UTF8.self) == "MotionPhoto_Data"
            else { continue }
            let dataStart = blockStart + 8 + nameLength
            return checked(.samsungTrailer, offset: dataStart, length: blockSize - 8 - nameLength, time: nil)
        }
        return nil
    }

    private static func littleEndian32(_ bytes: [UInt8], _ at: Int) -> UInt32 {
        UInt32(bytes[at]) | UInt32(bytes[at + 1]) << 8 | UInt32(bytes[at + 2]) << 16 | UInt32(bytes[at + 3]) << 24
    }

    // MARK: HEIF

    /// The payload of the first top-level `mpvd` box.
    func heifBox() -> EmbeddedVideo? {
        var position = 0
        for _ in 0..<Self.maxBoxes {
            guard position + 8 <= size, let header = read(position, 8) else { return nil }
            var boxSize =
                Int(UInt32(header[0]) << 24 | UInt32(header[1]) << 16 | UInt32(header[2]) << 8)
                | Int(header[3])
            var headerSize = 8
            if boxSize == 1 {
                guard let large = read(position + 8, 8) else { return nil }
                boxSize = large.reduce(0) { $0 << 8 | Int($1) }
                headerSize = 16
            } else if boxSize == 0 {
                boxSize = size - position
            }
            guard boxSize >= headerSize, boxSize <= size - position else { return nil }
            if Array(header[4..<8]) == Array("mpvd".utf8) {
                return checked(
                    .heifBox, offset: position + headerSize, length: boxSize - headerSize, time: nil)
            }
            position += boxSize
        }
        return nil
    }

    // MARK: Checking

    /// The location, when it lies inside the file and its first bytes are a video container's.
    private func checked(_ layout: EmbeddedVideo.Layout, offset: Int, length: Int, time: Double?) -> EmbeddedVideo? {
        guard offset > 0, length >= 16, offset <= size - length,
            let head = read(offset, min(length, 64)),
            head.withUnsafeBytes({ ImageProber.format(of: $0) }) == .video
        else { return nil }
        return EmbeddedVideo(layout: layout, offset: offset, length: length, presentationTime: time)
    }
}

extension ImageProber {
    /// The clip a Motion Photo (JPEG, HEIC or AVIF) stores inside `bytes`, or nil when it stores none. Reads the
    /// metadata and the places it names, not the clip: cost grows with the number of marker segments or boxes.
    public static func embeddedVideo(in bytes: UnsafeRawBufferPointer) -> EmbeddedVideo? {
        let locator = MotionPhotoLocator(size: bytes.count) { offset, count in
            guard offset >= 0, count >= 0, offset <= bytes.count - count else { return nil }
            return Array(bytes[offset..<(offset + count)])
        }
        let format = format(of: bytes)
        return locator.locate(format) {
            (try? HEIFDecoder.Container(bytes, limits: .default))?.xmp(maxBytes: MotionPhotoLocator.maxHEIFXMPBytes)
        }
    }

    /// The clip a Motion Photo file stores, or nil when it stores none (or is not a JPEG, HEIC or AVIF). Reads the
    /// file's header, its metadata segments or top-level box headers and its last bytes, never the clip or the
    /// image, so a photo larger than `DecodeLimits/maxInputBytes` (with its clip) is read too.
    /// - Throws: `.notFound`/`.io` when the file cannot be read.
    public static func embeddedVideo(ofFileAt path: String) throws(DarkroomImageError) -> EmbeddedVideo? {
        try MotionPhotoLocator.withFile(path) { locator, format in
            locator.locate(format) {
                (try? HEIFDecoder.Container(fileAt: path, limits: .default))?.xmp(
                    maxBytes: MotionPhotoLocator.maxHEIFXMPBytes)
            }
        }
    }
}

extension MotionPhotoLocator {
    /// Calls `body` with a locator over the file at `path` (read with `pread`, never whole) and the format of its
    /// first bytes.
    /// - Throws: `.notFound`/`.io` when the file cannot be opened or is not a regular file.
    static func withFile<T>(
        _ path: String, _ body: (MotionPhotoLocator, ImageFileFormat?) -> T
    ) throws(DarkroomImageError) -> T {
        let (fd, size) = try FileBytes.openRegularFile(path, limit: .max)
        defer { _ = close(fd) }
        let locator = MotionPhotoLocator(size: size) { offset, count in
            guard offset >= 0, count >= 0, offset <= size - count else { return nil }
            var out = [UInt8](repeating: 0, count: count)
            let got = out.withUnsafeMutableBytes { buffer in
                var filled = 0
                while filled < count {
                    let n = pread(fd, buffer.baseAddress! + filled, count - filled, off_t(offset + filled))
                    if n < 0 && errno == EINTR { continue }
                    guard n > 0 else { break }
                    filled += n
                }
                return filled
            }
            return got == count ? out : nil
        }
        let head = locator.read(0, min(size, 64))
        return body(locator, head?.withUnsafeBytes { ImageProber.format(of: $0) })
    }
}
