import ArgumentParser
import DarkroomCache
import DarkroomSupport
import Foundation

/// `darkroom cache torture --dir DIR --seed N` (hidden): writes, replaces, removes and trims self-checking values of
/// many sizes as fast as it can, until killed or `--ops` operations are done. The crash test kills it with SIGKILL at
/// random moments and then checks that every key reads as absent or as one whole value (``TortureValue``).
struct CacheTortureCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "torture", abstract: "Crash-test writer (killed by the test at random moments).",
        shouldDisplay: false)

    @Option(help: "Cache directory.") var dir: String
    @Option(help: "Random seed.") var seed: UInt64 = 1
    @Option(help: "Stop after this many operations (default: run until killed).") var ops: Int = .max
    @Option(help: "Number of distinct keys.") var keys: Int = TortureValue.keyCount
    @Option(help: "Exit as soon as this process is no longer the parent (the crash test passes its own pid).")
    var parent: Int32?

    func run() throws {
        if let parent { Self.exitWhenParentIsNot(parent) }
        let cache = try DiskCache(
            directory: dir,
            configuration: DiskCacheConfiguration(
                sizeLimit: 24 << 20, inlineThreshold: 20 * 1024, trimInterval: .milliseconds(200),
                orphanGracePeriod: .zero))
        var rng = SplitMix64(state: seed)
        for op in 0..<ops {
            let key = "k\(rng.next() % UInt64(keys))"
            switch rng.next() % 100 {
            case 0..<80:
                let size = TortureValue.sizes[Int(rng.next() % UInt64(TortureValue.sizes.count))]
                try cache.set(TortureValue.make(key: key, size: size, seed: rng.next()), forKey: key)
            case 80..<90:
                try cache.removeValue(forKey: key)
            case 90..<93:
                try cache.trim(toSize: Int(rng.next() % (8 << 20)))
            default:
                if let value = cache.data(forKey: key), !TortureValue.isWhole(value, key: key) {
                    FileHandle.standardError.write(Data("torn value for \(key) at op \(op)\n".utf8))
                    throw ExitCode(3)
                }
            }
        }
    }
}

extension CacheTortureCommand {
    /// Ends the process (as abruptly as the SIGKILL it is built for) once `parent` is no longer its parent. The
    /// crash test that runs it may itself die — a crash elsewhere in the test process — and a writer left running
    /// would burn a core and hold the test runner's output open, so the runner waited for it forever. The pid is
    /// given rather than read at start, since the parent may already be gone by then. Polls `getppid()` every
    /// 100 ms on a thread of its own.
    static func exitWhenParentIsNot(_ parent: Int32) {
        if getppid() != parent { _exit(4) }
        _ = DedicatedThread(name: "darkroom.torture.parent-watch", stackSize: 64 << 10) {
            while getppid() == parent { usleep(100_000) }
            _exit(4)
        }
    }
}

/// Self-checking values: `[XXH64(key)][seed][pseudo-random payload][XXH64 of everything before]`, little-endian
/// 64-bit words; at least 24 bytes. A value is whole when both hashes check out: a torn value, a prefix, or another
/// key's value fails.
enum TortureValue {
    static let keyCount = 40
    /// Sizes on both sides of the inline threshold, up to 1.5 MB.
    static let sizes = [24, 100, 2048, 20 * 1024 - 1, 20 * 1024, 20 * 1024 + 1, 65536, 300_000, 1_500_000]

    static func make(key: String, size: Int, seed: UInt64) -> [UInt8] {
        var value = [UInt8](repeating: 0, count: max(24, size))
        value.withUnsafeMutableBytes { b in
            b.storeBytes(of: XXHash64.hash(Array(key.utf8)).littleEndian, toByteOffset: 0, as: UInt64.self)
            b.storeBytes(of: seed.littleEndian, toByteOffset: 8, as: UInt64.self)
            var rng = SplitMix64(state: seed)
            var i = 16
            while i + 8 <= b.count - 8 {
                b.storeBytes(of: rng.next(), toByteOffset: i, as: UInt64.self)
                i += 8
            }
            let end = b.count - 8
            let sum = XXHash64.hash(UnsafeRawBufferPointer(rebasing: b[0..<end]))
            b.storeBytes(of: sum.littleEndian, toByteOffset: end, as: UInt64.self)
        }
        return value
    }

    static func isWhole(_ value: [UInt8], key: String) -> Bool {
        guard value.count >= 24 else { return false }
        return value.withUnsafeBytes { b in
            let keyHash = UInt64(littleEndian: b.loadUnaligned(fromByteOffset: 0, as: UInt64.self))
            let sum = UInt64(littleEndian: b.loadUnaligned(fromByteOffset: b.count - 8, as: UInt64.self))
            return keyHash == XXHash64.hash(Array(key.utf8))
                && sum == XXHash64.hash(UnsafeRawBufferPointer(rebasing: b[0..<(b.count - 8)]))
        }
    }
}
