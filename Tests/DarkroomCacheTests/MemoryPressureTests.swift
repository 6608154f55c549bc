import DarkroomSupport
import DarkroomTestSupport
import Synchronization
import Testing

@testable import DarkroomCache

/// A reader that returns whatever the test last put in.
final class FakeMemoryReader: MemoryStatusReading {
    let status = Locked<MemoryStatus?>(nil)
    func read() -> MemoryStatus? { status.withLock { $0 } }
}

@Suite("Memory status and pressure")
struct MemoryPressureTests {
    /// Writes `files` (relative path → text) under a fresh temporary root.
    func fakeRoot(_ files: [String: String]) throws -> String {
        let root = try TemporaryDirectory.make()
        for (path, text) in files {
            let full = root + "/" + path
            try POSIX.makeDirectories(String(full[..<full.lastIndex(of: "/")!]))
            try TemporaryDirectory.write(Array(text.utf8), to: full)
        }
        return root
    }

    let meminfo = "MemTotal:       16000000 kB\nMemFree:         1000000 kB\nMemAvailable:    8000000 kB\n"

    @Test("cgroup v2: memory.max and memory.current of this process's cgroup, with MemAvailable")
    func cgroupV2() throws {
        let root = try fakeRoot([
            "proc/meminfo": meminfo, "proc/self/cgroup": "0::/app.slice\n",
            "sys/fs/cgroup/app.slice/memory.max": "4294967296\n",
            "sys/fs/cgroup/app.slice/memory.current": "3221225472\n",
        ])
        let s = try #require(SystemMemoryStatusReader(root: root).read())
        #expect(s.cgroupLimitBytes == 4 << 30 && s.cgroupUsageBytes == 3 << 30)
        #expect(s.memAvailableBytes == 8_000_000 * 1024 && s.totalBytes == 16_000_000 * 1024)
        // Available is the smaller of MemAvailable and the cgroup headroom
        #expect(s.availableBytes == 1 << 30)
        #expect(s.availableFraction == 0.25)
    }

    @Test("cgroup v2 'max' means no cgroup limit; MemAvailable rules")
    func cgroupV2Unlimited() throws {
        let root = try fakeRoot([
            "proc/meminfo": meminfo, "proc/self/cgroup": "0::/\n",
            "sys/fs/cgroup/memory.max": "max\n", "sys/fs/cgroup/memory.current": "123\n",
        ])
        let s = try #require(SystemMemoryStatusReader(root: root).read())
        #expect(s.cgroupLimitBytes == nil)
        #expect(s.availableBytes == 8_000_000 * 1024)
        #expect(s.availableFraction == 0.5)
    }

    @Test("cgroup v1: memory.limit_in_bytes and memory.usage_in_bytes; the huge 'unlimited' value is ignored")
    func cgroupV1() throws {
        let root = try fakeRoot([
            "proc/meminfo": meminfo, "proc/self/cgroup": "4:memory:/docker/abc\n2:cpu,cpuacct:/docker/abc\n",
            "sys/fs/cgroup/memory/docker/abc/memory.limit_in_bytes": "2147483648\n",
            "sys/fs/cgroup/memory/docker/abc/memory.usage_in_bytes": "1073741824\n",
        ])
        let s = try #require(SystemMemoryStatusReader(root: root).read())
        #expect(s.cgroupLimitBytes == 2 << 30 && s.availableBytes == 1 << 30)

        let unlimited = try fakeRoot([
            "proc/meminfo": meminfo, "proc/self/cgroup": "4:memory:/\n",
            "sys/fs/cgroup/memory/memory.limit_in_bytes": "9223372036854771712\n",
            "sys/fs/cgroup/memory/memory.usage_in_bytes": "1073741824\n",
        ])
        #expect(try #require(SystemMemoryStatusReader(root: unlimited).read()).cgroupLimitBytes == nil)
    }

    @Test("this machine's status reads, and the default cost limit is 1/8 of available memory, clamped")
    func defaults() throws {
        let s = try #require(SystemMemoryStatusReader().read())
        #expect((s.availableBytes ?? 0) > 0)
        #expect(
            MemoryCacheLimits.defaultLimits(status: MemoryStatus(memAvailableBytes: 1 << 30)).costLimit == 128 << 20)
        #expect(MemoryCacheLimits.defaultLimits(status: MemoryStatus(memAvailableBytes: 1 << 20)).costLimit == 16 << 20)
        #expect(MemoryCacheLimits.defaultLimits(status: MemoryStatus(memAvailableBytes: 64 << 30)).costLimit == 1 << 30)
        #expect(MemoryCacheLimits.default.costLimit >= 16 << 20)
    }

    @Test("the monitor trims caches by half on warning and empties them on critical")
    func monitor() {
        // Given a cache with 10 entries of cost 10 and a monitor reading a fake status
        let reader = FakeMemoryReader()
        let monitor = MemoryPressureMonitor(reader: reader, warningFraction: 0.10, criticalFraction: 0.05)
        let cache = MemoryCache<Int, Int>(limits: MemoryCacheLimits(costLimit: 1000))
        for i in 0..<10 { cache.set(i, forKey: i, cost: 10) }
        monitor.add(cache)
        // When memory is plentiful nothing happens
        reader.status.withLock { $0 = MemoryStatus(totalBytes: 1000, memAvailableBytes: 500) }
        #expect(monitor.poll() == .normal)
        #expect(cache.totalCost == 100)
        // When 8 % is available the cache halves
        reader.status.withLock { $0 = MemoryStatus(totalBytes: 1000, memAvailableBytes: 80) }
        #expect(monitor.poll() == .warning)
        #expect(cache.totalCost == 50)
        // When 2 % is available it empties
        reader.status.withLock { $0 = MemoryStatus(totalBytes: 1000, memAvailableBytes: 20) }
        #expect(monitor.poll() == .critical)
        #expect(cache.count == 0)
        // And an unreadable status is normal
        reader.status.withLock { $0 = nil }
        #expect(monitor.poll() == .normal)
    }

    @Test("the monitor polls on its timer and holds caches weakly")
    func timer() async throws {
        let reader = FakeMemoryReader()
        reader.status.withLock { $0 = MemoryStatus(totalBytes: 1000, memAvailableBytes: 10) }
        let monitor = MemoryPressureMonitor(reader: reader, interval: .milliseconds(10))
        let cache = MemoryCache<Int, Int>(limits: MemoryCacheLimits(costLimit: 1000))
        cache.set(1, forKey: 1, cost: 1)
        monitor.add(cache)
        monitor.start()
        defer { monitor.stop() }
        for _ in 0..<200 where cache.count > 0 { try await Task.sleep(for: .milliseconds(10)) }
        #expect(cache.count == 0)
        #expect(monitor.lastLevel == .critical)
        // A cache that goes away is simply dropped
        var temporary: MemoryCache<Int, Int>? = MemoryCache<Int, Int>(limits: MemoryCacheLimits(costLimit: 10))
        monitor.add(temporary!)
        temporary = nil
        #expect(monitor.poll() == .critical)
    }
}
