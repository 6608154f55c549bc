import DarkroomSupport
import Synchronization

/// An in-memory LRU cache with limits on total cost, entry count and age, safe to use from any thread.
///
/// A lock-protected class, not an actor: a hit is answered synchronously on the calling thread (a render loop never
/// hops threads for a hit). Every operation is O(1) — a hash lookup plus a few index writes in an intrusive doubly
/// linked list held in one array — and holds the lock only for that; values that leave the cache (evicted, replaced,
/// removed, trimmed) are released after the lock is dropped, so a slow `deinit` never stalls other threads.
/// An entry whose cost exceeds ``MemoryCacheLimits/maxEntryCostFraction`` of the cost limit is not cached.
///
/// ```swift
/// let thumbnails = MemoryCache<String, Bitmap>()            // 1/8 of available memory, see MemoryCacheLimits.default
/// thumbnails.set(bitmap, forKey: url, cost: bitmap.cost)
/// let hit = thumbnails.value(forKey: url)
/// ```
public final class MemoryCache<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    // Values leaving the store are collected in a local `released` array (or returned) and destroyed when the
    // method returns, after `withLock` has dropped the lock.
    @usableFromInline let store: Locked<LRUStore<Key, Value>>
    @usableFromInline let clock: @Sendable () -> UInt64

    /// Creates an empty cache with `limits` (by default ``MemoryCacheLimits/default``: 1/8 of available memory).
    public convenience init(limits: MemoryCacheLimits = .default) {
        self.init(limits: limits, clock: MonotonicClock.coarseNanoseconds)
    }

    /// Creates a cache whose ages are measured by `clock` (monotonic nanoseconds); for tests.
    init(limits: MemoryCacheLimits, clock: @escaping @Sendable () -> UInt64) {
        store = Locked(LRUStore(limits: limits))
        self.clock = clock
    }

    // MARK: Reading

    /// The value for `key`, marking it most recently used; `nil` when absent or older than the age limit.
    /// O(1): one lock, one hash lookup. Counts a hit or a miss.
    @inlinable
    public func value(forKey key: Key) -> Value? {
        var released: [Value] = []
        let value = store.withLock { s in
            s.value(forKey: key, now: s.hasTTL ? clock() : 0, released: &released)
        }
        return value
    }

    /// Whether a fresh value for `key` is cached, without changing recency or counting a hit or miss.
    @inlinable
    public func contains(_ key: Key) -> Bool {
        store.withLock { s in s.contains(key, now: s.hasTTL ? clock() : 0) }
    }

    // MARK: Writing

    /// Stores `value` for `key` with `cost` (bytes; for a bitmap `Bitmap.cost`) as the most recently used entry,
    /// then evicts least recently used entries until every limit holds. O(1) plus one step per eviction.
    /// A value costing more than the per-entry maximum is not stored, and any older value for `key` is removed.
    @inlinable
    public func set(_ value: Value, forKey key: Key, cost: Int) {
        var released: [Value] = []
        store.withLock { s in s.set(value, forKey: key, cost: cost, now: s.hasTTL ? clock() : 0, released: &released) }
    }

    /// Removes the value for `key` and returns it (`nil` when absent). O(1).
    @discardableResult
    @inlinable
    public func removeValue(forKey key: Key) -> Value? {
        store.withLock { $0.removeValue(forKey: key) }
    }

    /// Removes every entry. O(1) under the lock; the values are released after it, O(n).
    public func removeAll() {
        _ = store.withLock { $0.takeAll() }
    }

    // MARK: Trimming

    /// Evicts least recently used entries until the total cost is at most `cost`. One step per eviction.
    public func trim(toCost cost: Int) {
        var released: [Value] = []
        store.withLock { $0.evict(toCost: max(0, cost), toCount: .max, released: &released) }
    }

    /// Evicts least recently used entries until at most `count` remain. One step per eviction.
    public func trim(toCount count: Int) {
        var released: [Value] = []
        store.withLock { $0.evict(toCost: .max, toCount: max(0, count), released: &released) }
    }

    /// Removes every entry older than the age limit. O(n) under the lock: call from a background timer, not per frame.
    public func removeExpired() {
        var released: [Value] = []
        store.withLock { s in s.removeExpired(now: clock(), released: &released) }
    }

    // MARK: Limits and counters

    /// The limits in force. Setting them evicts to meet the new ones.
    public var limits: MemoryCacheLimits {
        get { store.withLock { $0.limits } }
        set {
            var released: [Value] = []
            store.withLock { $0.setLimits(newValue, released: &released) }
        }
    }

    /// Hits, misses, evictions, entry count and total cost, read together under the lock.
    public var statistics: MemoryCacheStatistics {
        store.withLock { s in
            MemoryCacheStatistics(
                hits: s.hits, misses: s.misses, evictions: s.evictions, count: s.count,
                totalCost: s.totalCost)
        }
    }

    /// The total cost of the cached entries.
    public var totalCost: Int { store.withLock { $0.totalCost } }

    /// The number of cached entries (stale ones included until they are read or ``removeExpired()`` runs).
    public var count: Int { store.withLock { $0.count } }

    /// Keys from most to least recently used; O(n), for tests.
    var keysByRecency: [Key] { store.withLock { $0.keysByRecency() } }

    /// Whether the list, the index, the cost total and the limits agree; O(n), for tests.
    var isConsistent: Bool { store.withLock { $0.isConsistent() } }
}

/// A ``MemoryCache``'s counters, read together at one instant.
public struct MemoryCacheStatistics: Sendable, Equatable {
    /// Reads that found a fresh value.
    public var hits: UInt64
    /// Reads that found nothing or a stale value.
    public var misses: UInt64
    /// Entries dropped to meet a limit or because they were stale (explicit removals are not counted).
    public var evictions: UInt64
    /// Entries cached now.
    public var count: Int
    /// Their total cost.
    public var totalCost: Int
}
