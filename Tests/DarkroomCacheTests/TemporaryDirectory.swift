import Foundation
@testable import DarkroomCache

/// Fresh directories under the system temporary directory for tests.
enum TemporaryDirectory {
    static func make() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("darkroom-cache-tests-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    static func write(_ bytes: [UInt8], to path: String) throws {
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }

    static func remove(_ path: String) { try? FileManager.default.removeItem(atPath: path) }
}

/// Deterministic pseudo-random bytes (SplitMix64), so a test's values are reproducible from a seed.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    static func bytes(_ count: Int, seed: UInt64) -> [UInt8] {
        var g = SplitMix64(state: seed)
        var out = [UInt8](repeating: 0, count: count)
        var i = 0
        while i < count {
            var v = g.next()
            for _ in 0..<8 where i < count { out[i] = UInt8(truncatingIfNeeded: v); v >>= 8; i += 1 }
        }
        return out
    }
}
