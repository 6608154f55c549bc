import DarkroomImage
import NIOCore

/// An encoded thumbnail, ready to send: its bytes (held as the `ByteBuffer` a response sends without copying),
/// format and pixel size.
struct EncodedThumbnail: Sendable, Equatable {
    /// The encoded file, as sent.
    var body: ByteBuffer
    /// The encoded file (a copy).
    var bytes: [UInt8] { Array(body.readableBytesView) }
    /// Its format (decides `Content-Type`).
    var format: ImageFileFormat
    /// Pixel width.
    var width: Int
    /// Pixel height.
    var height: Int

    /// Creates a thumbnail value.
    init(bytes: [UInt8], format: ImageFileFormat, width: Int, height: Int) {
        self.body = ByteBuffer(bytes: bytes)
        self.format = format
        self.width = width
        self.height = height
    }

    /// The `Content-Type` to send.
    var contentType: String { format.mimeType }

    /// The disk cache's extended data for this thumbnail: `format width height` (a few bytes of ASCII).
    var metadata: [UInt8] { Array("\(format.rawValue) \(width) \(height)".utf8) }

    /// Rebuilds a thumbnail from its bytes and ``metadata``; `nil` when the metadata is not ours.
    init?(bytes: [UInt8], metadata: [UInt8]?) {
        guard let metadata, let text = String(validating: metadata, as: UTF8.self) else { return nil }
        let parts = text.split(separator: " ")
        guard parts.count == 3, let format = ImageFileFormat(rawValue: String(parts[0])),
            let w = Int(parts[1]), let h = Int(parts[2])
        else { return nil }
        self.init(bytes: bytes, format: format, width: w, height: h)
    }
}
