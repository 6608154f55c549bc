import Darkroom
import DarkroomImage
import DarkroomSupport

/// ThumbHash placeholders of the root's images, by `src`, remembered from their first rendered thumbnail so the
/// gallery can paint each one while its thumbnail loads. Computing one costs a box resize of the thumbnail to at
/// most 100 px and the ThumbHash encode (about 1 ms), once per image; the store holds at most ``capacity``
/// hashes (about 30 bytes each) and starts over when full.
final class PlaceholderStore: Sendable {
    /// Most hashes kept.
    let capacity: Int
    private let hashes = Locked<[String: [UInt8]]>([:])

    init(capacity: Int = 200_000) { self.capacity = capacity }

    /// The hash for `src`, if a thumbnail of it has been rendered.
    func hash(for src: String) -> [UInt8]? { hashes.withLock { $0[src] } }

    /// Remembers the placeholder of `src` from a rendered `bitmap` unless one is known (blocking: call on a
    /// pipeline processing thread). Failures only mean no placeholder.
    func remember(_ src: String, from bitmap: Bitmap) {
        guard hash(for: src) == nil else { return }
        let side = ThumbHash.maxSide
        var small = bitmap
        if bitmap.width > side || bitmap.height > side {
            let scale = Double(side) / Double(max(bitmap.width, bitmap.height))
            let resize = ImageProcessors.Resize(
                width: max(1, Int(Double(bitmap.width) * scale)), height: max(1, Int(Double(bitmap.height) * scale)))
            guard let resized = try? resize.process(bitmap) else { return }
            small = resized
        }
        guard let hash = try? ThumbHash.encode(small) else { return }
        hashes.withLock {
            if $0.count >= capacity { $0.removeAll(keepingCapacity: true) }
            $0[src] = hash
        }
    }
}
