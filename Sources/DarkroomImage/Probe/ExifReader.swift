/// Reads the orientation tag from TIFF-structured EXIF data (JPEG APP1, PNG eXIf, WebP EXIF).
///
/// Damaged EXIF never fails a probe: viewers ignore it, so the reader answers nil and the image shows as stored.
enum ExifReader {
    /// The TIFF tag number of Orientation.
    static let orientationTag = 0x0112

    /// The orientation in `tiff`, which starts with the TIFF header ("II*\0" or "MM\0*"); nil when there is
    /// no orientation tag or the structure is damaged. An orientation tag with a value outside 1–8, or not a SHORT
    /// or LONG, answers ``ExifOrientation/up``. Reads only IFD0; allocates nothing.
    static func orientation(tiff: UnsafeRawBufferPointer) -> ExifOrientation? {
        guard let ifd = IFDReader(tiff: tiff) else { return nil }
        return orientation(ifd)
    }

    /// The orientation in an EXIF payload that may start with the JPEG-style "Exif\0\0" preamble
    /// (WebP EXIF chunks are written both ways).
    static func orientation(exifPayload payload: UnsafeRawBufferPointer) -> ExifOrientation? {
        guard let ifd = IFDReader(exifPayload: payload) else { return nil }
        return orientation(ifd)
    }

    private static func orientation(_ ifd: IFDReader) -> ExifOrientation? {
        do throws(ProbeStop) {
            guard let entry = try ifd.entry(orientationTag, inIFDAt: try ifd.firstIFD()) else { return nil }
            return try ifd.integer(at: entry).flatMap(ExifOrientation.init(rawValue:)) ?? .up
        } catch {
            return nil
        }
    }
}
