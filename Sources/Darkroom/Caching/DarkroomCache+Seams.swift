import DarkroomCache
import Logging

/// DarkroomCache's memory LRU as the pipeline's memory cache: a hit is one lock and one hash lookup on the
/// caller's thread; cost is the bitmap's bytes.
extension MemoryCache: ImageCaching where Key == ImageCacheKey, Value == ImageContainer {
    /// ``MemoryCache/value(forKey:)``.
    @inlinable
    public func image(for key: ImageCacheKey) -> ImageContainer? { value(forKey: key) }
    /// ``MemoryCache/set(_:forKey:cost:)`` with the bitmap's cost (previews are never passed here).
    @inlinable
    public func store(_ image: ImageContainer, for key: ImageCacheKey) { set(image, forKey: key, cost: image.cost) }
    /// ``MemoryCache/removeValue(forKey:)``.
    public func removeImage(for key: ImageCacheKey) { _ = removeValue(forKey: key) }
}

/// DarkroomCache's disk cache as the pipeline's data cache: the metadata blob is stored as the entry's
/// `extendedData`. Calls block on disk; the pipeline makes them on its I/O threads only. A failed write is
/// logged and dropped (the cache is an optimisation, never a reason to fail a request).
extension DiskCache: DataCaching {
    /// ``DiskCache/entry(forKey:)``.
    public func cachedData(forKey key: String) -> CachedData? {
        entry(forKey: key).map { CachedData(data: $0.data, metadata: $0.extendedData) }
    }

    /// ``DiskCache/set(_:forKey:extendedData:)``.
    public func storeData(_ data: [UInt8], metadata: [UInt8]?, forKey key: String) {
        do {
            try set(data, forKey: key, extendedData: metadata)
        } catch {
            Logger(label: "darkroom.pipeline").warning(
                "disk cache write failed", metadata: ["key": "\(key)", "error": "\(error)"])
        }
    }

    /// ``DiskCache/removeValue(forKey:)``.
    public func removeData(forKey key: String) { try? removeValue(forKey: key) }
}
