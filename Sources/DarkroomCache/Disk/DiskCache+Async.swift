import DarkroomSupport

/// `async` variants that run the blocking call on the cache's own I/O threads (at most four at once), so a task on
/// Swift's cooperative pool (or the main actor) never blocks its thread on disk. Same results and errors as the
/// synchronous calls; each costs one thread hop on top.
extension DiskCache {
    /// ``data(forKey:)-ap1k`` off the caller's thread.
    public func data(forKey key: String) async -> [UInt8]? {
        await withCheckedContinuation { continuation in
            io.enqueue { _ in continuation.resume(returning: self.data(forKey: key)) }
        }
    }

    /// ``entry(forKey:)`` off the caller's thread.
    public func entry(forKey key: String) async -> DiskCacheEntry? {
        await withCheckedContinuation { continuation in
            io.enqueue { _ in continuation.resume(returning: self.entry(forKey: key)) }
        }
    }

    /// ``set(_:forKey:extendedData:)-9ezxo`` off the caller's thread.
    public func set(_ data: [UInt8], forKey key: String, extendedData: [UInt8]? = nil) async throws(DarkroomCacheError)
    {
        let result = await withCheckedContinuation {
            (continuation: CheckedContinuation<Result<Void, DarkroomCacheError>, Never>) in
            io.enqueue { _ in
                continuation.resume(
                    returning: Result { () throws(DarkroomCacheError) in
                        try self.set(data, forKey: key, extendedData: extendedData)
                    })
            }
        }
        try result.get()
    }

    /// ``removeValue(forKey:)`` off the caller's thread.
    public func removeValue(forKey key: String) async throws(DarkroomCacheError) {
        let result = await withCheckedContinuation {
            (continuation: CheckedContinuation<Result<Void, DarkroomCacheError>, Never>) in
            io.enqueue { _ in
                continuation.resume(
                    returning: Result { () throws(DarkroomCacheError) in try self.removeValue(forKey: key) })
            }
        }
        try result.get()
    }
}
