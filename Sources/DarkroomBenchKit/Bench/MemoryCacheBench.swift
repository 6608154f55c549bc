import DarkroomCache
import DarkroomSupport
import Dispatch
import Foundation
import Synchronization

/// The memory half of `darkroom bench cache`: ns per operation per thread for get-hit, get-miss and set on
/// MemoryCache, NSCache and `Mutex<[String: Payload]>`, over 10,000 string keys, with 1 and 2 threads.
/// With 2 threads both run the same loop at once; the figure is each thread's time per operation.
struct MemoryBench {
    /// A cached object, as a decoded bitmap would be.
    final class Payload: Sendable {
        let id: Int
        init(_ id: Int) { self.id = id }
    }

    /// The three caches behind one interface, so each loop is the same code.
    enum Subject: CaseIterable {
        case memory, nscache, dictionary

        var name: String {
            switch self {
            case .memory: "memory"
            case .nscache: "nscache"
            case .dictionary: "dict"
            }
        }
    }

    let ops: Int
    let repeats: Int
    let keyCount = 10_000

    func run() -> [String: Any] {
        let keys = (0..<keyCount).map { "thumbnail-\($0)@256" }
        let missing = (0..<keyCount).map { "absent-\($0)@256" }
        let nsSubject = NSCacheSubject(
            cache: NSCache(), keys: keys.map { $0 as NSString }, missing: missing.map { $0 as NSString })
        let nscache = nsSubject.cache  // setup only; the threads use `ns`
        let payloads = (0..<keyCount).map { Payload($0) }

        let memory = MemoryCache<String, Payload>(limits: MemoryCacheLimits(costLimit: 1 << 30))
        let dictionary = LockedDictionary()
        for i in 0..<keyCount {
            memory.set(payloads[i], forKey: keys[i], cost: 1024)
            nscache.setObject(payloads[i], forKey: nsSubject.keys[i], cost: 1024)
            dictionary.mutex.withLock { $0[keys[i]] = payloads[i] }
        }

        var out: [String: Any] = [:]
        let sink = Atomic<Int>(0)
        for threads in [1, 2] {
            let suffix = threads == 1 ? "" : "_2t"
            for op in ["get_hit", "get_miss", "set"] {
                var samples: [Subject: [Double]] = [:]
                // Interleave subjects in each repetition so machine drift hits all alike.
                for _ in 0..<repeats {
                    for subject in Subject.allCases {
                        // The operation is chosen outside the timed loop; the loop body is one cache call.
                        let body: @Sendable (Int) -> Bool
                        switch (subject, op) {
                        case (.memory, "get_hit"): body = { memory.value(forKey: keys[$0]) != nil }
                        case (.memory, "get_miss"): body = { memory.value(forKey: missing[$0]) != nil }
                        case (.memory, _):
                            body = {
                                memory.set(payloads[$0], forKey: keys[$0], cost: 1024)
                                return true
                            }
                        case (.nscache, "get_hit"): body = { nsSubject.cache.object(forKey: nsSubject.keys[$0]) != nil }
                        case (.nscache, "get_miss"):
                            body = { nsSubject.cache.object(forKey: nsSubject.missing[$0]) != nil }
                        case (.nscache, _):
                            body = {
                                nsSubject.cache.setObject(payloads[$0], forKey: nsSubject.keys[$0], cost: 1024)
                                return true
                            }
                        case (.dictionary, "get_hit"): body = { k in dictionary.mutex.withLock { $0[keys[k]] } != nil }
                        case (.dictionary, "get_miss"):
                            body = { k in dictionary.mutex.withLock { $0[missing[k]] } != nil }
                        case (.dictionary, _):
                            body = { k in
                                dictionary.mutex.withLock { $0[keys[k]] = payloads[k] }
                                return true
                            }
                        }
                        let ns = measure(threads: threads) { thread in
                            var found = 0
                            var k = (thread * 7919) % keyCount
                            for _ in 0..<ops {
                                k = k == keyCount - 1 ? 0 : k + 1
                                if body(k) { found &+= 1 }
                            }
                            sink.add(found, ordering: .relaxed)
                        }
                        samples[subject, default: []].append(ns)
                    }
                }
                for subject in Subject.allCases {
                    out["\(subject.name)_\(op)_ns\(suffix)"] = median(samples[subject]!)
                }
            }
        }
        // The names the issue asks for.
        out["memory_get_hit_ns"] = out["memory_get_hit_ns"]
        out["nscache_get_hit_ns"] = out["nscache_get_hit_ns"]
        out["memory_vs_nscache_get_hit_speedup"] =
            (out["nscache_get_hit_ns"] as! Double) / (out["memory_get_hit_ns"] as! Double)
        out["memory_sink"] = sink.load(ordering: .relaxed) > 0 ? 1 : 0
        return out
    }

    /// Runs `body` on `threads` threads at once; returns nanoseconds per operation per thread.
    func measure(threads: Int, _ body: @Sendable @escaping (Int) -> Void) -> Double {
        let t0 = MonotonicClock.seconds()
        DispatchQueue.concurrentPerform(iterations: threads) { body($0) }
        return (MonotonicClock.seconds() - t0) * 1e9 / Double(ops)
    }
}

/// NSCache with its NSString keys, shared by the benchmark threads.
///
/// `@unchecked Sendable` is safe: NSCache is documented thread-safe (swift-corelibs-foundation guards it with a
/// lock), and the NSString keys are created before the threads start and only read afterwards.
struct NSCacheSubject: @unchecked Sendable {
    let cache: NSCache<NSString, MemoryBench.Payload>
    let keys: [NSString]
    let missing: [NSString]
}

/// The baseline: a Dictionary behind a Synchronization.Mutex, no LRU, no limits.
final class LockedDictionary: Sendable {
    let mutex = Mutex<[String: MemoryBench.Payload]>([:])
}
