import Synchronization
import Testing

@testable import DarkroomCache

/// A clock the test moves by hand.
final class ManualClock: Sendable {
    private let ns = Atomic<UInt64>(1_000_000_000)
    func now() -> UInt64 { ns.load(ordering: .relaxed) }
    func advance(_ d: Duration) { ns.add(d.nanoseconds, ordering: .relaxed) }
}

/// A value that calls back into its cache when released: deadlocks if the cache releases values under its lock.
final class ReentrantValue: Sendable {
    let cache: MemoryCache<Int, ReentrantValue>
    init(_ cache: MemoryCache<Int, ReentrantValue>) { self.cache = cache }
    deinit { _ = cache.count }
}

@Suite("MemoryCache")
struct MemoryCacheTests {
    @Test("get returns what set stored and marks it most recently used")
    func lruOrder() {
        // Given three entries set in order a, b, c
        let cache = MemoryCache<String, Int>(limits: MemoryCacheLimits(costLimit: 1000))
        cache.set(1, forKey: "a", cost: 1)
        cache.set(2, forKey: "b", cost: 1)
        cache.set(3, forKey: "c", cost: 1)
        #expect(cache.keysByRecency == ["c", "b", "a"])
        // When a is read and b replaced
        #expect(cache.value(forKey: "a") == 1)
        cache.set(20, forKey: "b", cost: 1)
        // Then the order is b, a, c and values are current
        #expect(cache.keysByRecency == ["b", "a", "c"])
        #expect(cache.value(forKey: "b") == 20)
        #expect(cache.isConsistent)
    }

    @Test("the cost limit evicts least recently used first")
    func costLimit() {
        // Given a cost limit of 10 and entries of cost 4 (each under the per-entry fraction of 0.5)
        let cache = MemoryCache<Int, Int>(limits: MemoryCacheLimits(costLimit: 10, maxEntryCostFraction: 0.5))
        cache.set(0, forKey: 0, cost: 4)
        cache.set(1, forKey: 1, cost: 4)
        _ = cache.value(forKey: 0)
        // When a third pushes past the limit
        cache.set(2, forKey: 2, cost: 4)
        // Then the least recently used (1) is gone and cost is within the limit
        #expect(cache.value(forKey: 1) == nil)
        #expect(cache.value(forKey: 0) == 0 && cache.value(forKey: 2) == 2)
        #expect(cache.totalCost == 8)
        #expect(cache.statistics.evictions == 1)
        #expect(cache.isConsistent)
    }

    @Test("the count limit evicts least recently used first")
    func countLimit() {
        let cache = MemoryCache<Int, Int>(limits: MemoryCacheLimits(costLimit: .max, countLimit: 3))
        for i in 0..<5 { cache.set(i, forKey: i, cost: 0) }
        #expect(cache.count == 3)
        #expect(cache.keysByRecency == [4, 3, 2])
        #expect(cache.isConsistent)
    }

    @Test("an entry older than maxAge reads as absent and is dropped")
    func ttl() {
        // Given a 10 s TTL and a manual clock
        let clock = ManualClock()
        let cache = MemoryCache<String, Int>(
            limits: MemoryCacheLimits(costLimit: 100, maxAge: .seconds(10)),
            clock: clock.now)
        cache.set(1, forKey: "old", cost: 1)
        clock.advance(.seconds(6))
        cache.set(2, forKey: "new", cost: 1)
        // When 5 more seconds pass
        clock.advance(.seconds(5))
        // Then the first is stale, the second fresh
        #expect(!cache.contains("old"))
        #expect(cache.value(forKey: "old") == nil)
        #expect(cache.value(forKey: "new") == 2)
        #expect(cache.count == 1)
        // And removeExpired drops the rest once they age
        clock.advance(.seconds(10))
        cache.removeExpired()
        #expect(cache.count == 0)
        #expect(cache.statistics.evictions == 2)
    }

    @Test("an entry over the per-entry fraction is not cached and drops the older value")
    func oversizedEntry() {
        let cache = MemoryCache<String, Int>(limits: MemoryCacheLimits(costLimit: 100, maxEntryCostFraction: 0.25))
        cache.set(1, forKey: "k", cost: 25)
        #expect(cache.value(forKey: "k") == 1)
        cache.set(2, forKey: "k", cost: 26)
        #expect(cache.value(forKey: "k") == nil)
        #expect(cache.totalCost == 0)
    }

    @Test("trim(toCost:), trim(toCount:), removeValue and removeAll")
    func trimming() {
        let cache = MemoryCache<Int, Int>(limits: MemoryCacheLimits(costLimit: 1000))
        for i in 0..<10 { cache.set(i, forKey: i, cost: 10) }
        cache.trim(toCost: 55)
        #expect(cache.totalCost == 50 && cache.keysByRecency == [9, 8, 7, 6, 5])
        cache.trim(toCount: 2)
        #expect(cache.keysByRecency == [9, 8])
        #expect(cache.removeValue(forKey: 9) == 9)
        #expect(cache.removeValue(forKey: 9) == nil)
        cache.removeAll()
        #expect(cache.count == 0 && cache.totalCost == 0 && cache.isConsistent)
        // Slots are reused after removal
        for i in 0..<10 { cache.set(i, forKey: i, cost: 10) }
        #expect(cache.count == 10 && cache.isConsistent)
    }

    @Test("lowering the limits evicts at once")
    func changingLimits() {
        let cache = MemoryCache<Int, Int>(limits: MemoryCacheLimits(costLimit: 1000))
        for i in 0..<10 { cache.set(i, forKey: i, cost: 10) }
        cache.limits = MemoryCacheLimits(costLimit: 30)
        #expect(cache.count == 3 && cache.totalCost == 30)
    }

    @Test("hits, misses and evictions are counted")
    func counters() {
        let cache = MemoryCache<Int, Int>(limits: MemoryCacheLimits(costLimit: .max, countLimit: 1))
        cache.set(1, forKey: 1, cost: 5)
        _ = cache.value(forKey: 1)
        _ = cache.value(forKey: 2)
        cache.set(2, forKey: 2, cost: 7)
        let s = cache.statistics
        #expect(s == MemoryCacheStatistics(hits: 1, misses: 1, evictions: 1, count: 1, totalCost: 7))
    }

    @Test("values are released outside the lock (a deinit that re-enters the cache does not deadlock)")
    func releaseOutsideLock() {
        // Given values whose deinit reads the cache
        let cache = MemoryCache<Int, ReentrantValue>(limits: MemoryCacheLimits(costLimit: .max, countLimit: 2))
        // When they are evicted, replaced, removed and cleared
        for i in 0..<4 { cache.set(ReentrantValue(cache), forKey: i, cost: 1) }
        cache.set(ReentrantValue(cache), forKey: 3, cost: 1)
        cache.removeValue(forKey: 3)
        cache.trim(toCount: 0)
        for i in 0..<4 { cache.set(ReentrantValue(cache), forKey: i, cost: 1) }
        cache.removeAll()
        // Then we get here, and the cache is empty
        #expect(cache.count == 0)
    }
}
