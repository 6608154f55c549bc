extension ImageProber {
    /// The most EXIF bytes read for a still's content identifier (a JPEG's APP1 segment holds at most 64 KiB).
    static let maxIdentifierExifBytes = 1 << 16

    /// The content identifier an Apple Live Photo's still (JPEG or HEIC) carries in its EXIF maker note, which its
    /// video repeats (`VideoDetails/contentIdentifier`); nil when the still has none (it then has no Live Photo
    /// video) or is another format. Reads the JPEG's marker segments or the HEIF container's boxes and EXIF item,
    /// never the image.
    public static func contentIdentifier(in bytes: UnsafeRawBufferPointer, limits: DecodeLimits = .default) -> String? {
        switch format(of: bytes) {
        case .jpeg:
            let locator = MotionPhotoLocator(size: bytes.count) { offset, count in
                guard offset >= 0, count >= 0, offset <= bytes.count - count else { return nil }
                return Array(bytes[offset..<(offset + count)])
            }
            return jpegContentIdentifier(locator)
        case .heic:
            return heifContentIdentifier(try? HEIFDecoder.Container(bytes, limits: limits))
        default:
            return nil
        }
    }

    /// ``contentIdentifier(in:limits:)`` of the file at `path`, read in place (a JPEG's segments, a HEIC's boxes and
    /// EXIF item).
    /// - Throws: `.notFound`/`.io` when the file cannot be read.
    public static func contentIdentifier(
        ofFileAt path: String, limits: DecodeLimits = .default
    ) throws(DarkroomImageError) -> String? {
        let (format, identifier) = try MotionPhotoLocator.withFile(path) { locator, format in
            (format, format == .jpeg ? jpegContentIdentifier(locator) : nil)
        }
        guard format == .heic else { return identifier }
        return heifContentIdentifier(try? HEIFDecoder.Container(fileAt: path, limits: limits))
    }

    private static func jpegContentIdentifier(_ locator: MotionPhotoLocator) -> String? {
        locator.jpegAPP1(startingWith: Array("Exif\0\0".utf8)).flatMap { exif in
            exif.withUnsafeBytes { AppleMakerNote.contentIdentifier(exif: $0) }
        }
    }

    private static func heifContentIdentifier(_ container: HEIFDecoder.Container?) -> String? {
        guard case .block(let exif)? = container?.exif(maxBytes: maxIdentifierExifBytes) else { return nil }
        return exif.withUnsafeBytes { AppleMakerNote.contentIdentifier(exif: $0) }
    }
}
