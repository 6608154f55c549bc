import DarkroomSupport
import DarkroomTestSupport
import Dispatch
import Synchronization
import Testing

@testable import DarkroomCache

/// Threads mixing every operation on one cache while invariants hold. Run under TSan:
/// `swift test --sanitize=thread --filter CacheThreadSafety`.
@Suite("CacheThreadSafety")
struct CacheThreadSafetyTests {
    @Test("MemoryCache: 4 threads mixing get/set/remove/trim/removeAll/limit changes keep it consistent")
    func memoryCacheStress() {
        // Given a small cache so eviction runs constantly
        let cache = MemoryCache<Int, [Int]>(limits: MemoryCacheLimits(costLimit: 4000, countLimit: 300))
        let wrong = Atomic<Int>(0)
        let overLimit = Atomic<Int>(0)
        let iterations = 40_000
        // When four threads hammer it (one also checks totals and changes limits)
        DispatchQueue.concurrentPerform(iterations: 4) { worker in
            var rng = SplitMix64(state: UInt64(worker + 1))
            for i in 0..<iterations {
                let key = Int(rng.next() % 500)
                switch rng.next() % 100 {
                case 0..<50:
                    // A value always names its key, so a mix-up would show.
                    if let v = cache.value(forKey: key), v.first != key { wrong.add(1, ordering: .relaxed) }
                case 50..<85:
                    cache.set([key, i], forKey: key, cost: Int(rng.next() % 40))
                case 85..<95:
                    if let v = cache.removeValue(forKey: key), v.first != key { wrong.add(1, ordering: .relaxed) }
                case 95..<98:
                    cache.trim(toCost: Int(rng.next() % 4000))
                case 98:
                    if worker == 0 {
                        cache.limits = MemoryCacheLimits(costLimit: 2000 + Int(rng.next() % 4000), countLimit: 300)
                    }
                default:
                    if i % 1000 == 0 { cache.removeAll() }
                    let s = cache.statistics
                    if s.totalCost > 6000 || s.count > 300 { overLimit.add(1, ordering: .relaxed) }
                }
            }
        }
        // Then no value was mixed up, no limit was exceeded, and the structure is intact
        #expect(wrong.load(ordering: .relaxed) == 0)
        #expect(overLimit.load(ordering: .relaxed) == 0)
        #expect(cache.isConsistent)
        let s = cache.statistics
        #expect(s.hits + s.misses > 0)
    }

    @Test("DiskCache: 4 threads mixing get/set/remove/trim, inline and file values, never read a wrong value")
    func diskCacheStress() throws {
        let dir = try TemporaryDirectory.make()
        defer { TemporaryDirectory.remove(dir) }
        // Given a cache with a size limit that forces background trimming
        let cache = try DiskCache(
            directory: dir,
            configuration: DiskCacheConfiguration(
                sizeLimit: 2 << 20, trimInterval: .milliseconds(50), orphanGracePeriod: .zero))
        let wrong = Atomic<Int>(0)
        let failures = Atomic<Int>(0)
        let sizes = [10, 2000, 20 * 1024, 20 * 1024 + 1, 90_000, 300_000]
        // When four threads read, write, remove and trim 30 keys
        DispatchQueue.concurrentPerform(iterations: 4) { worker in
            var rng = SplitMix64(state: UInt64(worker + 100))
            for _ in 0..<300 {
                let key = "k\(rng.next() % 30)"
                do {
                    switch rng.next() % 100 {
                    case 0..<45:
                        if let v = cache.data(forKey: key), !CheckedValue.isWhole(v, key: key) {
                            wrong.add(1, ordering: .relaxed)
                        }
                    case 45..<85:
                        let size = sizes[Int(rng.next() % UInt64(sizes.count))]
                        try cache.set(CheckedValue.make(key: key, size: size, seed: rng.next()), forKey: key)
                    case 85..<95:
                        try cache.removeValue(forKey: key)
                    default:
                        try cache.trim(toSize: Int(rng.next() % (2 << 20)))
                    }
                } catch {
                    failures.add(1, ordering: .relaxed)
                }
            }
        }
        // Then nothing failed, no read was wrong, and what remains is whole and matches the totals
        #expect(wrong.load(ordering: .relaxed) == 0)
        #expect(failures.load(ordering: .relaxed) == 0)
        var count = 0
        var size = 0
        for k in 0..<30 {
            if let v = cache.data(forKey: "k\(k)") {
                #expect(CheckedValue.isWhole(v, key: "k\(k)"))
                count += 1
                size += v.count
            }
        }
        try cache.trim(toSize: .max)  // recounts from the manifest
        #expect(cache.statistics.count == count && cache.statistics.totalSize == size)
    }
}

/// Self-checking values: `[XXH64(key)][seed][payload][XXH64 of all before]` (the same layout as the crash-test
/// writer, `darkroom cache torture`), so a torn, truncated or foreign value is detected.
enum CheckedValue {
    static func make(key: String, size: Int, seed: UInt64) -> [UInt8] {
        var value = SplitMix64.bytes(max(24, size), seed: seed)
        value.withUnsafeMutableBytes { b in
            b.storeBytes(of: XXHash64.hash(Array(key.utf8)).littleEndian, toByteOffset: 0, as: UInt64.self)
            b.storeBytes(of: seed.littleEndian, toByteOffset: 8, as: UInt64.self)
            let sum = XXHash64.hash(UnsafeRawBufferPointer(rebasing: b[0..<(b.count - 8)]))
            b.storeBytes(of: sum.littleEndian, toByteOffset: b.count - 8, as: UInt64.self)
        }
        return value
    }

    static func isWhole(_ value: [UInt8], key: String) -> Bool {
        guard value.count >= 24 else { return false }
        return value.withUnsafeBytes { b in
            UInt64(littleEndian: b.loadUnaligned(fromByteOffset: 0, as: UInt64.self)) == XXHash64.hash(Array(key.utf8))
                && UInt64(littleEndian: b.loadUnaligned(fromByteOffset: b.count - 8, as: UInt64.self))
                    == XXHash64.hash(UnsafeRawBufferPointer(rebasing: b[0..<(b.count - 8)]))
        }
    }
}
