import Darkroom
import DarkroomImage
import DarkroomSupport

/// ThumbHash placeholders of the root's images, by `src`, remembered from their first rendered thumbnail so the
/// gallery can paint each one while its thumbnail loads. Computing one costs a box resize of the thumbnail to at
/// most 100 px and the ThumbHash encode (``ThumbHash/placeholder(ofThumbnail:)``), once per image; the store holds
/// at most ``capacity`` hashes (tens of bytes each) in memory and starts over when full.
final class GalleryPlaceholders: Sendable {
    /// Most hashes kept.
    let capacity: Int
    private let hashes = Locked<[String: [UInt8]]>([:])

    init(capacity: Int = 200_000) { self.capacity = capacity }

    /// The hash for `src`, if a thumbnail of it has been rendered.
    func hash(for src: String) -> [UInt8]? { hashes.withLock { $0[src] } }

    /// Remembers the placeholder of `src` from a rendered `bitmap` unless one is known (blocking: call on a
    /// pipeline processing thread). Failures only mean no placeholder.
    func remember(_ src: String, from bitmap: Bitmap) {
        guard hash(for: src) == nil, let hash = ThumbHash.placeholder(ofThumbnail: bitmap) else { return }
        hashes.withLock {
            if $0.count >= capacity { $0.removeAll(keepingCapacity: true) }
            $0[src] = hash
        }
    }
}
